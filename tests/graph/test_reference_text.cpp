// Reference text format: the released graphs load with their documented sizes, the malformed
// catalogue gives precise errors, and text -> JSON -> JSON is stable.
#include <map>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

struct Expected {
  int nodes, edges;
};

// The table of ../shared/reference-graphs/README.md.
const std::map<std::string, Expected> kTable = {
    {"chain_mm_112nodes", {76, 80}},
    {"ffnn_192nodes", {180, 208}},
    {"transformer_block_215nodes", {182, 234}},
    {"full_transformer_layer_261nodes", {229, 284}},
};

TEST(ReferenceText, ReleasedGraphsHaveDocumentedSizes) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  for (const auto& [stem, want] : kTable) {
    for (const std::string prefix : {"", "gdp_"}) {
      const auto path = dir / (prefix + stem + ".txt");
      SCOPED_TRACE(path.string());
      std::vector<std::string> warnings;
      const Graph g = load_graph(path, &warnings);
      EXPECT_EQ(g.num_nodes(), want.nodes);
      EXPECT_EQ(g.num_edges(), want.edges);
      EXPECT_TRUE(warnings.empty());
      EXPECT_TRUE(g.has_reference_costs());
      EXPECT_EQ(g.meta().origin, "reference-text");
      EXPECT_EQ(g.meta().name, prefix + stem);
      for (NodeId v = 0; v < g.num_nodes(); ++v)
        EXPECT_DOUBLE_EQ(*g.node(v).transfer_cost, 4 * *g.node(v).compute_cost);
      if (prefix == "gdp_") {
        int typed = 0;
        for (const Node& n : g.nodes()) typed += n.kind != OpKind::other;
        EXPECT_EQ(typed, g.num_nodes()) << "every gdp_ node carries a type";
      }
    }
  }
}

TEST(ReferenceText, GdpTypesMapToKinds) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  const Graph g = load_graph(dir / "gdp_full_transformer_layer_261nodes.txt");
  std::map<OpKind, int> count;
  for (const Node& n : g.nodes()) ++count[n.kind];
  // Counted independently with `cut -d, -f3 | sort | uniq -c` on the file.
  EXPECT_EQ(count[OpKind::einsum], 166);
  EXPECT_EQ(count[OpKind::aggregate], 46);
  EXPECT_EQ(count[OpKind::complexer], 12);
  EXPECT_EQ(count[OpKind::fill], 2);
  EXPECT_EQ(count[OpKind::select], 2);
  EXPECT_EQ(count[OpKind::squeeze], 1);
}

TEST(ReferenceText, KnownDefectIsTheOnlyEdgeDifference) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  // The README: plain files have one corrupted destination (second entry of line 3).
  const std::map<std::string, std::pair<int, int>> defect = {
      {"chain_mm_112nodes", {6, 16}},
      {"transformer_block_215nodes", {7, 18}},
      {"full_transformer_layer_261nodes", {38, 97}}};
  for (const auto& [stem, fix] : defect) {
    const Graph plain = load_graph(dir / (stem + ".txt"));
    const Graph gdp = load_graph(dir / ("gdp_" + stem + ".txt"));
    int only_plain = 0, only_gdp = 0;
    for (const Edge& e : plain.edges()) only_plain += gdp.find_edge(e.src, e.dst) < 0;
    for (const Edge& e : gdp.edges()) only_gdp += plain.find_edge(e.src, e.dst) < 0;
    EXPECT_EQ(only_plain, 1) << stem;
    EXPECT_EQ(only_gdp, 1) << stem;
    const int src = stem == "chain_mm_112nodes" ? 1 : 0;
    EXPECT_GE(plain.find_edge(src, fix.first), 0) << stem;
    EXPECT_GE(gdp.find_edge(src, fix.second), 0) << stem;
  }
}

TEST(ReferenceText, RoundTripTextJsonJsonIsIdentical) {
  DOPPLER_REQUIRE_REFERENCE_GRAPHS(dir);
  for (const auto& [stem, want] : kTable) {
    const Graph g = load_graph(dir / ("gdp_" + stem + ".txt"));
    const std::string j1 = format_graph_json(g);
    const Graph g2 = parse_graph_json(j1, "round-trip.json");
    const std::string j2 = format_graph_json(g2);
    EXPECT_EQ(j1, j2) << stem;
    ASSERT_EQ(g2.num_nodes(), want.nodes);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      EXPECT_EQ(g.node(v).kind, g2.node(v).kind);
      EXPECT_EQ(g.node(v).compute_cost, g2.node(v).compute_cost);
      EXPECT_EQ(g.node(v).transfer_cost, g2.node(v).transfer_cost);
    }
    // And back to text: the same nodes and edges again.
    const Graph g3 = parse_reference_text(format_reference_text(g2), "again.txt");
    ASSERT_EQ(g3.num_nodes(), g.num_nodes());
    ASSERT_EQ(g3.num_edges(), g.num_edges());
    for (EdgeId e = 0; e < g.num_edges(); ++e) {
      EXPECT_EQ(g3.edge(e).src, g.edge(e).src);
      EXPECT_EQ(g3.edge(e).dst, g.edge(e).dst);
    }
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      EXPECT_EQ(g3.node(v).kind, g.node(v).kind);
      EXPECT_EQ(g3.node(v).compute_cost, g.node(v).compute_cost);
    }
  }
}

TEST(ReferenceText, AcceptsCrlfTrailingCommasAndBlankTail) {
  const std::string text =
      "5\r\n0, 1,\r\n0, 0, 1,\r\n1, 2, 2,\r\n3,12\r\n5,20,einsummable\r\n1,4,formation\r\n\r\n\r\n";
  const Graph g = parse_reference_text(text, "crlf.txt");
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.num_edges(), 3);
  EXPECT_EQ(g.node(1).kind, OpKind::einsum);
  EXPECT_EQ(g.node(2).kind, OpKind::aggregate);
  EXPECT_EQ(*g.node(0).compute_cost, 3);
  EXPECT_EQ(*g.node(1).transfer_cost, 20);
}

TEST(ReferenceText, AcceptsNoInputs) {
  const Graph g = parse_reference_text("2\n\n0,\n1,\n1,4\n2,8\n", "x.txt");
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.num_edges(), 1);
}

TEST(ReferenceText, DuplicateEdgeCollapsesWithWarning) {
  std::vector<std::string> warnings;
  const Graph g = parse_reference_text("2\n\n0, 0,\n1, 1,\n1,4\n2,8\n", "dup.txt", &warnings);
  EXPECT_EQ(g.num_edges(), 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("1 duplicate edge(s) collapsed"), std::string::npos);
}

struct BadCase {
  const char* name;
  const char* text;
  const char* error;  // expected full message (file "bad.txt")
};

// Each malformed input gives exactly this one-line error.
const BadCase kBad[] = {
    {"empty", "", "bad.txt: empty file, expected the total block count on line 1"},
    {"blank_only", "\n \n", "bad.txt: empty file, expected the total block count on line 1"},
    {"truncated_header", "3\n0,\n",
     "bad.txt:3: truncated file: expected at least 4 header lines (count, inputs, sources, "
     "destinations), found 2"},
    {"truncated_nodes", "3\n\n0,\n1,\n1,4\n",
     "bad.txt:6: truncated file: expected 3 node lines (T=3 minus 0 inputs), found 1"},
    {"extra_node_line", "1\n\n\n\n1,4\n2,8\n",
     "bad.txt:6: unexpected line: the header announces 1 nodes (T=1 minus 0 inputs), found 2 "
     "node lines"},
    {"count_not_numeric", "abc\n\n\n\n",
     "bad.txt:1: total block count: expected an integer, found 'abc'"},
    {"count_negative", "-2\n\n\n\n",
     "bad.txt:1: total block count -2 is out of range (0..50000000)"},
    {"count_overflow", "99999999999999999999\n\n\n\n",
     "bad.txt:1: total block count: integer '99999999999999999999' is out of range of int64"},
    {"input_id_out_of_range", "2\n5,\n\n\n1,4\n",
     "bad.txt:2: input block id 5 is out of range (0..1)"},
    {"input_listed_twice", "3\n0, 0,\n\n\n1,4\n", "bad.txt:2: input block id 0 is listed twice"},
    {"source_not_numeric", "2\n\n0, x,\n1, 1,\n1,4\n2,8\n",
     "bad.txt:3: edge sources: expected an integer, found 'x'"},
    {"edge_count_mismatch", "2\n\n0, 0,\n1,\n1,4\n2,8\n",
     "bad.txt:4: line 3 has 2 edge sources but line 4 has 1 destinations"},
    {"edge_to_unknown_node", "2\n\n0,\n7,\n1,4\n2,8\n",
     "bad.txt:4: edge 0->7: unknown node 7 (valid ids are 0..1)"},
    {"edge_from_unknown_node", "2\n\n-1,\n1,\n1,4\n2,8\n",
     "bad.txt:3: edge -1->1: unknown node -1 (valid ids are 0..1)"},
    {"self_loop", "2\n\n1,\n1,\n1,4\n2,8\n", "bad.txt:3: edge 1->1 is a self-loop"},
    {"cycle", "3\n\n0, 1, 2,\n1, 2, 0,\n1,4\n2,8\n3,12\n",
     "bad.txt: the graph has a cycle: 0 -> 1 -> 2 -> 0"},
    {"cost_not_numeric", "1\n\n\n\n1,four\n",
     "bad.txt:5: node 0: transfer cost M: expected a number, found 'four'"},
    {"cost_negative", "1\n\n\n\n-1,4\n", "bad.txt:5: node 0: compute cost C is negative (-1)"},
    {"cost_nan", "1\n\n\n\nnan,4\n",
     "bad.txt:5: node 0: compute cost C: expected a number, found NaN"},
    {"cost_inf", "1\n\n\n\n1,inf\n",
     "bad.txt:5: node 0: transfer cost M: expected a finite number, found 'inf'"},
    {"cost_overflow", "1\n\n\n\n1e999,4\n",
     "bad.txt:5: node 0: compute cost C: number '1e999' is out of range of double"},
    {"too_few_fields", "1\n\n\n\n7\n",
     "bad.txt:5: node 0: expected 'C,M' or 'C,M,type', found 1 field(s)"},
    {"too_many_fields", "1\n\n\n\n1,2,einsummable,9\n",
     "bad.txt:5: node 0: expected 'C,M' or 'C,M,type', found 4 field(s)"},
    {"unknown_type", "1\n\n\n\n1,4,matmul\n",
     "bad.txt:5: node 0: unknown op type 'matmul' (expected one of input, formation, complexer, "
     "squeezer, fill, select, einsummable)"},
    {"binary_garbage", "\x01\x02\x03\n\n\n\n",
     "bad.txt:1: total block count: expected an integer, found '\?\?\?'"},
};

void PrintTo(const BadCase& c, std::ostream* os) {
  *os << c.name;
}

class ReferenceTextBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(ReferenceTextBad, GivesTheExpectedError) {
  const BadCase& c = GetParam();
  try {
    parse_reference_text(c.text, "bad.txt");
    FAIL() << "no error for " << c.name;
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), c.error);
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line";
  }
}

INSTANTIATE_TEST_SUITE_P(Catalogue, ReferenceTextBad, ::testing::ValuesIn(kBad),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(ReferenceText, CatalogueIsLargeEnough) {
  EXPECT_GE(std::size(kBad), 15u);
}

}  // namespace
}  // namespace doppler
