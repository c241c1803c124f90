// `doppler simulate`: single assignments, batches, traces, bad inputs.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

// Diamond with reference costs; on [0, 0, 1, 0] the makespan is 13 (tests/sim), the lower
// bound on 2 devices 9, and 10 with transfers (tests/heuristics/test_transfer_bound.cpp).
const char* kDiamond = "4\n\n0, 0, 1, 2,\n1, 2, 3, 3,\n2,1\n3,2\n1,5\n4,0\n";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

TEST(CliSimulate, JsonSummaryHasTheHandComputedMakespan) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  write(
      dir / "a.json",
      R"({"format": "doppler-assignment", "version": 1, "devices": 2, "device_of": [0, 0, 1, 0]})");
  const auto r = test::run_cli("simulate " + (dir / "g.txt").string() + " -a " +
                               (dir / "a.json").string() + " --json --trace " +
                               (dir / "t.json").string() + " --gantt " + (dir / "g.svg").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["makespan"], 13.0);
  EXPECT_EQ(j["lower_bound"], 9.0);
  EXPECT_EQ(j["lower_bound_with_transfers"], 10.0);
  EXPECT_DOUBLE_EQ(j["gap_to_bound_with_transfers"].get<double>(), 0.3);  // 13 / 10 - 1
  EXPECT_EQ(j["cross_transfers"], 2);
  EXPECT_EQ(j["per_device"][1]["ops"], 1);
  EXPECT_TRUE(std::filesystem::exists(dir / "t.json"));
  EXPECT_TRUE(std::filesystem::exists(dir / "g.svg"));
  // A priority order that agrees with FIFO here gives the same makespan.
  write(
      dir / "o.json",
      R"({"format": "doppler-assignment", "version": 1, "devices": 2, "device_of": [0, 0, 1, 0], "order": [0, 2, 1, 3]})");
  const auto p = test::run_cli("simulate " + (dir / "g.txt").string() + " -a " +
                               (dir / "o.json").string() + " --order priority --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  EXPECT_EQ(nlohmann::json::parse(p.out)["makespan"], 13.0);
}

TEST(CliSimulate, BatchPrintsOneMakespanPerLine) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  // [0,0,0,0]: total work 10. [0,0,1,0]: 13. [0,1,0,0]: a 0-2, b on 1 gets a at 3, 3-6, c 2-3,
  // d gets b at 8: 8-12.
  write(dir / "m.jsonl",
        "[0,0,0,0]\n\n[0,0,1,0]\n{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": "
        "2, \"device_of\": [0,1,0,0]}\n");
  const auto r = test::run_cli("simulate " + (dir / "g.txt").string() + " --assignments " +
                               (dir / "m.jsonl").string() + " --devices 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "10\n13\n12\n");
  const auto j = test::run_cli("simulate " + (dir / "g.txt").string() + " --assignments " +
                               (dir / "m.jsonl").string() + " --devices 2 --json --bench 0.05");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  std::istringstream lines(j.out);
  std::string line;
  int n = 0;
  while (std::getline(lines, line)) {
    const auto obj = nlohmann::json::parse(line);
    if (obj.contains("bench")) {
      EXPECT_GT(obj["bench"]["simulations_per_second"].get<double>(), 0);
    }
    ++n;
  }
  EXPECT_EQ(n, 4);
  EXPECT_NE(j.err.find("simulations/s"), std::string::npos);
}

TEST(CliSimulate, BadBatchLineNamesTheLine) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  write(dir / "m.jsonl", "[0,0,0,0]\n[0,0,7,0]\n");
  const auto r = test::run_cli("simulate " + (dir / "g.txt").string() + " --assignments " +
                               (dir / "m.jsonl").string() + " --devices 2");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("m.jsonl:2: integer 7 is out of range (expected 0..1)"), std::string::npos)
      << r.err;
}

TEST(CliSimulate, ErrorsLeaveNoTraceFiles) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  write(dir / "a.json", "[0, 0, 1]");
  const auto r = test::run_cli("simulate " + (dir / "g.txt").string() + " -a " +
                               (dir / "a.json").string() + " --trace " + (dir / "t.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("assignment has 3 entries, the graph has 4 nodes"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "t.json"));
  EXPECT_EQ(test::run_cli("simulate " + (dir / "g.txt").string()).exit_code, 2);  // no assignment
  EXPECT_EQ(test::run_cli("simulate " + (dir / "g.txt").string() + " -a " +
                          (dir / "a.json").string() + " --hardware tpu")
                .exit_code,
            2);
}

TEST(CliSimulate, GraphWithoutReferenceCostsNeedsHardware) {
  test::TempDir dir;
  write(
      dir / "g.json",
      R"({"format": "doppler-graph", "version": 1, "nodes": [{"flops": 1e9, "out_bytes": 1e6}, {"flops": 2e9}], "edges": [[0, 1]]})");
  write(dir / "a.json", "[0, 1]");
  const auto r =
      test::run_cli("simulate " + (dir / "g.json").string() + " -a " + (dir / "a.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("has no reference costs: pass --hardware PROFILE"), std::string::npos)
      << r.err;
  const auto h = test::run_cli("simulate " + (dir / "g.json").string() + " -a " +
                               (dir / "a.json").string() + " --hardware p100 --json");
  ASSERT_EQ(h.exit_code, 0) << h.err;
  const auto j = nlohmann::json::parse(h.out);
  // P100 f32: 5 us + 1e9 / (9.3e12 x 0.7); transfer 0 -> 1 within a switch: 10 us + 1e6 / 12e9;
  // then 5 us + 2e9 / (9.3e12 x 0.7).
  const double c0 = 5e-6 + 1e9 / (9.3e12 * 0.7), t01 = 10e-6 + 1e6 / 12e9,
               c1 = 5e-6 + 2e9 / (9.3e12 * 0.7);
  EXPECT_NEAR(j["makespan"].get<double>(), c0 + t01 + c1, 1e-12);
  EXPECT_EQ(j["model"], "4xP100-PCIe");
}

}  // namespace
}  // namespace doppler
