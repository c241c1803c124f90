// Numbers that overflow int64 or double, NaN and infinities, in every reader: each is refused
// with one "FILE:LINE: problem" line (never clamped, never a crash). Complements the per-format
// catalogues of test_reference_text.cpp, test_graph_json.cpp and test_assignment.cpp.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "<no error>";
}

std::string reference(const std::string& text) {
  return error_of([&] { parse_reference_text(text, "g.txt"); });
}

std::string graph(const std::string& nodes, const std::string& edges = "[]") {
  return error_of([&] {
    parse_graph_json("{\"format\": \"doppler-graph\", \"version\": 1,\n\"nodes\": " + nodes +
                         ",\n\"edges\": " + edges + "}",
                     "g.json");
  });
}

std::string assignment(const std::string& text) {
  GraphBuilder b;
  b.add_node({});
  b.add_node({});
  const Graph g = b.build();
  return error_of([&] { parse_assignment_json(text, "a.json", &g); });
}

std::string hardware(const std::string& device, const std::string& link) {
  return error_of([&] {
    parse_hardware_profile(
        "{\"format\": \"doppler-hardware\", \"version\": 1, \"name\": \"p\",\n"
        "\"device\": " +
            device +
            ", \"count\": 2,\n"
            "\"topology\": {\"kind\": \"all-to-all\", \"link\": " +
            link + "}}",
        "hw.json");
  });
}

TEST(NumberLimits, ReferenceText) {
  EXPECT_EQ(reference("3\n99999999999999999999,\n\n\n1,4\n"),
            "g.txt:2: input block ids: integer '99999999999999999999' is out of range of int64");
  EXPECT_EQ(reference("2\n\n-99999999999999999999,\n1,\n1,4\n2,8\n"),
            "g.txt:3: edge sources: integer '-99999999999999999999' is out of range of int64");
  EXPECT_EQ(reference("2\n\n0,\n9223372036854775807,\n1,4\n2,8\n"),
            "g.txt:4: edge 0->9223372036854775807: unknown node 9223372036854775807 (valid ids "
            "are 0..1)");
  EXPECT_EQ(reference("1\n\n\n\n1,-1e999\n"),
            "g.txt:5: node 0: transfer cost M: number '-1e999' is out of range of double");
  EXPECT_EQ(reference("1\n\n\n\n1,-nan\n"),
            "g.txt:5: node 0: transfer cost M: expected a number, found NaN");
  EXPECT_EQ(reference("1\n\n\n\n1e-999,0\n"), "<no error>");  // underflow to 0 is harmless
}

TEST(NumberLimits, GraphJson) {
  EXPECT_EQ(graph("[{\"out_bytes\": -1e999}]"),
            "g.json:2: invalid JSON: number overflow parsing '-1e999'");
  EXPECT_EQ(graph("[{}, {}]", "[[0, 1, 1e400]]"),
            "g.json:3: invalid JSON: number overflow parsing '1e400'");
  EXPECT_EQ(graph("[{\"group\": 9223372036854775808}]"),
            "g.json:2: integer 9223372036854775808 is out of range (expected -1..2147483646)");
  EXPECT_EQ(graph("[{}, {}]", "[[0, 18446744073709551616]]"),
            "g.json:3: expected an integer, found 1.8446744073709552e+19");
  EXPECT_EQ(graph("[{\"id\": -9223372036854775809}]"),
            "g.json:2: expected an integer, found -9.223372036854776e+18");
  EXPECT_EQ(graph("[{\"exec\": {\"op\": \"fill\", \"shape\": [99999999999999999999]}}]"),
            "g.json:2: expected an integer, found 1e+20");
  EXPECT_EQ(graph("[{\"exec\": {\"op\": \"fill\", \"attrs\": {\"v\": 1.7e308}}}]"), "<no error>");
}

TEST(NumberLimits, Assignment) {
  const std::string head = "{\"format\": \"doppler-assignment\", \"version\": 1,\n";
  EXPECT_EQ(assignment(head + "\"devices\": 1e999, \"device_of\": [0, 0]}"),
            "a.json:2: invalid JSON: number overflow parsing '1e999'");
  EXPECT_EQ(assignment(head + "\"devices\": 2, \"device_of\": [0, 9223372036854775808]}"),
            "a.json:2: integer 9223372036854775808 is out of range (expected 0..1)");
  EXPECT_EQ(assignment(head + "\"devices\": 2, \"device_of\": [0, 1], \"order\": [0, -1e3]}"),
            "a.json:2: expected an integer, found -1000.0");
  EXPECT_EQ(assignment("{\"format\": \"doppler-assignment\", \"version\": 99999999999999999999}"),
            "a.json:1: expected an integer, found 1e+20");
}

TEST(NumberLimits, HardwareProfile) {
  const std::string link = "{\"bandwidth\": 1e9}";
  EXPECT_EQ(hardware("{\"peak_flops\": {\"f32\": 1e999}}", link),
            "hw.json:2: invalid JSON: number overflow parsing '1e999'");
  EXPECT_EQ(hardware("{\"peak_flops\": {\"f32\": 1e12}, \"slots\": 99999999999999999999}", link),
            "hw.json:2: expected an integer, found 1e+20");
  EXPECT_EQ(hardware("{\"peak_flops\": {\"f32\": 1e12}, \"launch_overhead\": -1e-9}", link),
            "hw.json:2: expected a number >= 0, found -1e-09");
  EXPECT_EQ(hardware("{\"peak_flops\": {\"f32\": 1e12}}", "{\"bandwidth\": 0}"),
            "hw.json:3: bandwidth must be > 0 bytes/s");
  EXPECT_EQ(
      hardware("{\"peak_flops\": {\"f32\": 1e12}}", "{\"bandwidth\": 1e9, \"latency\": 1e400}"),
      "hw.json:3: invalid JSON: number overflow parsing '1e400'");
}

}  // namespace
}  // namespace doppler
