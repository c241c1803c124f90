// Assignment JSON input/output and validation.
#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

Graph three_nodes() {
  GraphBuilder b;
  for (int i = 0; i < 3; ++i) b.add_node({});
  b.add_edge(0, 1);
  b.add_edge(1, 2);
  return b.build();
}

TEST(AssignmentJson, RoundTrip) {
  const Graph g = three_nodes();
  Assignment a{2, {0, 1, 1}, {0, 1, 2}, "test"};
  const Assignment b = parse_assignment_json(format_assignment_json(a), "a.json", &g, 2);
  EXPECT_EQ(b.devices, 2);
  EXPECT_EQ(b.device_of, a.device_of);
  EXPECT_EQ(b.order, a.order);
  EXPECT_EQ(b.method, "test");
}

TEST(AssignmentJson, BareArrayTakesDevicesFromCallerOrMaximum) {
  const Graph g = three_nodes();
  EXPECT_EQ(parse_assignment_json("[0, 2, 1]", "a.json", &g).devices, 3);
  EXPECT_EQ(parse_assignment_json("[0, 2, 1]", "a.json", &g, 4).devices, 4);
  EXPECT_THROW(parse_assignment_json("[0, 2, 1]", "a.json", &g, 2), InputError);
}

TEST(AssignmentJson, Errors) {
  const Graph g = three_nodes();
  const auto err = [&](const char* text, int devices) {
    try {
      parse_assignment_json(text, "a.json", &g, devices);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(err("[0, 1]", 2), "a.json:1: assignment has 2 entries, the graph has 3 nodes");
  EXPECT_EQ(err("[0, 1, 5]", 2), "a.json:1: integer 5 is out of range (expected 0..1)");
  EXPECT_EQ(err("[0, -1, 0]", 0), "a.json:1: integer -1 is out of range (expected 0..1023)");
  EXPECT_EQ(err("{\"format\": \"doppler-assignment\", \"version\": 1,\n\"devices\": 4, "
                "\"device_of\": [0,1,2]}",
                2),
            "a.json:2: assignment is for 4 devices, but 2 were requested");
  EXPECT_EQ(err("{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": "
                "2,\n\"device_of\": [0,1,1],\n\"order\": [0, 0, 1]}",
                2),
            "a.json:2: order names node 0 twice");
  EXPECT_EQ(err("{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": 2000, "
                "\"device_of\": []}",
                0),
            "a.json:1: integer 2000 is out of range (expected 1..1024)");
  EXPECT_EQ(err("{\"format\": \"doppler-assignment\", \"version\": 1, \"devices\": 2}", 0),
            "a.json:1: missing field 'device_of'");
  EXPECT_EQ(err("not json", 0).substr(0, 22), "a.json:1: invalid JSON");
}

TEST(Assignment, OpsPerDevice) {
  Assignment a{3, {0, 2, 2, 0, 2}, {}, ""};
  EXPECT_EQ(a.ops_per_device(), (std::vector<int>{2, 0, 3}));
}

}  // namespace
}  // namespace doppler
