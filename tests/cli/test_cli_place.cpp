// `doppler place` and `doppler compare`.
#include <fstream>
#include <set>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

// Three independent ops with b-levels 10, 3, 7 on 2 devices: critical path gives [0, 1, 1] and
// makespan 10 (see tests/heuristics).
const char* kThree = "3\n\n\n\n10,0\n3,0\n7,0\n";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST(CliPlace, WritesTheAssignmentAndReportsTheMakespan) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  const auto r = test::run_cli("place " + (dir / "g.txt").string() +
                               " --devices 2 --method critical-path -o " +
                               (dir / "a.json").string() + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["makespan"], 10.0);
  EXPECT_EQ(j["lower_bound"], 10.0);
  EXPECT_EQ(j["gap_to_bound"], 0.0);
  const Graph g = load_graph(dir / "g.txt");
  const Assignment a = load_assignment(dir / "a.json", g, 2);
  EXPECT_EQ(a.device_of, (std::vector<DeviceId>{0, 1, 1}));
  EXPECT_EQ(a.method, "critical-path");
  EXPECT_EQ(a.order, (std::vector<NodeId>{0, 2, 1}));
}

TEST(CliPlace, UnknownMethodOrOptionIsUsageErrorWithNoOutput) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  const auto r = test::run_cli("place " + (dir / "g.txt").string() + " --method magic -o " +
                               (dir / "a.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown method 'magic'"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "a.json"));
}

// Without --devices, a graph that records its device count is placed on that many devices; a
// different --devices is allowed and noted on stderr; a graph that records none gets 4.
TEST(CliPlace, DevicesDefaultToTheCountTheGraphRecords) {
  test::TempDir dir;
  const std::string g = (dir / "g.json").string();
  ASSERT_EQ(test::run_cli("generate chainmm --devices 8 -o " + g).exit_code, 0);
  const auto recorded = test::run_cli("place " + g + " --method round-robin --json");
  ASSERT_EQ(recorded.exit_code, 0) << recorded.err;
  const auto j = nlohmann::json::parse(recorded.out);
  EXPECT_EQ(j["devices"], 8);
  EXPECT_EQ(j["ops_per_device"].size(), 8u);
  EXPECT_EQ(recorded.err.find("records"), std::string::npos) << recorded.err;
  const auto other = test::run_cli("place " + g + " --method round-robin --devices 2 --json");
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(nlohmann::json::parse(other.out)["devices"], 2);
  EXPECT_NE(other.err.find("records 8 devices; placing on 2"), std::string::npos) << other.err;
  write(dir / "g.txt", kThree);
  const auto none = test::run_cli("place " + (dir / "g.txt").string() + " --json");
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_EQ(nlohmann::json::parse(none.out)["devices"], 4);
}

// A negative budget is refused with a message a person can read (not the range up to DBL_MAX).
TEST(CliPlace, NegativeBudgetsSayMustBeNonNegative) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  for (const char* flag : {"--time-budget -1", "--budget -5"}) {
    const auto r = test::run_cli("place " + (dir / "g.txt").string() + " " + flag);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find("must be >= 0, found -"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 200u) << r.err;
  }
}

// A DOT chain of n unit ops with unit edges.
std::string chain_dot(int n) {
  std::string dot = "digraph chain {\n";
  for (int i = 0; i < n; ++i) dot += "  n" + std::to_string(i) + " [Weight=1];\n";
  for (int i = 0; i + 1 < n; ++i)
    dot += "  n" + std::to_string(i) + " -> n" + std::to_string(i + 1) + " [Weight=1];\n";
  return dot + "}\n";
}

// A 30-op chain on 2 devices: critical-path keeps it on one device (no copy), round-robin
// alternates, so each of the 29 edges is a cross-device copy and a thread hand-off on the engine.
TEST(CliCompare, MeasureReportsIntervalsAndASignificantWinner) {
  DOPPLER_REQUIRE_CLI_COMPONENT(graphviz);
  test::TempDir dir;
  write(dir / "chain.dot", chain_dot(30));
  const auto r = test::run_cli("compare " + (dir / "chain.dot").string() +
                               " --devices 2 --methods critical-path,round-robin --measure "
                               "--kernels empty --repeat 15 --max-repeat 15 --json --csv " +
                               (dir / "t.csv").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& cp = j["methods"][0];
  const auto& rr = j["methods"][1];
  ASSERT_EQ(cp["method"], "critical-path");
  for (const auto* row : {&cp, &rr}) {
    const auto& ci = (*row)["measured_interval"];
    EXPECT_EQ(ci["runs"], 15);  // --repeat = --max-repeat: no adaptive runs
    EXPECT_LE(ci["low"].get<double>(), (*row)["measured_median"].get<double>());
    EXPECT_LE((*row)["measured_median"].get<double>(), ci["high"].get<double>());
    EXPECT_GE(ci["coverage"].get<double>(), 0.95);
  }
  EXPECT_LT(cp["measured_interval"]["high"].get<double>(),
            rr["measured_interval"]["low"].get<double>())
      << "29 copies should cost more than none: " << r.out;
  EXPECT_EQ(j["measured"]["fastest"], "critical-path");
  EXPECT_TRUE(j["measured"]["significant"]);
  EXPECT_TRUE(cp["measured_fastest"]);
  EXPECT_TRUE(rr["distinguishable_from_fastest"]);
  EXPECT_EQ(j["measured"]["spearman"], 1.0);     // simulated 30 < 59, measured in the same order
  EXPECT_TRUE(j["measured"]["mape"].is_null());  // reference units are not seconds
  std::ifstream csv(dir / "t.csv");
  std::string header;
  std::getline(csv, header);
  EXPECT_NE(header.find(",measured_median_seconds,measured_low_seconds,measured_high_seconds,"
                        "measured_runs,"),
            std::string::npos)
      << header;
}

// On a chain, critical-path and HEFT both keep every op on one device (any copy only adds time):
// the same placement is run once and both rows report the same runs; round-robin is run apart.
// 15 runs: the median's 95% interval then spans the 4th to the 12th fastest, so one stalled run
// does not hide the winner (with 7 runs it spans all of them, and one 8 ms run of a 16 us
// placement made the text report no significant winner in a clean-clone CI).
TEST(CliCompare, MeasureRunsAnIdenticalPlacementOnce) {
  DOPPLER_REQUIRE_CLI_COMPONENT(graphviz);
  test::TempDir dir;
  write(dir / "chain.dot", chain_dot(12));
  const std::string args = "compare " + (dir / "chain.dot").string() +
                           " --devices 2 --methods critical-path,heft,round-robin --measure "
                           "--kernels empty --repeat 15 --max-repeat 15";
  const auto r = test::run_cli(args + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const auto& cp = j["methods"][0];
  const auto& heft = j["methods"][1];
  const auto& rr = j["methods"][2];
  EXPECT_EQ(cp["measured_same_placement_as"], nlohmann::json::array({""}));
  EXPECT_EQ(heft["measured_same_placement_as"], nlohmann::json::array({"critical-path (seed 0)"}));
  EXPECT_EQ(rr["measured_same_placement_as"], nlohmann::json::array({""}));
  EXPECT_EQ(heft["measured_seconds"], cp["measured_seconds"]);
  EXPECT_EQ(heft["measured_interval"], cp["measured_interval"]);
  EXPECT_NE(rr["measured_seconds"], cp["measured_seconds"]);
  // 11 hand-offs between threads against none: critical-path's placement is the fastest, and
  // HEFT's copy of it is not counted as a rival within its interval.
  EXPECT_EQ(j["measured"]["fastest"], "critical-path");
  EXPECT_TRUE(heft["same_placement_as_fastest"]);
  EXPECT_FALSE(rr["same_placement_as_fastest"]);
  EXPECT_FALSE(heft["distinguishable_from_fastest"]);
  const auto text = test::run_cli(args);
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("same placement, measured once: heft (seed 0) = critical-path (seed 0)"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("measured: critical-path (heft has the same placement)"),
            std::string::npos)
      << text.out;
}

TEST(CliCompare, TableJsonAndCsvAgree) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  const auto r = test::run_cli(
      "compare " + (dir / "g.txt").string() +
      " --devices 2 --methods critical-path,round-robin,exhaustive,random --seeds 2 --json --csv " +
      (dir / "t.csv").string() + " --gantt-dir " + dir.path().string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["methods"].size(), 4u);
  // round-robin: 0 -> dev 0, 1 -> dev 1, 2 -> dev 0: makespan 17; exhaustive: 10.
  EXPECT_EQ(j["methods"][0]["mean"], 10.0);
  EXPECT_EQ(j["methods"][1]["mean"], 17.0);
  EXPECT_EQ(j["methods"][1]["ratio_to_best"], 1.7);
  EXPECT_EQ(j["methods"][2]["mean"], 10.0);
  EXPECT_EQ(j["methods"][3]["makespans"].size(), 2u);
  EXPECT_EQ(j["methods"][0]["makespans"].size(), 1u);  // deterministic: run once
  std::ifstream csv(dir / "t.csv");
  std::string header, first;
  std::getline(csv, header);
  std::getline(csv, first);
  EXPECT_EQ(header,
            "method,makespan_mean,makespan_std,ratio_to_best,gap_to_lower_bound,seconds_mean,"
            "evaluations,seeds");
  EXPECT_EQ(first.substr(0, 17), "critical-path,10,");
  EXPECT_TRUE(std::filesystem::exists(dir / "critical-path.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir / "exhaustive.svg"));
  const auto text =
      test::run_cli("compare " + (dir / "g.txt").string() + " --devices 2 --methods heft,etf");
  ASSERT_EQ(text.exit_code, 0);
  EXPECT_NE(text.out.find("heft"), std::string::npos);
  EXPECT_NE(text.out.find("vs best"), std::string::npos);
}

// Seeds split over two processes (--first-seed) give the runs of one process with all seeds.
TEST(CliCompare, FirstSeedSplitsTheSeedsOfOneRun) {
  test::TempDir dir;
  std::string g = "12\n\n\n\n";
  for (int i = 0; i < 12; ++i) g += std::to_string(1 + (i * 7) % 5) + ",0\n";
  write(dir / "g.txt", g);
  const auto run = [&](const std::string& seeds) {
    const auto r = test::run_cli("compare " + (dir / "g.txt").string() +
                                 " --devices 3 --methods heft,random --json " + seeds);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out);
  };
  const auto all = run("--seeds 4");
  const auto head = run("--seeds 1");
  const auto tail = run("--seeds 3 --first-seed 1");
  EXPECT_EQ(tail["first_seed"], 1);
  const auto& random_all = all["methods"][1];
  ASSERT_EQ(random_all["makespans"].size(), 4u);
  EXPECT_EQ(random_all["seeds"], (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(random_all["deterministic"]);
  EXPECT_EQ(tail["methods"][1]["seeds"], (std::vector<int>{1, 2, 3}));
  std::vector<double> joined = head["methods"][1]["makespans"];
  for (double x : tail["methods"][1]["makespans"]) joined.push_back(x);
  EXPECT_EQ(joined, random_all["makespans"].get<std::vector<double>>());
  std::set<double> distinct(joined.begin(), joined.end());
  EXPECT_GT(distinct.size(), 1u) << "random placements of 12 ops on 3 devices should differ";
  EXPECT_TRUE(tail["methods"][0]["deterministic"]);  // heft: one run, the same in both
  EXPECT_EQ(tail["methods"][0]["makespans"], all["methods"][0]["makespans"]);
  const auto bad = test::run_cli("compare " + (dir / "g.txt").string() + " --first-seed -1");
  EXPECT_EQ(bad.exit_code, 2);
}

}  // namespace
}  // namespace doppler
