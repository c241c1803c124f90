// `doppler train`, and learned methods in `doppler place` / `doppler compare`.
#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {
namespace {

// Two chains of three ops (compute 5, transfer 1).
const char* kChains = "6\n\n0, 1, 3, 4,\n1, 2, 4, 5,\n5,1\n5,1\n5,1\n5,1\n5,1\n5,1\n";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

int lines(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string l;
  int n = 0;
  while (std::getline(in, l)) ++n;
  return n;
}

TEST(CliTrain, WritesARunDirectoryAndItsPolicyPlaces) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  write(dir / "g.txt", kChains);
  const std::string run = (dir / "run").string();
  const auto r = test::run_cli("train " + (dir / "g.txt").string() +
                               " --devices 2 --stage il --episodes 7 --hidden 8 " +
                               "--checkpoint-every 3 -o " + run + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["episodes"], 7);
  EXPECT_EQ(j["cost_calls"], 0);  // Stage I scores nothing
  for (const char* f : {"ckpt.pt", "log.jsonl", "greedy.json", "config.json"})
    EXPECT_TRUE(std::filesystem::exists(dir / "run" / f)) << f;
  EXPECT_EQ(lines(dir / "run" / "log.jsonl"), 7);  // one update per rollout in Stage I
  const auto first = nlohmann::json::parse([&] {
    std::ifstream in(dir / "run" / "log.jsonl");
    std::string l;
    std::getline(in, l);
    return l;
  }());
  for (const char* key : {"makespan", "reward", "loss_sel", "loss_plc", "match_sel", "match_plc",
                          "lr", "epsilon", "seconds"})
    EXPECT_TRUE(first.contains(key)) << key;
  // The greedy placement of the saved policy (one sample: rollout 0 is the greedy one) is the
  // run's greedy.json.
  const auto p = test::run_cli("place " + (dir / "g.txt").string() +
                               " --devices 2 --method doppler:samples=1 --policy " + run +
                               "/ckpt.pt -o " + (dir / "a.json").string() + " --json");
  ASSERT_EQ(p.exit_code, 0) << p.err;
  const Graph g = load_graph(dir / "g.txt");
  EXPECT_EQ(load_assignment(dir / "a.json", g).device_of,
            load_assignment(dir / "run" / "greedy.json", g).device_of);
  EXPECT_EQ(nlohmann::json::parse(p.out)["makespan"], j["greedy_makespan"]);
  // Stage II from Stage I's weights (8 rollouts, 4 per update), then resuming the finished run
  // trains nothing more.
  const auto s = test::run_cli("train " + (dir / "g.txt").string() +
                               " --devices 2 --stage sim --episodes 8 --rollouts 4 --init " + run +
                               " -o " + (dir / "sim").string() + " --json");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_EQ(nlohmann::json::parse(s.out)["episodes"], 8);
  EXPECT_EQ(nlohmann::json::parse(s.out)["cost_calls"], 8 + 1);  // rollouts + greedy rollout
  const auto again = test::run_cli("train " + (dir / "g.txt").string() + " --devices 2 --resume " +
                                   (dir / "sim").string() + " --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(nlohmann::json::parse(again.out)["best_makespan"],
            nlohmann::json::parse(s.out)["best_makespan"]);
  EXPECT_EQ(lines(dir / "sim" / "log.jsonl"), 2);  // one line per update
}

TEST(CliTrain, BadInputsExitTwo) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  write(dir / "g.txt", kChains);
  write(dir / "bad.pt", "garbage");
  EXPECT_EQ(test::run_cli("train " + (dir / "g.txt").string() + " --devices 2").exit_code,
            2);  // no -o
  const auto init = test::run_cli("train " + (dir / "g.txt").string() + " --devices 2 --init " +
                                  (dir / "bad.pt").string() + " -o " + (dir / "r").string());
  EXPECT_EQ(init.exit_code, 2);
  EXPECT_NE(init.err.find("bad.pt: unreadable checkpoint"), std::string::npos) << init.err;
  EXPECT_EQ(test::run_cli("train " + (dir / "g.txt").string() + " --devices 2 --resume " +
                          (dir / "none").string())
                .exit_code,
            2);
  // No policy= and no shipped model (DOPPLER_MODEL names a missing file): exit 2 naming it.
  ::setenv("DOPPLER_MODEL", (dir / "missing.pt").c_str(), 1);
  const auto none = test::run_cli("place " + (dir / "g.txt").string() + " --method doppler");
  ::unsetenv("DOPPLER_MODEL");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("missing.pt"), std::string::npos) << none.err;
  EXPECT_EQ(test::run_cli("compare " + (dir / "g.txt").string() + " --methods doppler-sim:bogus=1")
                .exit_code,
            2);
}

TEST(CliTrain, CompareTrainsLearnedMethods) {
  DOPPLER_REQUIRE_CLI_COMPONENT(torch);
  test::TempDir dir;
  write(dir / "g.txt", kChains);
  const auto r = test::run_cli(
      "compare " + (dir / "g.txt").string() +
      " --devices 2 --methods "
      "critical-path,doppler-il:il=5,hidden=8,doppler-sim:il=3,sim=4,hidden=8 --seeds 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["methods"].size(), 3u);
  EXPECT_EQ(j["methods"][1]["makespans"].size(), 2u);  // learned methods are randomised: every seed
  // Stage I makes no call; Stage II's 4 rollouts, its greedy rollout and the 64 default samples.
  EXPECT_EQ(j["methods"][2]["evaluations"], 4 + 1 + 64);
  // Every method is at least as good as random placement on average (here over 20 seeds), and
  // none beats the optimum (15: each chain on its own device).
  const Graph g = load_graph(dir / "g.txt");
  const Problem problem(g, Platform::reference(2));
  double random_mean = 0;
  for (std::uint64_t seed = 0; seed < 20; ++seed)
    random_mean += problem.simulator().makespan(
                       make_placer("random")->place(problem, {seed, {}}).assignment.device_of) /
                   20;
  ASSERT_GT(random_mean, 16.0) << "precondition: random placement is not near-optimal";
  for (const auto& m : j["methods"]) {
    EXPECT_LE(m["mean"].get<double>(), random_mean) << m["method"];
    EXPECT_GE(m["mean"].get<double>(), 15.0) << m["method"];
  }
}

}  // namespace
}  // namespace doppler
