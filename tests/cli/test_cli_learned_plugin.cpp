// The learned methods and the commands that need libtorch are a plug-in, libdoppler_learn.so
// beside the binary, loaded on first use: the binary does not link libtorch (whose loading took
// 0.6 s of each start), every other command works with no plug-in at all, and a learned method or
// command without it ends in one line naming the library it could not load (exit 1).
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/dynamic_section.hpp"
#include "support/support.hpp"

namespace doppler {
namespace {

TEST(CliLearnedPlugin, TheCliDoesNotLinkTorch) {
  const std::string out = test::dynamic_section(test::cli_path());
  ASSERT_NE(out.find("(NEEDED)"), std::string::npos) << out;
  EXPECT_NE(out.find("libc.so"), std::string::npos) << out;
  for (const char* torch : {"libtorch", "libc10"}) EXPECT_EQ(out.find(torch), std::string::npos);
}

// Three independent ops (compute 10, 3, 7) on 2 devices: critical path's makespan is 10.
const char* kThree = "3\n\n\n\n10,0\n3,0\n7,0\n";

// A copy of the binary in a folder of its own: no plug-in beside it.
class WithoutThePlugin : public ::testing::Test {
protected:
  void SetUp() override {
    DOPPLER_REQUIRE_CLI_COMPONENT(torch);
    std::filesystem::copy_file(test::cli_path(), bin_);
    std::ofstream(graph_) << kThree;
  }
  test::TempDir dir_;
  std::filesystem::path bin_ = dir_ / "doppler", graph_ = dir_ / "g.txt";
};

TEST_F(WithoutThePlugin, LearnedMethodsAreListedAndHeuristicsRun) {
  const auto listed = test::run_program(bin_, "methods --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  int learned = 0;
  for (const auto& m : nlohmann::json::parse(listed.out)) learned += m["learned"].get<bool>();
  EXPECT_EQ(learned, 10);  // doppler, -il, -sim, -sys, -sel, -plc, -joint, -search, placeto, gdp
  const auto placed = test::run_program(bin_, "place " + graph_.string() +
                                                  " --devices 2 --method critical-path "
                                                  "--json");
  ASSERT_EQ(placed.exit_code, 0) << placed.err;
  EXPECT_EQ(nlohmann::json::parse(placed.out)["makespan"], 10.0);
  const auto help = test::run_program(bin_, "--help");
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* command : {"demo", "train", "pretrain"})
    EXPECT_NE(help.out.find(std::string("\n  ") + command + " "), std::string::npos) << help.out;
}

TEST_F(WithoutThePlugin, ALearnedMethodOrCommandSaysWhatItCouldNotLoad) {
  const std::string g = graph_.string();
  for (const std::string& args : std::vector<std::string>{
           "place " + g + " --devices 2 --method doppler-il",
           "compare " + g + " --methods heft,gdp",
           "train " + g + " --devices 2 -o " + (dir_ / "run").string(), "demo"}) {
    const auto r = test::run_program(bin_, args);
    EXPECT_EQ(r.exit_code, 1) << args << ": " << r.err;
    EXPECT_TRUE(r.out.empty()) << args << ": " << r.out;
    EXPECT_EQ(r.err.rfind("doppler: internal error: cannot load the learned methods: ", 0), 0u)
        << args << ": " << r.err;
    EXPECT_NE(r.err.find(bin_.parent_path().string() + "/libdoppler_learn.so"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(dir_ / "run"));
}

}  // namespace
}  // namespace doppler
