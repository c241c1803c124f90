// `doppler bench-suite`: instances from a directory and a list file, device counts and optima
// from the files, bad files skipped, aggregate figures computed by hand.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

// Three independent ops of cost 10, 3 and 7. On 2 devices the optimum is 10 (the longest op);
// critical-path reaches it, round-robin (topological order, device i mod P) puts 10 and 7 on
// device 0: 17. On 3 devices both reach 10.
const char* kThreeJson = R"({"format": "doppler-graph", "version": 1, "name": "three",
"params": {"devices": "2", "optimum": "10"},
"nodes": [{"id": 0, "compute_cost": 10, "transfer_cost": 0},
          {"id": 1, "compute_cost": 3, "transfer_cost": 0},
          {"id": 2, "compute_cost": 7, "transfer_cost": 0}], "edges": []})";
const char* kThreeText = "3\n\n\n\n10,0\n3,0\n7,0\n";

TEST(CliBenchSuite, AggregatesOverInstancesAndSkipsBadFiles) {
  test::TempDir dir;
  std::filesystem::create_directory(dir / "set");
  write(dir / "set" / "a.json", kThreeJson);
  write(dir / "set" / "bad.txt", "3\n\n\n\n10,0\n3\n");
  write(dir / "b.txt", kThreeText);
  write(dir / "suite.list", "# a directory and a file\nset\nb.txt\n");
  const std::string csv = (dir / "runs.csv").string();
  const auto r =
      test::run_cli("bench-suite " + (dir / "suite.list").string() +
                    " --devices 3 --methods critical-path,round-robin --json --csv " + csv);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["instances"].size(), 2u);
  EXPECT_EQ(j["instances"][0]["devices"], 2);  // the file's own count
  EXPECT_EQ(j["instances"][0]["optimum"], 10.0);
  EXPECT_EQ(j["instances"][1]["devices"], 3);  // --devices for a file without one
  EXPECT_TRUE(j["instances"][1]["optimum"].is_null());
  ASSERT_EQ(j["skipped"].size(), 1u);
  EXPECT_NE(j["skipped"][0]["error"].get<std::string>().find("bad.txt:"), std::string::npos)
      << j["skipped"][0]["error"];
  EXPECT_NE(r.err.find("skipped"), std::string::npos);

  const auto& m = j["methods"];
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0]["method"], "critical-path");
  EXPECT_EQ(m[0]["mean_gap"], 0.0);
  EXPECT_EQ(m[0]["best"], 2);
  EXPECT_EQ(m[0]["optimal"], 1);
  EXPECT_EQ(m[1]["method"], "round-robin");
  EXPECT_NEAR(m[1]["mean_gap"].get<double>(), 0.35, 1e-12);
  EXPECT_NEAR(m[1]["worst_gap"].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(m[1]["best"], 1);
  EXPECT_EQ(m[1]["optimal"], 0);

  std::ifstream in(csv);
  std::string header, line;
  std::getline(in, header);
  EXPECT_EQ(header.rfind("instance,file,ops,devices,method,seed,makespan", 0), 0u) << header;
  int rows = 0;
  while (std::getline(in, line)) ++rows;
  EXPECT_EQ(rows, 4);  // 2 instances x 2 deterministic methods
}

TEST(CliBenchSuite, TableNamesEveryMethodAndNoUsableGraphIsAnInputError) {
  test::TempDir dir;
  write(dir / "a.json", kThreeJson);
  const auto r = test::run_cli("bench-suite " + (dir / "a.json").string() +
                               " --methods critical-path,round-robin");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("critical-path"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("70.00%"), std::string::npos) << r.out;  // round-robin's worst gap

  write(dir / "b.txt", kThreeText);  // no device count and no --devices: skipped, nothing left
  const auto none = test::run_cli("bench-suite " + (dir / "b.txt").string());
  EXPECT_EQ(none.exit_code, 2) << none.err;
  EXPECT_NE(none.err.find("--devices"), std::string::npos) << none.err;
  EXPECT_EQ(test::run_cli("bench-suite " + (dir / "missing").string()).exit_code, 2);
}

// A DOT task graph stating its processor count, optimum and a (poor) schedule: ops 10 and 7 on
// processor 1, 3 on processor 2, so the file's schedule takes 17 on our runtime.
const char* kThreeDot = R"(digraph "three" {
  Processors = 2; "Optimal schedule length" = 10;
  a [Weight=10, Processor=1, "Start time"=0];
  b [Weight=3, Processor=2, "Start time"=0];
  c [Weight=7, Processor=1, "Start time"=10];
})";

TEST(CliBenchSuite, DotFilesBringTheirDevicesOptimumAndSchedule) {
  DOPPLER_REQUIRE_CLI_COMPONENT(graphviz);
  test::TempDir dir;
  write(dir / "three.dot", kThreeDot);
  const auto r = test::run_cli("bench-suite " + (dir / "three.dot").string() +
                               " --methods critical-path --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["instances"].size(), 1u);
  EXPECT_EQ(j["instances"][0]["devices"], 2);
  EXPECT_EQ(j["instances"][0]["optimum"], 10.0);
  ASSERT_EQ(j["methods"].size(), 2u);
  EXPECT_EQ(j["methods"][0]["method"], "(file schedule)");
  EXPECT_NEAR(j["methods"][0]["mean_gap"].get<double>(), 0.7, 1e-12);
  EXPECT_EQ(j["methods"][1]["method"], "critical-path");
  EXPECT_EQ(j["methods"][1]["optimal"], 1);

  // The same schedule through `doppler simulate --assignment FILE.dot`.
  const auto s = test::run_cli("simulate " + (dir / "three.dot").string() + " --assignment " +
                               (dir / "three.dot").string() + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(s.out)["makespan"], 17.0);
}

}  // namespace
}  // namespace doppler
