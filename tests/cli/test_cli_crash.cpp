// Crash safety of `doppler train` and `doppler pretrain`: the command is killed with SIGKILL at
// random (seeded) times during Stage I and Stage II, several times, and continued each time with
// --resume (or started again with -o while no checkpoint exists yet). After every kill the
// checkpoint, once it exists, is complete and loadable; the finished run's best.json, greedy.json,
// config.json and log.jsonl (without the per-episode "seconds") are identical to an uninterrupted
// run's.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"

extern char** environ;

namespace doppler {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// Starts the CLI with `args`, stdout and stderr appended to `log`.
pid_t spawn_cli(const std::vector<std::string>& args, const fs::path& log) {
  std::vector<std::string> all = {test::cli_path()};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("posix_spawn failed");
  return pid;
}

// Waits up to `seconds` for `pid`; its exit code (-signal when killed), or nullopt if running.
std::optional<int> wait_for(pid_t pid, double seconds) {
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (true) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
    if (Clock::now() >= end) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

// Runs the CLI to its end (hang guard: 600 s) and returns its exit code.
int run_to_end(const std::vector<std::string>& args, const fs::path& log) {
  const pid_t pid = spawn_cli(args, log);
  const auto rc = wait_for(pid, 600);
  if (!rc) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ADD_FAILURE() << "doppler train hung";
    return -1;
  }
  return *rc;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// log.jsonl without the "seconds" of each episode (wall-clock time differs between runs).
std::vector<nlohmann::json> log_without_seconds(const fs::path& p) {
  std::vector<nlohmann::json> out;
  std::istringstream in(slurp(p));
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line);
    j.erase("seconds");
    out.push_back(std::move(j));
  }
  return out;
}

// A random DAG of 16 ops with reference costs.
void write_graph(const fs::path& path) {
  std::mt19937_64 rng(5);
  save_graph(path, test::random_dag(rng, {16, 0.25, 20, 10, true}), GraphFormat::reference_text);
}

struct CrashRun {
  int kills = 0;          // SIGKILLs delivered while the command ran
  int kills_mid_run = 0;  // of which after a checkpoint existed
  int restarts = 0;       // runs started again with -o (killed before the first checkpoint)
};

// Number of lines of `p` (0 when it does not exist yet).
int line_count(const fs::path& p) {
  std::ifstream in(p);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

// Waits until `pid` exits (its exit code, -signal when killed) or `log` has `lines` lines
// (nullopt, the process still running); hang guard: 600 s.
std::optional<int> wait_for_progress(pid_t pid, const fs::path& log, int lines) {
  const auto end = Clock::now() + std::chrono::seconds(600);
  while (Clock::now() < end) {
    if (const auto rc = wait_for(pid, 0)) return rc;
    if (line_count(log) >= lines) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ADD_FAILURE() << "no progress in 600 s";
  return std::nullopt;
}

// Trains `args` (`episodes` episodes) into `dir` until done, killing it `wanted_kills` times at
// random points of its progress (after a random number of logged episodes, so that the kills
// fall inside the run whatever the machine's load), checking the checkpoint after each kill.
CrashRun run_with_kills(const std::vector<std::string>& args, const fs::path& dir,
                        const fs::path& graph, int wanted_kills, int episodes, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  CrashRun r;
  const fs::path ckpt = dir / "ckpt.pt",
                 log = dir.parent_path() / (dir.filename().string() + ".out");
  for (int attempt = 0; attempt < 60; ++attempt) {
    const bool resume = fs::exists(ckpt);
    std::vector<std::string> a = args;
    a.insert(a.end(), {resume ? "--resume" : "-o", dir.string()});
    if (!resume && attempt > 0) ++r.restarts;
    const int done = resume ? line_count(dir / "log.jsonl") : 0;
    const pid_t pid = spawn_cli(a, log);
    if (r.kills == wanted_kills || done >= episodes - 4) {  // enough kills: let it finish
      const auto rc = wait_for(pid, 600);
      EXPECT_TRUE(rc.has_value()) << "doppler train hung";
      if (!rc) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
      }
      EXPECT_EQ(rc.value_or(-1), 0) << slurp(log);
      return r;
    }
    const int target =
        std::uniform_int_distribution<int>(std::min(done + 1, episodes - 4), episodes - 4)(rng);
    if (const auto rc = wait_for_progress(pid, dir / "log.jsonl", target)) {  // finished first
      EXPECT_EQ(*rc, 0) << slurp(log);
      return r;
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ++r.kills;
    if (!fs::exists(ckpt)) {
      EXPECT_FALSE(resume) << "the checkpoint disappeared";
      continue;
    }
    r.kills_mid_run += resume ? 1 : 0;
    // Never half-written: the checkpoint loads as a policy.
    const auto p = test::run_cli("place '" + graph.string() + "' --devices 3 --method doppler " +
                                 "--policy '" + ckpt.string() + "'");
    EXPECT_EQ(p.exit_code, 0) << "checkpoint unreadable after kill " << r.kills << ": " << p.err;
  }
  ADD_FAILURE() << "the run did not finish after 60 starts";
  return r;
}

void expect_same_results(const fs::path& want, const fs::path& got) {
  for (const char* f : {"best.json", "greedy.json", "config.json"})
    EXPECT_EQ(slurp(got / f), slurp(want / f)) << f;
  const auto a = log_without_seconds(want / "log.jsonl"),
             b = log_without_seconds(got / "log.jsonl");
  ASSERT_EQ(b.size(), a.size()) << "log.jsonl lines";
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i]) << "log.jsonl line " << i + 1;
}

TEST(CliCrash, KilledTrainingResumesToTheUninterruptedResult) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  const fs::path graph = dir / "g.txt";
  write_graph(graph);
  const std::vector<std::string> common = {
      "train", graph.string(),       "--devices", "3",      "--hidden", "8", "--mp-steps",
      "1",     "--checkpoint-every", "5",         "--seed", "11"};
  for (const char* stage : {"il", "sim"}) {
    SCOPED_TRACE(stage);
    std::vector<std::string> args = common;
    args.insert(args.end(), {"--stage", stage});
    if (std::string(stage) == "sim")  // 40 updates of 2 rollouts: one log line per update
      args.insert(args.end(), {"--episodes", "80", "--rollouts", "2", "--init",
                               (dir / "ref-il" / "ckpt.pt").string()});
    else
      args.insert(args.end(), {"--episodes", "40"});
    // The uninterrupted run.
    std::vector<std::string> ref = args;
    ref.insert(ref.end(), {"-o", (dir / ("ref-" + std::string(stage))).string()});
    ASSERT_EQ(run_to_end(ref, dir / "ref.out"), 0) << slurp(dir / "ref.out");
    const CrashRun r = run_with_kills(args, dir / ("run-" + std::string(stage)), graph, 5, 40,
                                      stage[0] == 'i' ? 1 : 2);
    EXPECT_GE(r.kills, 2) << "the kill points fell after the end of the run";
    RecordProperty(std::string(stage) + "_kills", r.kills);
    std::cerr << "[ stage " << stage << ": " << r.kills << " kills, " << r.kills_mid_run
              << " after a checkpoint, " << r.restarts << " restarts before one ]\n";
    expect_same_results(dir / ("ref-" + std::string(stage)), dir / ("run-" + std::string(stage)));
  }
}

// A small pretraining distribution: random DAGs of 12 to 20 ops on 2 or 3 devices.
void write_pretrain_spec(const fs::path& path) {
  std::ofstream(path) << R"({"pool": 5, "seed": 2, "families": [{"workload": "random-dag",
      "params": {"ops": {"min": 12, "max": 20, "int": true}, "width": [3, 5],
                 "seed": {"min": 0, "max": 999, "int": true}}, "devices": [2, 3]}]})";
}

TEST(CliCrash, KilledPretrainingResumesToTheUninterruptedRun) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  const fs::path graph = dir / "g.txt", spec = dir / "spec.json";
  write_graph(graph);
  write_pretrain_spec(spec);
  // 8 Stage I + 22 Stage II updates: one log line each.
  const std::vector<std::string> args = {"pretrain",
                                         "--spec",
                                         spec.string(),
                                         "--held-out",
                                         graph.string(),
                                         "--held-out-devices",
                                         "3",
                                         "--il-updates",
                                         "8",
                                         "--updates",
                                         "22",
                                         "--batch",
                                         "2",
                                         "--rollouts",
                                         "3",
                                         "--hidden",
                                         "8",
                                         "--edge-hidden",
                                         "4",
                                         "--mp-steps",
                                         "1",
                                         "--checkpoint-every",
                                         "4",
                                         "--eval-every",
                                         "10",
                                         "--seed",
                                         "7"};
  std::vector<std::string> ref = args;
  ref.insert(ref.end(), {"-o", (dir / "ref").string()});
  ASSERT_EQ(run_to_end(ref, dir / "ref.out"), 0) << slurp(dir / "ref.out");
  const CrashRun r = run_with_kills(args, dir / "run", graph, 4, 30, 3);
  EXPECT_GE(r.kills, 2) << "the kill points fell after the end of the run";
  for (const char* f : {"problems.json", "spec.json", "config.json"})
    EXPECT_EQ(slurp(dir / "run" / f), slurp(dir / "ref" / f)) << f;
  const auto a = log_without_seconds(dir / "ref" / "log.jsonl"),
             b = log_without_seconds(dir / "run" / "log.jsonl");
  ASSERT_EQ(a.size(), 30u);
  ASSERT_EQ(b.size(), a.size()) << "log.jsonl lines";
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(b[i], a[i]) << "log.jsonl line " << i + 1;
  // The held-out graph is evaluated and never trained on.
  const auto problems = nlohmann::json::parse(slurp(dir / "ref" / "problems.json"));
  ASSERT_EQ(problems["held_out"].size(), 1u);
  const std::string held = problems["held_out"][0].get<std::string>();
  int evaluations = 0;
  for (const auto& line : a) {
    for (const auto& name : line["problems"]) EXPECT_NE(name.get<std::string>(), held);
    if (line.contains("held_out")) {
      ++evaluations;
      EXPECT_EQ(line["held_out"]["problems"][0]["name"], held);
    }
  }
  EXPECT_EQ(evaluations, 3);  // updates 10, 20 and 30
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// Distillation: killed while the labels of a round are searched (RUN/labels.jsonl growing), the
// resumed run searches the remaining problems and ends with the same labels and log as the
// uninterrupted one.
TEST(CliCrash, KilledLabelGenerationResumesToTheSameLabelsAndLog) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  const fs::path spec = dir / "spec.json";
  std::ofstream(spec) << R"({"pool": 24, "seed": 4, "families": [{"workload": "random-dag",
      "params": {"ops": {"min": 30, "max": 40, "int": true}, "width": [3, 5],
                 "seed": {"min": 0, "max": 999, "int": true}}, "devices": [2, 3]}]})";
  const std::vector<std::string> args = {"pretrain",
                                         "--spec",
                                         spec.string(),
                                         "--il-updates",
                                         "2",
                                         "--distill",
                                         "doppler-search",
                                         "--rounds",
                                         "2",
                                         "--round-updates",
                                         "3",
                                         "--label-budget",
                                         "4000",
                                         "--batch",
                                         "2",
                                         "--rollouts",
                                         "2",
                                         "--hidden",
                                         "8",
                                         "--edge-hidden",
                                         "4",
                                         "--mp-steps",
                                         "1",
                                         "--eval-pool",
                                         "2",
                                         "--eval-samples",
                                         "4",
                                         "--seed",
                                         "3"};
  std::vector<std::string> ref = args;
  ref.insert(ref.end(), {"-o", (dir / "ref").string()});
  ASSERT_EQ(run_to_end(ref, dir / "ref.out"), 0) << slurp(dir / "ref.out");
  ASSERT_EQ(line_count(dir / "ref" / "labels.jsonl"), 48);
  // Kill once inside each round's label generation (8 problems a chunk on 2 threads).
  const fs::path run = dir / "run", labels = run / "labels.jsonl";
  int kills = 0;
  for (int target : {9, 33}) {
    std::vector<std::string> a = args;
    a.insert(a.end(), {fs::exists(run / "ckpt.pt") ? "--resume" : "-o", run.string()});
    const pid_t pid = spawn_cli(a, dir / "run.out");
    if (wait_for_progress(pid, labels, target)) continue;  // finished first
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    ++kills;
    EXPECT_LT(line_count(labels), target == 9 ? 24 : 48) << "killed after the round's labels";
  }
  EXPECT_EQ(kills, 2);
  std::vector<std::string> a = args;
  a.insert(a.end(), {"--resume", run.string()});
  ASSERT_EQ(run_to_end(a, dir / "run.out"), 0) << slurp(dir / "run.out");
  EXPECT_EQ(slurp(labels), slurp(dir / "ref" / "labels.jsonl"));
  const auto want = log_without_seconds(dir / "ref" / "log.jsonl"),
             got = log_without_seconds(run / "log.jsonl");
  ASSERT_EQ(want.size(), 8u);
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    auto w = want[i], g = got[i];
    for (auto* j : {&w, &g})
      if (j->contains("labels")) j->at("labels").erase("label_seconds");
    EXPECT_EQ(g, w) << "log.jsonl line " << i + 1;
  }
}

}  // namespace
}  // namespace doppler
