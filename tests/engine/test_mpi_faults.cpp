// MPI: a rank that dies (SIGKILL, as a crash or the OOM killer would end it) makes the whole job
// end with an error within a bounded time, also when the surviving rank is stuck in a run that
// would never finish on its own. The bound is a generous hang guard (60 s), not a performance
// target. Skipped when mpirun is absent.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "support/support.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/util/atomic_file.hpp"

extern char** environ;

namespace doppler {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr double kHangGuardSeconds = 60;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Parent pid and state of a process from /proc (nullopt when it is gone).
std::optional<std::pair<pid_t, char>> stat_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string s;
  if (!std::getline(in, s)) return std::nullopt;
  const auto close = s.rfind(')');  // the command name may contain spaces
  std::istringstream rest(s.substr(close + 2));
  char state = 0;
  pid_t ppid = 0;
  rest >> state >> ppid;
  return std::make_pair(ppid, state);
}

// MPI rank of a process started by mpirun (OMPI_COMM_WORLD_RANK), -1 when unknown.
int rank_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/environ", std::ios::binary);
  for (std::string var; std::getline(in, var, '\0');)
    if (var.rfind("OMPI_COMM_WORLD_RANK=", 0) == 0) return std::atoi(var.c_str() + 21);
  return -1;
}

bool is_doppler(pid_t pid) {
  std::error_code ec;
  return fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec) ==
         fs::path(test::cli_path());
}

// The doppler processes descended from `root`, by rank.
std::map<int, pid_t> ranks_under(pid_t root) {
  std::map<int, pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (!is_doppler(pid)) continue;
    const auto self = stat_of(pid);
    if (!self || is_doppler(self->first)) continue;  // a forked helper, not the rank itself
    for (pid_t p = pid; p > 1;) {                    // is `root` an ancestor?
      const auto st = stat_of(p);
      if (!st) break;
      if (st->first == root) {
        out[rank_of(pid)] = pid;
        break;
      }
      p = st->first;
    }
  }
  return out;
}

bool alive(pid_t pid) {
  const auto st = stat_of(pid);
  return st && st->second != 'Z';
}

// True once `pid` has exited (or is a zombie), polling up to `seconds`. mpirun may exit while the
// kernel still tears down a rank it killed, so a fixed sleep would race.
bool gone_within(pid_t pid, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (alive(pid)) {
    if (Clock::now() >= end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// A 2-rank `doppler execute --backend mpi` job started with posix_spawn.
class MpiJob {
public:
  MpiJob(const test::TempDir& dir, const std::vector<std::string>& args) : dir_(dir) {
    std::vector<std::string> all = {"mpirun", "--allow-run-as-root", "--oversubscribe", "-np",
                                    "2",      test::cli_path()};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, (dir / "out").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    posix_spawn_file_actions_addopen(&fa, 2, (dir / "err").c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
    if (posix_spawnp(&pid_, "mpirun", &fa, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&fa);
  }
  ~MpiJob() {  // never leave processes behind, whatever the test found
    for (const auto& [rank, pid] : ranks_) ::kill(pid, SIGKILL);
    if (pid_ > 0 && !exit_code_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  MpiJob(const MpiJob&) = delete;
  MpiJob& operator=(const MpiJob&) = delete;

  /// Waits (up to the hang guard) until both ranks run; false if they never do.
  bool wait_for_ranks() {
    const auto end = Clock::now() + std::chrono::duration<double>(kHangGuardSeconds);
    while (Clock::now() < end && !finished(0)) {
      ranks_ = ranks_under(pid_);
      if (ranks_.count(0) && ranks_.count(1)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  }
  /// Pid of `rank` (after wait_for_ranks()).
  pid_t rank(int r) const { return ranks_.at(r); }
  /// True once mpirun has exited, waiting up to `seconds`.
  bool finished(double seconds) {
    if (exit_code_) return true;
    const auto end = Clock::now() + std::chrono::duration<double>(seconds);
    do {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    } while (Clock::now() < end);
    return false;
  }
  int exit_code() const { return exit_code_.value_or(-1); }
  std::string err() const { return slurp(dir_ / "err"); }

private:
  const test::TempDir& dir_;
  pid_t pid_ = -1;
  std::map<int, pid_t> ranks_;
  std::optional<int> exit_code_;
};

// The small llama layer and a random 4-device assignment (rank 0: devices 0-1, rank 1: 2-3).
Assignment write_inputs(const test::TempDir& dir, Graph& g) {
  g = test::small_workloads(4)[5].graph;
  save_graph(dir / "g.json", g, GraphFormat::json);
  std::mt19937_64 rng(7);
  Assignment a = test::random_assignment(g, 4, rng);
  write_file_atomic(dir / "a.json", format_assignment_json(a));
  return a;
}

// Kills `victim` once both ranks of a job running `extra` are up, then expects the whole job to
// end with an error within the hang guard and no rank to survive it.
void expect_job_ends_when_a_rank_dies(const std::vector<std::string>& extra, int victim) {
  test::TempDir dir;
  Graph g;
  write_inputs(dir, g);
  std::vector<std::string> args = {
      "execute", (dir / "g.json").string(), "-a", (dir / "a.json").string(), "--backend", "mpi"};
  args.insert(args.end(), extra.begin(), extra.end());
  ::setenv("DOPPLER_READY_DIR", dir.path().c_str(), 1);  // each rank marks itself ready
  MpiJob job(dir, args);
  ::unsetenv("DOPPLER_READY_DIR");
  ASSERT_TRUE(job.wait_for_ranks()) << "the ranks never started: " << job.err();
  // Both ranks past MPI_Init and their setup, about to run (not a fixed sleep).
  const auto end = Clock::now() + std::chrono::duration<double>(kHangGuardSeconds);
  while (!(fs::exists(dir / "rank0") && fs::exists(dir / "rank1")) && Clock::now() < end &&
         !job.finished(0))
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(fs::exists(dir / "rank0") && fs::exists(dir / "rank1"))
      << "the ranks never got ready: " << job.err();
  ASSERT_FALSE(job.finished(0)) << "the job ended before the kill: " << job.err();
  const pid_t other = job.rank(1 - victim);
  ASSERT_EQ(::kill(job.rank(victim), SIGKILL), 0);
  const auto t0 = Clock::now();
  ASSERT_TRUE(job.finished(kHangGuardSeconds))
      << "the job still runs " << kHangGuardSeconds << " s after rank " << victim
      << " died: " << job.err();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  const std::string err = job.err();
  std::cerr << "[ job ended " << seconds << " s after rank " << victim << " was killed, exit "
            << job.exit_code() << "; its stderr follows ]\n"
            << err << "[ end of the job's stderr ]\n";
  EXPECT_NE(job.exit_code(), 0);
  EXPECT_TRUE(gone_within(other, kHangGuardSeconds))
      << "rank " << 1 - victim << " outlived the job by " << kHangGuardSeconds << " s";
  EXPECT_NE(err.find("rank " + std::to_string(victim)), std::string::npos);
}

TEST(EngineMpiFaults, KilledRankEndsTheJobDuringRuns) {
  if (!test::have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin): skipping";
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  expect_job_ends_when_a_rank_dies({"--kernels", "empty", "--repeat", "100000", "--warmup", "0"},
                                   1);
}

TEST(EngineMpiFaults, KilledRankZeroEndsTheJob) {
  if (!test::have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin): skipping";
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  expect_job_ends_when_a_rank_dies({"--kernels", "empty", "--repeat", "100000", "--warmup", "0"},
                                   0);
}

TEST(EngineMpiFaults, KilledRankEndsTheJobWhileTheOtherIsStuck) {
  if (!test::have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin): skipping";
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi);
  // Rank 0 hangs in an op that never finishes (no --timeout): without the job ending when rank 1
  // dies, it would wait forever.
  test::TempDir probe;
  Graph g;
  const Assignment a = write_inputs(probe, g);
  NodeId stuck = -1;
  for (NodeId v : g.topo_order())
    if (a.device_of[static_cast<std::size_t>(v)] < 2) stuck = v;
  ASSERT_GE(stuck, 0);
  expect_job_ends_when_a_rank_dies(
      {"--kernels", "empty", "--repeat", "1", "--inject-fault", "hang:" + std::to_string(stuck)},
      1);
}

}  // namespace
}  // namespace doppler
