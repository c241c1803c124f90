// `doppler compare --saved NAME=FILE`: rows of placements made elsewhere (measured on this
// machine's engine with --measure), and the per-seed files of --assignments-dir they come from.
#include <cmath>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

// Three independent ops of compute 10, 3 and 7, no transfers: on 2 devices [0,0,0] takes 20,
// [0,1,1] takes 10 and [0,1,0] takes 17.
const char* kThree = "3\n\n\n\n10,0\n3,0\n7,0\n";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

std::string assignment(const std::string& devices) {
  return R"({"format": "doppler-assignment", "version": 1, "devices": 2, "device_of": )" + devices +
         "}";
}

nlohmann::json row(const nlohmann::json& j, const std::string& method) {
  for (const auto& r : j["methods"])
    if (r["method"] == method) return r;
  ADD_FAILURE() << "no row " << method << " in " << j.dump();
  return {};
}

TEST(CliCompareSaved, SavedRowsAreTheirFilesSimulatedAndANameRepeatedGivesItsSeeds) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  write(dir / "one.json", assignment("[0,0,0]"));
  write(dir / "split.json", assignment("[0,1,1]"));
  write(dir / "other.json", assignment("[0,1,0]"));
  const auto r = test::run_cli(
      "compare " + (dir / "g.txt").string() + " --devices 2 --methods none --json --saved one=" +
      (dir / "one.json").string() + " --saved two=" + (dir / "split.json").string() +
      " --saved two=" + (dir / "other.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["methods"].size(), 2u);
  const auto one = row(j, "one"), two = row(j, "two");
  EXPECT_EQ(one["makespans"], nlohmann::json::array({20.0}));
  EXPECT_TRUE(one["deterministic"].get<bool>());
  EXPECT_EQ(two["makespans"], nlohmann::json::array({10.0, 17.0}));
  EXPECT_EQ(two["seeds"], nlohmann::json::array({0, 1}));
  EXPECT_DOUBLE_EQ(two["mean"].get<double>(), 13.5);
  EXPECT_NEAR(two["std"].get<double>(), std::sqrt(2 * 3.5 * 3.5), 1e-12);
  EXPECT_EQ(two["evaluations"], 0);
  EXPECT_DOUBLE_EQ(one["ratio_to_best"].get<double>(), 20.0 / 13.5);
}

TEST(CliCompareSaved, ASavedPlacementMatchesTheMethodThatMadeItBesideIt) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  ASSERT_EQ(test::run_cli("place " + (dir / "g.txt").string() +
                          " --devices 2 --method critical-path -o " + (dir / "cp.json").string())
                .exit_code,
            0);
  const auto r = test::run_cli("compare " + (dir / "g.txt").string() +
                               " --devices 2 --methods critical-path,round-robin --json --saved "
                               "cp-saved=" +
                               (dir / "cp.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["methods"].size(), 3u);
  EXPECT_EQ(row(j, "cp-saved")["makespans"], nlohmann::json::array({10.0}));
  EXPECT_EQ(row(j, "critical-path")["makespans"], nlohmann::json::array({10.0}));
}

// --assignments-dir writes every seed of a randomised method; as --saved rows they give the
// makespans the method's row reported seed by seed.
TEST(CliCompareSaved, EverySeedsAssignmentIsWrittenAndReadBackToItsMakespan) {
  test::TempDir dir;
  const std::string g = (dir / "g.json").string();
  ASSERT_EQ(test::run_cli("generate random-dag --ops 40 --seed 3 --devices 3 -o " + g).exit_code,
            0);
  const auto made = test::run_cli("compare " + g +
                                  " --devices 3 --methods random --seeds 3 --json "
                                  "--assignments-dir " +
                                  dir.path().string());
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const auto seeds = row(nlohmann::json::parse(made.out), "random")["makespans"];
  ASSERT_EQ(seeds.size(), 3u);
  ASSERT_NE(seeds[0], seeds[1]);  // three different placements
  std::string saved;
  for (int s = 0; s < 3; ++s)
    saved += " --saved again=" + (dir / ("random.seed-" + std::to_string(s) + ".json")).string();
  ASSERT_TRUE(std::filesystem::exists(dir / "random.json"));
  const auto back = test::run_cli("compare " + g + " --devices 3 --methods none --json" + saved);
  ASSERT_EQ(back.exit_code, 0) << back.err;
  EXPECT_EQ(row(nlohmann::json::parse(back.out), "again")["makespans"], seeds);
}

TEST(CliCompareSaved, BadSavedRequestsAreOneLineUsageErrors) {
  test::TempDir dir;
  write(dir / "g.txt", kThree);
  write(dir / "three.json", R"({"format": "doppler-assignment", "version": 1, "devices": 3,
                                "device_of": [0,1,2]})");
  const std::string base = "compare " + (dir / "g.txt").string() + " --devices 2 ";
  struct Case {
    std::string args, message;
  };
  for (const Case& c : {Case{"--saved justafile", "--saved 'justafile': expected NAME=FILE"},
                        Case{"--saved x=" + (dir / "missing.json").string(), "missing.json"},
                        Case{"--saved x=" + (dir / "three.json").string(),
                             "three.json:1: assignment is for 3 devices, but 2 were requested"},
                        Case{"--methods none", "nothing to compare"}}) {
    const auto r = test::run_cli(base + c.args);
    EXPECT_EQ(r.exit_code, 2) << c.args << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

}  // namespace
}  // namespace doppler
