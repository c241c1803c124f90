// The limits seen from the command line: environment overrides, their errors, and device counts
// outside 1..1024 are one-line errors with exit code 2.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/support.hpp"
#include "util/env_guard.hpp"

namespace doppler {
namespace {

// A 3-op reference graph in `dir`; returns its quoted path.
std::string three_ops(const test::TempDir& dir) {
  std::ofstream(dir / "g.txt") << "3\n\n0, 1,\n1, 2,\n1,4\n2,8\n3,12\n";
  return "'" + (dir / "g.txt").string() + "'";
}

TEST(CliLimits, EnvironmentLimitsApplyToEveryGraphLoad) {
  test::TempDir dir;
  const std::string g = three_ops(dir);
  EXPECT_EQ(test::run_cli("info " + g).exit_code, 0);
  {
    const test::EnvGuard ops("DOPPLER_MAX_OPS", "2");
    const auto r = test::run_cli("info " + g);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err, "doppler: error: " + (dir / "g.txt").string() +
                         ":1: total block count 3 minus 0 input blocks is more than 2 ops, the "
                         "limit (raise it with DOPPLER_MAX_OPS)\n");
    EXPECT_EQ(test::run_cli("place " + g + " --devices 2 --method heft").exit_code, 2);
  }
  {
    const test::EnvGuard edges("DOPPLER_MAX_EDGES", "1");
    EXPECT_EQ(test::run_cli("info " + g).exit_code, 2);
  }
  {
    const test::EnvGuard bytes("DOPPLER_MAX_FILE_BYTES", "10");
    const auto r = test::run_cli("convert " + g + " '" + (dir / "g.json").string() + "'");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("larger than the limit of 10 bytes"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "g.json")) << "no output after a failure";
  }
  {
    const test::EnvGuard bad("DOPPLER_MAX_OPS", "many");
    const auto r = test::run_cli("info " + g);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.err,
              "doppler: error: environment variable DOPPLER_MAX_OPS: expected an integer, "
              "found 'many'\n");
  }
}

TEST(CliLimits, DeviceCountsOutside1To1024AreUsageErrors) {
  test::TempDir dir;
  const std::string g = three_ops(dir);
  for (const char* p : {"0", "1025", "-3", "99999999999999999999"}) {
    SCOPED_TRACE(p);
    const auto r = test::run_cli("place " + g + " --method heft --devices " + p);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--devices"), std::string::npos) << r.err;
  }
  std::ofstream(dir / "a.json") << "{\"format\": \"doppler-assignment\", \"version\": 1, "
                                   "\"devices\": 1025, \"device_of\": [0, 0, 0]}";
  const auto r =
      test::run_cli("simulate " + g + " --assignment '" + (dir / "a.json").string() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "doppler: error: " + (dir / "a.json").string() +
                       ":1: integer 1025 is out of range (expected 1..1024)\n");
}

}  // namespace
}  // namespace doppler
