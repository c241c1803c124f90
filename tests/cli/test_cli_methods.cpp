// doppler methods: the registry's methods and their options, as text and as JSON.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/support.hpp"

namespace doppler {
namespace {

TEST(CliMethods, JsonListsEveryMethodWithTypedOptions) {
  const auto r = test::run_cli("methods --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  bool seen_local_search = false, seen_critical_path = false;
  for (const auto& m : j) {
    if (m["name"] == "local-search") {
      seen_local_search = true;
      // docs/cli.md: local-search's t0 is 0.03, a number.
      bool t0 = false;
      for (const auto& o : m["options"])
        if (o["name"] == "t0") {
          t0 = true;
          EXPECT_EQ(o["type"], "number");
          EXPECT_EQ(o["default"], "0.03");
          EXPECT_FALSE(o["description"].get<std::string>().empty());
        }
      EXPECT_TRUE(t0);
    }
    if (m["name"] == "critical-path") {
      seen_critical_path = true;
      ASSERT_EQ(m["options"].size(), 1u);
      EXPECT_EQ(m["options"][0]["type"], "choice");
      EXPECT_EQ(m["options"][0]["choices"], nlohmann::json({"lowest", "random"}));
      EXPECT_TRUE(m["deterministic"].get<bool>());
    }
  }
  EXPECT_TRUE(seen_local_search && seen_critical_path);
}

TEST(CliMethods, OneMethodShowsItsOptionsAndUnknownNamesExitTwo) {
  const auto r = test::run_cli("methods multilevel");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* option : {"inner", "coarse", "cap", "share", "t0", "focus"})
    EXPECT_NE(r.out.find(std::string("\n  ") + option + " "), std::string::npos) << option;
  const auto bad = test::run_cli("methods no-such-method");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown method 'no-such-method' (methods: critical-path,"),
            std::string::npos)
      << bad.err;
}

}  // namespace
}  // namespace doppler
