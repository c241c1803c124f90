// The CLI reads DOT task graphs and STG files: `doppler info` works on both, and a malformed
// file exits 2 with one "FILE:LINE: problem" line.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

TEST(CliTaskGraphs, InfoReadsDotAndStg) {
  DOPPLER_REQUIRE_CLI_COMPONENT(graphviz);
  test::TempDir dir;
  std::ofstream(dir / "d.dot")
      << "digraph \"diamond\" {\n  a [Weight=2]; b [Weight=3]; c [Weight=4];"
         " d [Weight=1];\n  a -> b [Weight=5]; a -> c [Weight=6];\n"
         "  b -> d [Weight=7]; c -> d [Weight=8];\n}\n";
  std::ofstream(dir / "s.stg") << "2\n0 0 0\n1 3 1 0\n2 4 1 0\n3 0 2 1 2\n";
  for (const auto& [file, nodes, edges] : {std::tuple{"d.dot", 4, 4}, std::tuple{"s.stg", 4, 4}}) {
    const auto r = test::run_cli("info " + (dir / file).string() + " --devices 2 --json");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["nodes"], nodes) << file;
    EXPECT_EQ(j["edges"], edges) << file;
  }
}

TEST(CliTaskGraphs, MalformedFilesExitTwoWithFileAndLine) {
  DOPPLER_REQUIRE_CLI_COMPONENT(graphviz);
  test::TempDir dir;
  std::ofstream(dir / "bad.dot") << "digraph g {\n  a [Weight=1];\n  b [Weight=-1];\n}\n";
  std::ofstream(dir / "bad.stg") << "1\n0 0 0\n1 2 1 5\n2 0 1 1\n";
  for (const auto& [file, line] : {std::pair{"bad.dot", 3}, std::pair{"bad.stg", 3}}) {
    const auto path = (dir / file).string();
    const auto r = test::run_cli("info " + path);
    EXPECT_EQ(r.exit_code, 2) << file;
    EXPECT_NE(r.err.find(path + ":" + std::to_string(line) + ": "), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace doppler
