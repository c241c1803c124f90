// doppler generate planted: the graph and the planted assignment it writes simulate to the
// optimum recorded in the graph; the shorthand options equal --param; --assignment-out is
// refused for workloads without a planted assignment, with exit code 2 and no files.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

TEST(CliPlanted, WritesAGraphAndAnAssignmentThatReachesTheOptimum) {
  test::TempDir dir;
  const auto g = (dir / "g.json").string(), a = (dir / "a.json").string();
  const auto r = test::run_cli(
      "generate planted --ops 240 --devices 8 --ratio 4 --density 1.5 "
      "--seed 3 -o " +
      g + " --assignment-out " + a);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("optimal makespan"), std::string::npos) << r.out;
  const Graph graph = load_graph(g);
  EXPECT_EQ(graph.meta().name, "planted");
  EXPECT_EQ(graph.meta().params.at("devices"), "8");
  EXPECT_EQ(graph.meta().params.at("target_ratio"), "4");
  EXPECT_EQ(graph.num_nodes(), 240);
  const double optimum = std::stod(graph.meta().params.at("optimum"));
  const auto sim = test::run_cli("simulate " + g + " --devices 8 -a " + a + " --json");
  ASSERT_EQ(sim.exit_code, 0) << sim.err;
  EXPECT_EQ(nlohmann::json::parse(sim.out)["makespan"].get<double>(), optimum);
  // The shorthand options are --param under another name.
  const auto g2 = (dir / "g2.json").string();
  ASSERT_EQ(test::run_cli("generate planted -p ops=240 -d 8 -p ratio=4 -p density=1.5 -p seed=3 "
                          "-o " +
                          g2)
                .exit_code,
            0);
  EXPECT_EQ(slurp(g), slurp(g2));
  const auto j = test::run_cli("generate planted --ops 50 --devices 2 --ratio 1 --json");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["graph"]["params"]["optimum"], "25000000000");
}

TEST(CliPlanted, BadInputExitsTwoAndWritesNothing) {
  test::TempDir dir;
  const auto g = (dir / "g.json").string(), a = (dir / "a.json").string();
  for (const std::string& args : std::vector<std::string>{
           "generate chainmm -p n=8 -o " + g + " --assignment-out " + a,
           "generate planted --ops 3 --devices 8 -o " + g + " --assignment-out " + a,
           "generate planted --ratio abc -o " + g, "generate planted --ops 10 -p ops=10 -o " + g,
           "generate planted --dtype f16 -o " + g, "generate chainmm --ratio 2 -o " + g}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_NE(r.err.find(' '), std::string::npos) << args;
  }
  EXPECT_FALSE(std::filesystem::exists(g));
  EXPECT_FALSE(std::filesystem::exists(a));
}

TEST(CliPlanted, HelpAndListDescribeIt) {
  const auto help = test::run_cli("generate --help");
  ASSERT_EQ(help.exit_code, 0);
  for (const char* word : {"planted", "--assignment-out", "--ratio", "--ops", "ratio"})
    EXPECT_NE(help.out.find(word), std::string::npos) << word;
}

}  // namespace
}  // namespace doppler
