// doppler generate: writes a loadable graph atomically in the format of its extension, prints
// one JSON summary with --json, lists workloads and parameters, and reports bad input as one
// line with exit code 2 and no output file.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

int placed(const Graph& g) {
  int n = 0;
  for (const Node& v : g.nodes()) n += v.kind != OpKind::input;
  return n;
}

TEST(CliGenerate, DefaultWorkloadLoadsAndHasTheDocumentedSize) {
  test::TempDir dir;
  const auto out = (dir / "x.json").string();
  const auto r = test::run_cli("generate llama-layer --devices 4 -o " + out);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Graph g = load_graph(out);
  EXPECT_EQ(g.meta().name, "llama-layer");
  EXPECT_EQ(g.meta().params.at("devices"), "4");
  EXPECT_EQ(placed(g), 204);  // docs/workloads.md
  EXPECT_TRUE(g.has_reference_costs());
  for (const Node& n : g.nodes()) EXPECT_TRUE(n.exec.has_value()) << n.name;
  const auto info = test::run_cli("info " + out + " --json");
  ASSERT_EQ(info.exit_code, 0) << info.err;
  EXPECT_EQ(nlohmann::json::parse(info.out)["nodes"], g.num_nodes());
}

TEST(CliGenerate, JsonSummaryDescribesTheWrittenGraph) {
  test::TempDir dir;
  const auto out = (dir / "g.json").string();
  const auto r = test::run_cli("generate chainmm --param n=64 -p row_blocks=2 --devices 8 -o " +
                               out + " --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  const Graph g = load_graph(out);
  EXPECT_EQ(j["nodes"], g.num_nodes());
  EXPECT_EQ(j["edges"], g.num_edges());
  EXPECT_EQ(j["placed_ops"], placed(g));
  EXPECT_EQ(j["inputs"].get<int>() + j["placed_ops"].get<int>(), g.num_nodes());
  EXPECT_EQ(j["graph"]["params"]["row_blocks"], "2");
  EXPECT_EQ(j["graph"]["params"]["n"], "64");
  // Three 64^3 matmuls (2 FLOPs per multiply-add) plus aggregation and the final add.
  EXPECT_GT(j["total_flops"].get<double>(), 3 * 2 * 64.0 * 64 * 64);
  EXPECT_LT(j["total_flops"].get<double>(), 3 * 2 * 64.0 * 64 * 64 + 20 * 64 * 64);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(CliGenerate, ListAndHelpNameEveryWorkloadAndParameter) {
  const auto list = test::run_cli("generate --list");
  const auto help = test::run_cli("generate --help");
  ASSERT_EQ(list.exit_code, 0);
  ASSERT_EQ(help.exit_code, 0);
  for (const char* word : {"chainmm", "ffnn",  "llama-block", "llama-layer", "llama ", "random-dag",
                           " n ",     "batch", "dim",         "hidden",      "seq",    "heads",
                           "ffn",     "vocab", "size",        "layers",      "ops",    "width",
                           "density", "ccr",   "seed",        "token_blocks"}) {
    EXPECT_NE(list.out.find(word), std::string::npos) << word;
    EXPECT_NE(help.out.find(word), std::string::npos) << word;
  }
  const auto j = test::run_cli("generate --list --json");
  ASSERT_EQ(j.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(j.out)["workloads"].size(), 7u);
}

TEST(CliGenerate, BadInputExitsTwoWithOneLineAndNoFile) {
  test::TempDir dir;
  const auto out = (dir / "g.json").string();
  for (const std::string& args : std::vector<std::string>{
           "generate resnet -o " + out, "generate chainmm -p m=3 -o " + out,
           "generate chainmm -p n=abc -o " + out, "generate chainmm -p n=-4 -o " + out,
           "generate chainmm -p n -o " + out, "generate chainmm --training -o " + out,
           "generate llama-block -p dim=100 -o " + out, "generate llama -p size=30b -o " + out,
           "generate chainmm -p n=8 -p row_blocks=9 -o " + out, std::string("generate chainmm"),
           "generate chainmm -o " + (dir / "g.xyz").string(),
           "generate chainmm -p n=8 -o " + (dir / "no/such/g.json").string()}) {
    const auto r = test::run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_EQ(count_lines(r.err), 1) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args;
    EXPECT_FALSE(std::filesystem::exists(out)) << args;
  }
  // Usage errors of the option parser exit 2 as well.
  EXPECT_EQ(test::run_cli("generate chainmm --dtype f64 -o " + out).exit_code, 2);
  EXPECT_EQ(test::run_cli("generate chainmm --devices 0 -o " + out).exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(out));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 0);
}

TEST(CliGenerate, FormatFollowsTheExtension) {
  test::TempDir dir;
  const auto txt = (dir / "g.txt").string(), dot = (dir / "g.dot").string();
  ASSERT_EQ(test::run_cli("generate ffnn -p batch=64 -p hidden=64 -p dim=8 --training -o " + txt)
                .exit_code,
            0);
  const Graph t = load_graph(txt);  // the reference format drops input blocks
  EXPECT_EQ(placed(t), t.num_nodes());
  const auto j = test::run_cli(
      "generate ffnn -p batch=64 -p hidden=64 -p dim=8 --training --json");  // no file
  ASSERT_EQ(j.exit_code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["placed_ops"], t.num_nodes());
  ASSERT_EQ(test::run_cli("generate random-dag -p ops=50 -p seed=3 -o " + dot).exit_code, 0);
  std::ifstream in(dot);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text.rfind("digraph", 0), 0u);
}

}  // namespace
}  // namespace doppler
