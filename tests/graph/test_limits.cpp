// Size limits of the readers (ReadLimits: ops, edges, entries per assignment) and the device
// count 1..1024 at every entry point: each violation is one "FILE:LINE: problem" InputError.
#include <functional>
#include <string>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

using test::error_of;

ReadLimits small(std::int64_t ops, std::int64_t edges) {
  ReadLimits l;
  l.max_ops = ops;
  l.max_edges = edges;
  return l;
}

Graph chain(int n) {
  GraphBuilder b;
  for (int i = 0; i < n; ++i) b.add_node({});
  for (int i = 0; i + 1 < n; ++i) b.add_edge(i, i + 1);
  return b.build();
}

TEST(ReaderLimits, ReferenceTextOpsAndEdges) {
  const std::string three = "3\n\n0, 1,\n1, 2,\n1,4\n2,8\n3,12\n";
  const auto parse = [](const std::string& t, ReadLimits l) {
    return [t, l] { parse_reference_text(t, "g.txt", nullptr, l); };
  };
  EXPECT_EQ(error_of(parse(three, small(3, 2))), "");
  EXPECT_EQ(error_of(parse(three, small(2, 2))),
            "g.txt:1: total block count 3 minus 0 input blocks is more than 2 ops, the limit "
            "(raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of(parse(three, small(3, 1))),
            "g.txt:3: more than 1 edges, the limit (raise it with DOPPLER_MAX_EDGES)");
  // Input blocks do not count as ops: T=4 with one input is 3 ops.
  EXPECT_EQ(error_of(parse("4\n3,\n0, 1,\n1, 2,\n1,4\n2,8\n3,12\n", small(3, 2))), "");
  // A huge announced count fails on line 1 before anything is allocated.
  EXPECT_EQ(error_of(parse("40000000\n\n\n\n", ReadLimits{})),
            "g.txt:1: total block count 40000000 minus 0 input blocks is more than 5000000 ops, "
            "the limit (raise it with DOPPLER_MAX_OPS)");
  // Lines are not even split beyond the limit (a file of millions of empty lines).
  EXPECT_EQ(error_of(parse("3\n\n\n\n" + std::string(1000, '\n') + "1,1\n", small(3, 2))),
            "g.txt:8: more than 3 node lines, the limit (raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of(parse(three + std::string(1000, '\n'), small(3, 2))), "");
  EXPECT_EQ(error_of(parse("60000000\n\n\n\n", ReadLimits{})),
            "g.txt:1: total block count 60000000 is out of range (0..50000000)");
}

TEST(ReaderLimits, GraphJsonNodesAndEdges) {
  const std::string g =
      "{\"format\": \"doppler-graph\", \"version\": 1,\n"
      "\"nodes\": [{}, {}, {}],\n"
      "\"edges\": [[0, 1], [1, 2], [0, 2]]}";
  const auto parse = [&](ReadLimits l) {
    return [&g, l] { parse_graph_json(g, "g.json", nullptr, l); };
  };
  EXPECT_EQ(error_of(parse(small(3, 3))), "");
  EXPECT_EQ(error_of(parse(small(2, 3))),
            "g.json:2: more than 2 nodes, the limit (raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of(parse(small(3, 2))),
            "g.json:3: more than 2 edges, the limit (raise it with DOPPLER_MAX_EDGES)");
}

TEST(ReaderLimits, AssignmentEntries) {
  const Graph g = chain(3);
  const auto parse = [&](const std::string& t, std::int64_t ops) {
    return [&g, t, ops] { parse_assignment_json(t, "a.json", &g, 0, small(ops, 10)); };
  };
  EXPECT_EQ(error_of(parse("[0, 1, 0]", 3)), "");
  EXPECT_EQ(error_of(parse("[0, 1, 0]", 2)),
            "a.json:1: more than 2 entries, the limit (raise it "
            "with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of(parse("{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": 2,\n"
                           "\"device_of\": [0, 1, 0]}",
                           2)),
            "a.json:2: more than 2 entries, the limit (raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of(parse("{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": 2,\n"
                           "\"device_of\": [0, 1],\n\"order\": [0, 1, 2]}",
                           2)),
            "a.json:3: more than 2 entries, the limit (raise it with DOPPLER_MAX_OPS)");
  EXPECT_EQ(error_of([&] {
              parse_assignments_jsonl("[0, 1, 0]\n[0, 0, 0, 1]\n", "a.jsonl", g, 0, small(3, 10));
            }),
            "a.jsonl:2: more than 3 entries, the limit (raise it with DOPPLER_MAX_OPS)");
}

const char* kDevice = "\"device\": {\"peak_flops\": {\"f32\": 1e12}}";

std::string profile(const std::string& devices, const std::string& topology) {
  return "{\"format\": \"doppler-hardware\", \"version\": 1, \"name\": \"p\",\n" + devices +
         ",\n\"topology\": " + topology + "}";
}

TEST(DeviceCount, EveryEntryPointEnforces1To1024) {
  const Graph g = chain(2);
  // Assignment files.
  const auto assignment = [&](const std::string& t, int devices) {
    return [&g, t, devices] { parse_assignment_json(t, "a.json", &g, devices); };
  };
  const std::string head = "{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": ";
  EXPECT_EQ(error_of(assignment(head + "0, \"device_of\": [0, 0]}", 0)),
            "a.json:1: integer 0 is out of range (expected 1..1024)");
  EXPECT_EQ(error_of(assignment(head + "1025, \"device_of\": [0, 0]}", 0)),
            "a.json:1: integer 1025 is out of range (expected 1..1024)");
  EXPECT_EQ(error_of(assignment(head + "1024, \"device_of\": [1023, 0]}", 0)), "");
  EXPECT_EQ(error_of(assignment("[1024, 0]", 0)),
            "a.json:1: integer 1024 is out of range (expected 0..1023)");
  // Hardware profiles: count, explicit device lists, and rings.
  const std::string a2a = "{\"kind\": \"all-to-all\", \"link\": {\"bandwidth\": 1e9}}";
  const auto hw = [](const std::string& t) {
    return [t] { parse_hardware_profile(t, "hw.json"); };
  };
  EXPECT_EQ(error_of(hw(profile(std::string(kDevice) + ", \"count\": 0", a2a))),
            "hw.json:2: integer 0 is out of range (expected 1..1024)");
  EXPECT_EQ(error_of(hw(profile(std::string(kDevice) + ", \"count\": 1025", a2a))),
            "hw.json:2: integer 1025 is out of range (expected 1..1024)");
  std::string list = "\"devices\": [";
  for (int i = 0; i < 1025; ++i)
    list += std::string(i ? ", " : "") + "{\"peak_flops\": {\"f32\": 1}}";
  EXPECT_EQ(error_of(hw(profile(list + "]", a2a))), "hw.json:2: more than 1024 devices, the limit");
  EXPECT_EQ(error_of(hw(profile("\"devices\": []", a2a))),
            "hw.json:2: a profile needs 1..1024 devices");
  const std::string ring = "{\"kind\": \"ring\", \"link\": {\"bandwidth\": 1e9}}";
  EXPECT_EQ(error_of(hw(profile(std::string(kDevice) + ", \"count\": 256", ring))), "");
  EXPECT_EQ(error_of(hw(profile(std::string(kDevice) + ", \"count\": 257", ring))),
            "hw.json:3: a ring topology supports at most 256 devices, the profile has 257");
  // Platforms.
  EXPECT_EQ(error_of([] { Platform::reference(0); }), "device count 0 is out of range (1..1024)");
  EXPECT_EQ(error_of([] { Platform::reference(1025); }),
            "device count 1025 is out of range (1..1024)");
  EXPECT_EQ(error_of([] { Platform::reference(1024); }), "");
  HardwareProfile four =
      parse_hardware_profile(profile(std::string(kDevice) + ", \"count\": 4", a2a), "hw.json");
  EXPECT_EQ(error_of([&] { Platform::hardware(four, 5); }),
            "hardware profile 'p' has 4 devices, 5 requested");
  EXPECT_EQ(error_of([&] { Platform::hardware(four, 0); }),
            "hardware profile 'p' has 4 devices, 0 requested");
  // Assignments built in code.
  Assignment a;
  a.devices = 1025;
  a.device_of = {0, 0};
  EXPECT_EQ(error_of([&] { a.validate(g); }), "device count 1025 is out of range (1..1024)");
}

}  // namespace
}  // namespace doppler
