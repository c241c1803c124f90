// --help reads on an ordinary terminal: the command list gives one summary per command, every
// line fits in 100 columns, and wrapping loses no word of a description.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

const std::vector<std::string> kCommands = {"info",         "convert",     "import",  "demo",
                                            "generate",     "simulate",    "place",   "methods",
                                            "compare",      "bench-suite", "execute", "calibrate",
                                            "validate-sim", "gpus",        "train",   "pretrain"};

// `text` with every run of whitespace made one space, and none after a comma (wrapping may break
// a long option list after its commas).
std::string words(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (c == ' ' || c == '\n') {
      space = true;
      continue;
    }
    if (space && !out.empty() && out.back() != ',') out += ' ';
    space = false;
    out += c;
  }
  return out;
}

// The lines of `text` longer than 100 columns.
std::vector<std::string> long_lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.size() > 100) out.push_back(line);
  return out;
}

TEST(CliHelp, TheCommandListGivesEachCommandItsSummary) {
  const auto r = test::run_cli("--help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Hand-derived from the descriptions: the text before the first ':', ';' or full stop outside
  // parentheses, the parenthesised asides dropped, wrapped under column 16.
  EXPECT_NE(r.out.find("\n  calibrate     Measure the engine on this machine and write a hardware "
                       "profile that makes the\n                simulator predict it\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  convert       Convert a graph between the reference text format, "
                       "Doppler JSON and Graphviz DOT\n                task graphs\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\n  execute       Run an assignment on the real work-conserving engine\n"),
            std::string::npos)
      << r.out;
  for (const std::string& c : kCommands)
    EXPECT_NE(r.out.find("\n  " + c + " "), std::string::npos) << c;
  EXPECT_TRUE(long_lines(r.out).empty()) << long_lines(r.out).front();
}

TEST(CliHelp, EveryCommandsHelpFitsInAHundredColumns) {
  for (const std::string& c : kCommands) {
    const auto r = test::run_cli(c + " --help");
    ASSERT_EQ(r.exit_code, 0) << c << ": " << r.err;
    const auto lines = long_lines(r.out);
    EXPECT_TRUE(lines.empty()) << c << ": " << lines.front();
  }
}

TEST(CliHelp, WrappingLosesNoWordOfAMethodOrItsOptions) {
  const auto help = test::run_cli("place --help");
  const auto listed = test::run_cli("methods --json");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const std::string text = words(help.out);
  int checked = 0;
  for (const auto& m : nlohmann::json::parse(listed.out)) {
    const std::string row =
        words(m["name"].get<std::string>() + " " + m["description"].get<std::string>());
    const std::size_t at = text.find(row);
    ASSERT_NE(at, std::string::npos) << row;
    ++checked;
    if (m["options"].empty()) continue;
    // The row's option list, "[a=...,b=...]", names every option.
    const std::size_t open = at + row.size() + 1;
    ASSERT_EQ(text.substr(open, 1), "[") << row;
    const std::string list = "," + text.substr(open + 1, text.find(']', open) - open - 1);
    for (const auto& o : m["options"])
      EXPECT_NE(list.find("," + o["name"].get<std::string>() + "="), std::string::npos)
          << m["name"] << ": " << o["name"] << " in " << list;
  }
  EXPECT_GE(checked, 15);  // the heuristics at least
}

TEST(CliHelp, ACommandsOwnHelpKeepsItsWholeDescription) {
  const auto r = test::run_cli("calibrate --help");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = words(r.out);
  for (const char* part : {"Measure the engine on this machine (kernel time per op kind and size",
                           "and write a hardware profile that makes the simulator predict it (use "
                           "it with simulate/place/compare/validate-sim --hardware)."})
    EXPECT_NE(text.find(part), std::string::npos) << part << "\n" << r.out;
}

}  // namespace
}  // namespace doppler
