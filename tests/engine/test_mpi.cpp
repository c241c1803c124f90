// The MPI backend (2 ranks on this machine, through the CLI): same outputs as a single-device
// run, a merged schedule and trace on rank 0, and a failing kernel on one rank ends the whole
// job with an error instead of a hang. Skipped when mpirun is absent.
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "engine_support.hpp"
#include "support/support.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/util/atomic_file.hpp"

namespace doppler {
namespace {

#define DOPPLER_REQUIRE_MPIRUN()                                                                \
  if (!test::have_mpirun()) GTEST_SKIP() << "mpirun not found (Debian: openmpi-bin): skipping"; \
  DOPPLER_REQUIRE_CLI_COMPONENT(mpi)

// Runs `mpirun -np 2 doppler ARGS` (at most 120 s) and returns its exit code; output in files.
int mpirun2(const test::TempDir& dir, const std::string& args) {
  const std::string cmd = "timeout 120 mpirun --allow-run-as-root --oversubscribe -np 2 '" +
                          test::cli_path() + "' " + args + " >'" + (dir / "out").string() +
                          "' 2>'" + (dir / "err").string() + "'";
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The small llama layer and a random 4-device assignment with an order, written to `dir`.
Assignment write_inputs(const test::TempDir& dir, Graph& g) {
  g = test::small_workloads(4)[5].graph;
  save_graph(dir / "g.json", g, GraphFormat::json);
  std::mt19937_64 rng(31);
  Assignment a = test::random_assignment(g, 4, rng);
  a.method = "random";
  write_file_atomic(dir / "a.json", format_assignment_json(a));
  return a;
}

TEST(EngineMpi, TwoRanksReproduceTheSingleDeviceOutputsAndMergeTheSchedule) {
  DOPPLER_REQUIRE_MPIRUN();
  test::TempDir dir;
  Graph g;
  const Assignment a = write_inputs(dir, g);
  for (const char* order : {"fifo", "priority"}) {
    SCOPED_TRACE(order);
    const std::string args = "execute '" + (dir / "g.json").string() + "' -a '" +
                             (dir / "a.json").string() + "' --backend mpi --repeat 2 --verify " +
                             "--json --order " + order + " --trace '" + (dir / "t.json").string() +
                             "'";
    ASSERT_EQ(mpirun2(dir, args), 0) << slurp(dir / "err");
    const auto j = nlohmann::json::parse(slurp(dir / "out"));  // rank 0 prints, alone
    EXPECT_EQ(j["backend"], "mpi");
    EXPECT_EQ(j["verify"]["identical"], g.num_nodes());
    EXPECT_EQ(j["verify"]["nodes"], g.num_nodes());
    std::set<std::pair<NodeId, DeviceId>> copies;
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      for (NodeId u : g.predecessors(v))
        if (a.device_of[static_cast<std::size_t>(u)] != a.device_of[static_cast<std::size_t>(v)])
          copies.insert({u, a.device_of[static_cast<std::size_t>(v)]});
    EXPECT_EQ(j["copies"], copies.size());
    const auto ops = a.ops_per_device();
    for (int d = 0; d < 4; ++d)
      EXPECT_EQ(j["per_device"][d]["ops"], ops[static_cast<std::size_t>(d)]);
    const auto trace = nlohmann::json::parse(slurp(dir / "t.json"));
    std::set<int> tracks;
    int op_events = 0;
    for (const auto& e : trace["traceEvents"])
      if (e["ph"] == "X" && e["pid"] == 0) {
        tracks.insert(e["tid"].get<int>());
        ++op_events;
      }
    EXPECT_EQ(tracks, (std::set<int>{0, 1, 2, 3})) << "ops of both ranks in the trace";
    EXPECT_EQ(op_events, g.num_nodes());
  }
}

// calibrate and validate-sim on 2 ranks: rank 0 alone writes the profile and prints one report
// (a second rank printing would make the output two JSON documents), measured on the MPI engine
// for every assignment.
TEST(EngineMpi, CalibrateAndValidateSimRunOnRanks) {
  DOPPLER_REQUIRE_MPIRUN();
  test::TempDir dir;
  Graph g;
  write_inputs(dir, g);
  const std::string hw = (dir / "hw.json").string();
  ASSERT_EQ(mpirun2(dir, "calibrate --devices 2 --repeat 1 --backend mpi --json --kernels-of '" +
                             (dir / "g.json").string() + "' -o '" + hw + "'"),
            0)
      << slurp(dir / "err");
  const auto c = nlohmann::json::parse(slurp(dir / "out"));  // one JSON object: rank 0's
  // Copies between ranks were measured: the 16-copy burst took time, and the fit found a cost per
  // byte (a bandwidth below 100 GB/s, beyond this kind of machine's memory; a fit without a
  // per-byte cost writes 1e12). The fixed part (latency + delay) may be fitted as 0: in one CI run
  // under a loaded ctest -j2, --repeat 1 gave a negative intercept, clamped to 0.
  EXPECT_GT(c["burst_span"].get<double>(), 0);
  EXPECT_GT(c["bandwidth"].get<double>(), 0);
  EXPECT_LT(c["bandwidth"].get<double>(), 1e11);
  EXPECT_GE(c["latency"].get<double>(), 0);
  EXPECT_GE(c["delay"].get<double>(), 0);
  EXPECT_GE(c["copy_share"].get<double>(), 0);
  EXPECT_LE(c["copy_share"].get<double>(), kMaxCopyShare);
  const auto profile = nlohmann::json::parse(slurp(hw));
  EXPECT_EQ(profile["format"], "doppler-hardware");
  EXPECT_FALSE(profile["kernels"].empty());
  ASSERT_EQ(mpirun2(dir, "validate-sim '" + (dir / "g.json").string() + "' --hardware '" + hw +
                             "' --backend mpi --assignments 9 --repeat 1 --budget 50 --json"),
            0)
      << slurp(dir / "err");
  const auto v = nlohmann::json::parse(slurp(dir / "out"));
  EXPECT_NE(v["engine"].get<std::string>().find("mpi engine"), std::string::npos);
  ASSERT_EQ(v["cases"].size(), 9u);
  for (const auto& k : v["cases"]) {
    EXPECT_GT(k["simulated"].get<double>(), 0);
    EXPECT_GT(k["measured"].get<double>(), 0);
  }
}

TEST(EngineMpi, AFailingKernelOnOneRankEndsTheJob) {
  DOPPLER_REQUIRE_MPIRUN();
  test::TempDir dir;
  Graph g;
  const Assignment a = write_inputs(dir, g);
  NodeId bad = -1;  // an op of rank 1 (devices 2 and 3)
  for (NodeId v : g.topo_order())
    if (a.device_of[static_cast<std::size_t>(v)] >= 2 && !g.predecessors(v).empty()) bad = v;
  ASSERT_GE(bad, 0);
  const std::string args = "execute '" + (dir / "g.json").string() + "' -a '" +
                           (dir / "a.json").string() + "' --backend mpi --repeat 1 " +
                           "--inject-fault fail:" + std::to_string(bad);
  const int rc = mpirun2(dir, args);
  EXPECT_NE(rc, 0);
  EXPECT_NE(rc, 124) << "the job hung until the timeout";
  const std::string err = slurp(dir / "err");
  EXPECT_NE(err.find("injected fault"), std::string::npos) << err;
  EXPECT_NE(err.find("rank 1"), std::string::npos) << err;
}

}  // namespace
}  // namespace doppler
