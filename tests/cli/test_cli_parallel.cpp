// `--threads`, `auto` as place's default, equal wall-clock in compare, and anytime curves.
#include <fstream>
#include <regex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

std::string dag(const test::TempDir& dir) {
  const std::string g = (dir / "g.json").string();
  EXPECT_EQ(test::run_cli("generate random-dag -p ops=300 -p seed=2 --devices 4 -o " + g).exit_code,
            0);
  return g;
}

TEST(CliParallel, PlaceDefaultsToAutoAndNamesTheWinner) {
  test::TempDir dir;
  const auto r = test::run_cli("place " + dag(dir) + " --budget 3000 --threads 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["method"], "auto");
  EXPECT_EQ(j["threads"], 2);
  EXPECT_LE(j["evaluations"].get<int>(), 3000);
  EXPECT_NE(j["status"].get<std::string>().find("; best "), std::string::npos) << j["status"];
  // The curve falls and ends no higher than the result.
  const auto& curve = j["curve"];
  ASSERT_FALSE(curve.empty());
  for (std::size_t i = 1; i < curve.size(); ++i) EXPECT_LT(curve[i][2], curve[i - 1][2]);
  EXPECT_GE(curve.back()[2].get<double>(), j["makespan"].get<double>() * (1 - 1e-12));
}

TEST(CliParallel, SameSeedAndThreadsUnderACallBudgetGiveTheSameAssignment) {
  test::TempDir dir;
  const std::string g = dag(dir);
  for (const char* m : {"local-search", "multilevel"}) {
    std::string out[2];
    for (int i = 0; i < 2; ++i) {
      const auto r = test::run_cli("place " + g + " -m " + m + " --budget 4000 --threads 2 -o " +
                                   (dir / ("a" + std::to_string(i) + ".json")).string());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      std::ifstream f(dir / ("a" + std::to_string(i) + ".json"));
      out[i].assign(std::istreambuf_iterator<char>(f), {});
    }
    EXPECT_EQ(out[0], out[1]) << m;
  }
}

TEST(CliParallel, LanesRepeatForASeedAndFollowTheRule) {
  test::TempDir dir;
  const std::string g = dag(dir);
  std::string out[2];
  for (int i = 0; i < 2; ++i) {
    const auto r = test::run_cli("place " + g + " -m local-search --budget 3000 --threads 2 " +
                                 "--lanes 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["lanes"], 2);
    EXPECT_LE(j["evaluations"].get<int>(), 3000);
    out[i] = j["ops_per_device"].dump() + std::to_string(j["makespan"].get<double>());
  }
  EXPECT_EQ(out[0], out[1]);
  // The rule: a 300-op graph is below 8,000 ops, so its threads stay chains of one lane.
  const auto r = test::run_cli("place " + g + " -m local-search --budget 1000 --threads 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["lanes"], 1);
  const auto bad = test::run_cli("place " + g + " --lanes -1");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--lanes"), std::string::npos) << bad.err;
}

TEST(CliParallel, BadThreadCountsAreUsageErrors) {
  test::TempDir dir;
  const auto r = test::run_cli("place " + dag(dir) + " --threads -1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--threads"), std::string::npos) << r.err;
}

TEST(CliParallel, CompareWithSecondsAloneHasNoCallLimitAndDrawsCurves) {
  test::TempDir dir;
  const std::string svg = (dir / "c.svg").string();
  const auto r = test::run_cli("compare " + dag(dir) +
                               " --methods etf,local-search,auto --seeds 1 --time-budget 0.3 "
                               "--threads 2 --json --curves " +
                               svg);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["budget_evaluations"], 0);
  EXPECT_EQ(j["budget_seconds"], 0.3);
  EXPECT_EQ(j["threads"], 2);
  for (const auto& m : j["methods"]) {
    ASSERT_EQ(m["calls"].size(), 1u);
    if (m["method"] == "etf") continue;
    EXPECT_FALSE(m["curves"][0].empty()) << m["method"];
    EXPECT_LE(m["curves"][0].back()[0].get<double>(), 0.3 * 1.5) << m["method"];
  }
  std::ifstream f(svg);
  const std::string text{std::istreambuf_iterator<char>(f), {}};
  const std::regex line("<polyline");
  EXPECT_EQ(
      std::distance(std::sregex_iterator(text.begin(), text.end(), line), std::sregex_iterator()),
      3);  // one line per method (etf: a single point)
  EXPECT_NE(text.find("auto"), std::string::npos);
}

}  // namespace
}  // namespace doppler
