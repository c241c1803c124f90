// ReadLimits: defaults, environment overrides and their errors; read_file's size limit (regular
// files and devices read to their end); the JSON nesting and array limits of JsonDoc.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/support.hpp"
#include "util/env_guard.hpp"

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/json_doc.hpp"
#include "doppler/util/read_limits.hpp"

namespace doppler {
namespace {

using test::error_of;

TEST(ReadLimits, DefaultsAndEnvironmentOverrides) {
  const test::EnvGuard ops("DOPPLER_MAX_OPS", std::nullopt), edges("DOPPLER_MAX_EDGES", "77"),
      bytes("DOPPLER_MAX_FILE_BYTES", "+1000");
  const ReadLimits l = read_limits();
  EXPECT_EQ(l.max_ops, 5'000'000);
  EXPECT_EQ(l.max_edges, 77);
  EXPECT_EQ(l.max_file_bytes, 1000u);
  EXPECT_EQ(ReadLimits::defaults().max_file_bytes, 1ULL << 32);
}

TEST(ReadLimits, BadEnvironmentValuesAreOneLineErrors) {
  {
    const test::EnvGuard g("DOPPLER_MAX_OPS", "lots");
    EXPECT_EQ(error_of([] { read_limits(); }),
              "environment variable DOPPLER_MAX_OPS: expected an integer, found 'lots'");
  }
  {
    const test::EnvGuard g("DOPPLER_MAX_EDGES", "0");
    EXPECT_EQ(error_of([] { read_limits(); }),
              "environment variable DOPPLER_MAX_EDGES: 0 is out of range (1..2147483646)");
  }
  {
    const test::EnvGuard g("DOPPLER_MAX_FILE_BYTES", "99999999999999999999");
    EXPECT_EQ(error_of([] { read_limits(); }),
              "environment variable DOPPLER_MAX_FILE_BYTES: integer '99999999999999999999' is "
              "out of range of int64");
  }
}

TEST(ReadLimits, ReadFileRefusesFilesOverTheLimit) {
  test::TempDir dir;
  const auto path = dir / "big.txt";
  std::ofstream(path) << "0123456789";
  EXPECT_EQ(read_file(path, 10), "0123456789");
  EXPECT_EQ(error_of([&] { read_file(path, 9); }),
            path.string() +
                ": file is 10 bytes, larger than the limit of 9 bytes (raise it with "
                "DOPPLER_MAX_FILE_BYTES)");
  const test::EnvGuard g("DOPPLER_MAX_FILE_BYTES", "4");
  EXPECT_NE(error_of([&] { read_file(path); }).find("larger than the limit of 4 bytes"),
            std::string::npos);
}

TEST(ReadLimits, ReadFileStopsAnEndlessDeviceAtTheLimit) {
  // /dev/zero has no size: the limit is enforced while reading.
  EXPECT_EQ(error_of([] { read_file("/dev/zero", 100'000); }),
            "/dev/zero: file is more than 100000 bytes, larger than the limit of 100000 bytes "
            "(raise it with DOPPLER_MAX_FILE_BYTES)");
  EXPECT_EQ(error_of([] { read_file("/nonexistent/graph.json"); }),
            "/nonexistent/graph.json: cannot open: No such file or directory");
  EXPECT_EQ(error_of([] { read_file("/tmp"); }), "/tmp: is a directory, expected a file");
}

TEST(JsonLimits, DeepNestingIsRefusedWithItsLine) {
  const std::string deep = "{\"a\":\n" + std::string(300, '[') + std::string(300, ']') + "}";
  EXPECT_EQ(error_of([&] { JsonDoc(deep, "d.json"); }),
            "d.json:2: arrays and objects nested deeper than 256 levels");
  // Brackets inside strings do not count, escaped quotes do not end a string.
  const std::string quoted = "{\"a\": \"\\\"" + std::string(300, '[') + "\"}";
  EXPECT_EQ(error_of([&] { JsonDoc(quoted, "q.json"); }), "");
  const std::string ok = std::string(256, '[') + std::string(256, ']');
  EXPECT_EQ(error_of([&] { JsonDoc(ok, "ok.json"); }), "");
}

TEST(JsonLimits, LongTopLevelArraysAreRefusedBeforeParsing) {
  JsonLimits l;
  l.arrays = {{"nodes", 2, "nodes", "DOPPLER_MAX_OPS"}, {"", 3, "entries", ""}};
  EXPECT_EQ(error_of([&] { JsonDoc("{\"x\": [1, 2, 3],\n\"nodes\": [{}, [], 3]}", "n.json", l); }),
            "n.json:2: more than 2 nodes, the limit (raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of([&] { JsonDoc("{\"nodes\": [{\"a\": [1, 2, 3, 4]}, []]}", "n.json", l); }),
            "");  // nested arrays are not counted
  EXPECT_EQ(error_of([&] { JsonDoc("[1, 2, 3, 4]", "a.json", l); }),
            "a.json:1: more than 3 entries, the limit");
  EXPECT_EQ(error_of([&] { JsonDoc("[1, 2, 3]", "a.json", l); }), "");
  // Elements that are objects and arrays, and strings holding brackets, commas, quotes and keys:
  // counted once each (4 > 3; then 2 <= 2); a member "nodes" below the root is not the limited
  // one, and a root-level value after it resets nothing.
  EXPECT_EQ(error_of([&] { JsonDoc("[{}, {\"a\": \"],[,\"}, [[1], 2], {}]", "a.json", l); }),
            "a.json:1: more than 3 entries, the limit");
  EXPECT_EQ(error_of([&] {
              JsonDoc("{\"nodes\": [\"a,b\", \"c]\\\"d, \\\"nodes\\\": [\"]}", "n.json", l);
            }),
            "");
  EXPECT_EQ(error_of([&] {
              JsonDoc("{\"m\": {\"nodes\": [1, 2, 3]}, \"nodes\": [1], \"k\": 3}", "n.json", l);
            }),
            "");
  EXPECT_EQ(error_of([&] { JsonDoc("{\"m\": \"nodes\", \"nodes\": [{}, {}, {}]}", "n.json", l); }),
            "n.json:1: more than 2 nodes, the limit (raise it with DOPPLER_MAX_OPS)");
}

}  // namespace
}  // namespace doppler
