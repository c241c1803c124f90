// The CLI contract: exit codes (0 / 2 / 1), one JSON object with --json, one-line errors naming
// the file and line, and no partial output files.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/io/graph_file.hpp"

namespace doppler {
namespace {

// Diamond with reference costs: see tests/graph/test_analysis.cpp (critical path 13, lower
// bound 9 on 2 devices, 10 with transfers, total work 10).
const char* kDiamond = "4\n\n0, 0, 1, 2,\n1, 2, 3, 3,\n2,1\n3,2\n1,5\n4,0\n";

void write(const std::filesystem::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

int count_lines(const std::string& s) {
  int n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(Cli, HelpListsCommandsAndExitsZero) {
  const auto r = test::run_cli("--help");
  EXPECT_EQ(r.exit_code, 0);
  for (const char* cmd : {"info", "convert", "demo"})
    EXPECT_NE(r.out.find(cmd), std::string::npos) << cmd;
}

TEST(Cli, UsageErrorsExitTwo) {
  EXPECT_EQ(test::run_cli("").exit_code, 2);
  EXPECT_EQ(test::run_cli("frobnicate").exit_code, 2);
  EXPECT_EQ(test::run_cli("info").exit_code, 2);
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  EXPECT_EQ(test::run_cli("info " + (dir / "g.txt").string() + " --devices 0").exit_code, 2);
  EXPECT_EQ(test::run_cli("info " + (dir / "g.txt").string() + " --no-such-flag").exit_code, 2);
}

TEST(Cli, InfoJsonIsOneObjectWithTheHandComputedBounds) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  const auto r = test::run_cli("info " + (dir / "g.txt").string() + " --devices 2 --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);  // throws unless stdout is exactly one document
  EXPECT_TRUE(j.is_object());
  EXPECT_EQ(j["nodes"], 4);
  EXPECT_EQ(j["edges"], 4);
  EXPECT_EQ(j["critical_path_length"], 13.0);
  EXPECT_EQ(j["total_work"], 10.0);
  EXPECT_EQ(j["lower_bound"], 9.0);
  EXPECT_EQ(j["lower_bound_div_1e10"], 9.0 / 1e10);
  EXPECT_EQ(j["lower_bound_with_transfers"], 10.0);  // tests/heuristics/test_transfer_bound.cpp
  EXPECT_EQ(j["graph"]["name"], "g");
}

TEST(Cli, InfoTextOnReferenceGraph) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  const auto path = dir / "gdp_full_transformer_layer_261nodes.txt";
  const auto r = test::run_cli("info " + path.string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("nodes                     229"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("einsum 166 (einsummable)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lower bound (P=4)"), std::string::npos);
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST(Cli, BadInputIsOneLineNamingFileAndLineWithExitTwo) {
  test::TempDir dir;
  write(dir / "bad.txt", "2\n\n0,\n1,\n1,4\n2,oops\n");
  const auto r = test::run_cli("info " + (dir / "bad.txt").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(r.out.empty());
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
  EXPECT_NE(r.err.find((dir / "bad.txt").string() + ":6: node 1: transfer cost M"),
            std::string::npos)
      << r.err;

  const auto missing = test::run_cli("info " + (dir / "missing.txt").string());
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("missing.txt: cannot open"), std::string::npos) << missing.err;
}

TEST(Cli, ConvertRoundTripsAndWritesDot) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  ASSERT_EQ(test::run_cli("convert " + (dir / "g.txt").string() + " " + (dir / "g.json").string())
                .exit_code,
            0);
  ASSERT_EQ(test::run_cli("convert " + (dir / "g.json").string() + " " + (dir / "g2.json").string())
                .exit_code,
            0);
  const Graph a = load_graph(dir / "g.json"), b = load_graph(dir / "g2.json");
  EXPECT_EQ(a.num_edges(), 4);
  EXPECT_EQ(b.num_edges(), 4);
  write(dir / "a.json", "[0, 1, 0, 0]");
  const auto r =
      test::run_cli("convert " + (dir / "g.json").string() + " " + (dir / "g.dot").string() +
                    " --assignment " + (dir / "a.json").string());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(dir / "g.dot");
  const std::string dot((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_NE(dot.find("[dev 1]"), std::string::npos);
  EXPECT_NE(dot.find("n0 -> n1 [style=bold"), std::string::npos);  // 0 and 1 on different devices
  EXPECT_EQ(dot.find("n0 -> n2 [style=bold"), std::string::npos);
}

// The output as every other command names it (-o) or as the second positional, once.
TEST(Cli, ConvertTakesTheOutputAsOutOrDashO) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  const std::string g = (dir / "g.txt").string();
  ASSERT_EQ(test::run_cli("convert " + g + " -o " + (dir / "a.json").string()).exit_code, 0);
  ASSERT_EQ(test::run_cli("convert " + g + " " + (dir / "b.json").string()).exit_code, 0);
  std::ifstream a(dir / "a.json"), b(dir / "b.json");
  const std::string ta((std::istreambuf_iterator<char>(a)), {});
  const std::string tb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_EQ(ta, tb);
  EXPECT_EQ(load_graph(dir / "a.json").num_edges(), 4);
  const auto none = test::run_cli("convert " + g);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("the output file (OUT, or -o OUT) is required"), std::string::npos)
      << none.err;
  const auto both = test::run_cli("convert " + g + " " + (dir / "c.json").string() + " -o " +
                                  (dir / "d.json").string());
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("OUT or -o OUT, not both"), std::string::npos) << both.err;
  EXPECT_FALSE(std::filesystem::exists(dir / "c.json"));
  EXPECT_FALSE(std::filesystem::exists(dir / "d.json"));
}

TEST(Cli, FailedConvertLeavesNoOutputFile) {
  test::TempDir dir;
  write(dir / "bad.txt", "2\n\n0,\n1,\n1,4\n");
  const auto r =
      test::run_cli("convert " + (dir / "bad.txt").string() + " " + (dir / "out.json").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_FALSE(std::filesystem::exists(dir / "out.json"));
  // Unwritable destination: exit 2, no stray temporary file.
  write(dir / "g.txt", kDiamond);
  const auto w = test::run_cli("convert " + (dir / "g.txt").string() + " " +
                               (dir / "no/such/dir/out.json").string());
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.err.find("cannot write"), std::string::npos) << w.err;
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    files += e.is_regular_file();
  EXPECT_EQ(files, 2);  // bad.txt and g.txt
}

TEST(Cli, ConvertRejectsUnknownFormat) {
  test::TempDir dir;
  write(dir / "g.txt", kDiamond);
  const auto r =
      test::run_cli("convert " + (dir / "g.txt").string() + " " + (dir / "g.xyz").string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("cannot tell the format"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir / "g.xyz"));
}

}  // namespace
}  // namespace doppler
