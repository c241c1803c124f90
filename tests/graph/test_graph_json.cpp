// doppler-graph JSON: full round trip (exec descriptions included) and a catalogue of malformed
// documents with the line of each error.
#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

Graph rich_graph() {
  GraphBuilder b;
  Node in;
  in.name = "A[0]";
  in.kind = OpKind::input;
  in.out_bytes = 64;
  in.group = 0;
  in.exec = ExecDesc{"input", {4, 4}, {0, 0}, {}, "", {{"seed", 3}}};
  b.add_node(in);
  Node mm;
  mm.name = "mm \"quoted\"";
  mm.kind = OpKind::einsum;
  mm.flops = 128.5;
  mm.out_bytes = 64;
  mm.group = 1;
  mm.compute_cost = 1e12;
  mm.transfer_cost = 4e12;
  mm.exec =
      ExecDesc{"einsum",          {4, 4}, {4, 0}, {{0, {}, {}}, {0, {0, 0}, {4, 2}}}, "ij,jk->ik",
               {{"scale", 0.125}}};
  b.add_node(mm);
  b.add_edge(0, 1, 32.0);
  b.set_meta({"rich", "generated", {{"n", "4"}, {"dtype", "f32"}}});
  return b.build();
}

TEST(GraphJson, RoundTripKeepsEverything) {
  const Graph g = rich_graph();
  const std::string j1 = format_graph_json(g);
  const Graph g2 = parse_graph_json(j1, "rich.json");
  EXPECT_EQ(format_graph_json(g2), j1);
  ASSERT_EQ(g2.num_nodes(), 2);
  EXPECT_EQ(g2.node(1).name, "mm \"quoted\"");
  EXPECT_EQ(g2.node(1).flops, 128.5);
  EXPECT_EQ(g2.node(1).group, 1);
  EXPECT_EQ(*g2.node(1).compute_cost, 1e12);
  EXPECT_EQ(g2.node(1).exec, g.node(1).exec);
  EXPECT_EQ(g2.node(0).exec, g.node(0).exec);
  EXPECT_FALSE(g2.node(0).compute_cost.has_value());
  EXPECT_EQ(*g2.edge(0).bytes, 32.0);
  EXPECT_EQ(g2.meta().name, "rich");
  EXPECT_EQ(g2.meta().params.at("dtype"), "f32");
}

TEST(GraphJson, AttributesInAnyOrderRoundTripToTheSameText) {
  // Generators list attributes in their own order (input: seed, scale, offset); the reader
  // returns them by name, so the writer must too for a written graph to read back identically.
  GraphBuilder b;
  Node in;
  in.name = "x[0]";
  in.kind = OpKind::input;
  in.out_bytes = 16;
  in.exec = ExecDesc{"input", {4}, {0}, {}, "", {{"seed", 3}, {"scale", 2}, {"offset", -1}}};
  b.add_node(in);
  const Graph g = b.build();
  const std::string j1 = format_graph_json(g);
  EXPECT_LT(j1.find("\"offset\""), j1.find("\"seed\""));
  const Graph g2 = parse_graph_json(j1, "attrs.json");
  EXPECT_EQ(format_graph_json(g2), j1);
  EXPECT_EQ(g2.node(0).exec->attr("seed", 0), 3);
  EXPECT_EQ(g2.node(0).exec->attr("scale", 0), 2);
  EXPECT_EQ(g2.node(0).exec->attr("offset", 0), -1);
}

struct BadJson {
  const char* name;
  const char* text;
  const char* error;
};

void PrintTo(const BadJson& c, std::ostream* os) {
  *os << c.name;
}

#define HEAD "{\n\"format\": \"doppler-graph\",\n\"version\": 1,\n"
const BadJson kBad[] = {
    {"empty", "", "g.json: empty file, expected a JSON document"},
    {"syntax", "{\n\"format\": \"doppler-graph\",\n\"version\": 1,,\n}",
     "g.json:3: invalid JSON: syntax error while parsing object key - unexpected ','; expected "
     "string literal"},
    {"not_object", "[1, 2]", "g.json:1: expected an object, found array"},
    {"wrong_format", "{\"format\": \"doppler-assignment\", \"version\": 1}",
     "g.json:1: expected format \"doppler-graph\", found \"doppler-assignment\""},
    {"future_version", "{\"format\": \"doppler-graph\",\n\"version\": 7}",
     "g.json:2: version 7 is newer than this Doppler supports (1)"},
    {"missing_nodes", HEAD "\"edges\": []\n}", "g.json:1: missing field 'nodes'"},
    {"id_out_of_order", HEAD "\"nodes\": [\n{\"id\": 0},\n{\"id\": 5}\n]\n}",
     "g.json:6: node ids must be 0..N-1 in order: expected id 1, found 5"},
    {"unknown_kind", HEAD "\"nodes\": [\n{\"id\": 0, \"kind\": \"conv\"}\n]\n}",
     "g.json:5: node 0: unknown kind \"conv\""},
    {"negative_flops", HEAD "\"nodes\": [\n{\"id\": 0,\n \"flops\": -3}\n]\n}",
     "g.json:6: expected a number >= 0, found -3"},
    {"string_bytes", HEAD "\"nodes\": [\n{\"id\": 0, \"out_bytes\": \"8\"}\n]\n}",
     "g.json:5: expected a number, found string"},
    {"overflow", HEAD "\"nodes\": [\n{\"id\": 0, \"flops\": 1e999}\n]\n}",
     "g.json:5: invalid JSON: number overflow parsing '1e999'"},
    {"unknown_node_field", HEAD "\"nodes\": [\n{\"id\": 0, \"colour\": 1}\n]\n}",
     "g.json:5: node 0: unknown field 'colour'"},
    {"edge_unknown_node", HEAD "\"nodes\": [{\"id\": 0}],\n\"edges\": [\n[0, 3]\n]\n}",
     "g.json:6: edge 0->3: unknown node 3 (valid ids are 0..0)"},
    {"edge_wrong_shape", HEAD "\"nodes\": [{\"id\": 0}],\n\"edges\": [\n[0]\n]\n}",
     "g.json:6: edge: expected [src, dst], [src, dst, bytes] or [src, dst, {\"bytes\": b, "
     "\"transfer_cost\": c}], found an array of 1"},
    {"edge_fractional_id", HEAD "\"nodes\": [{}, {}],\n\"edges\": [\n[0, 1.5]\n]\n}",
     "g.json:6: expected an integer, found 1.5"},
    {"self_loop", HEAD "\"nodes\": [{}],\n\"edges\": [[0, 0]]\n}",
     "g.json:5: edge 0->0 is a self-loop"},
    {"cycle", HEAD "\"nodes\": [{}, {}],\n\"edges\": [[0, 1], [1, 0]]\n}",
     "g.json: the graph has a cycle: 0 -> 1 -> 0"},
    {"exec_reads_non_predecessor",
     HEAD "\"nodes\": [{},\n{\"exec\": {\"op\": \"relu\", \"inputs\": [{\"src\": 0}]}}]\n}",
     "g.json:5: node 1: exec reads node 0 but there is no edge 0->1"},
    {"group_too_small", HEAD "\"nodes\": [{\"group\": -2}]\n}",
     "g.json:4: integer -2 is out of range (expected -1..2147483646)"},
    {"unknown_top_field", HEAD "\"nodes\": [],\n\"extra\": 1\n}",
     "g.json:5: unknown field 'extra'"},
};
#undef HEAD

class GraphJsonBad : public ::testing::TestWithParam<BadJson> {};

TEST_P(GraphJsonBad, GivesTheExpectedError) {
  const BadJson& c = GetParam();
  try {
    parse_graph_json(c.text, "g.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), c.error);
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, GraphJsonBad, ::testing::ValuesIn(kBad),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace doppler
