// GraphBuilder validation, CSR adjacency and topological order.
#include <set>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"

namespace doppler {
namespace {

Node named(const std::string& name) {
  Node n;
  n.name = name;
  return n;
}

TEST(Builder, CsrMatchesEdges) {
  std::mt19937_64 rng(3);
  for (int t = 0; t < 50; ++t) {
    const Graph g = test::random_dag(rng, {30, 0.2, 5, 5, true});
    int seen = 0;
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto succ = g.successors(v);
      for (std::size_t i = 0; i < succ.size(); ++i) {
        const Edge& e = g.edge(g.out_edge_begin(v) + static_cast<EdgeId>(i));
        EXPECT_EQ(e.src, v);
        EXPECT_EQ(e.dst, succ[i]);
        ++seen;
      }
      const auto pred = g.predecessors(v);
      const auto in = g.in_edges(v);
      ASSERT_EQ(pred.size(), in.size());
      for (std::size_t i = 0; i < pred.size(); ++i) {
        EXPECT_EQ(g.edge(in[i]).src, pred[i]);
        EXPECT_EQ(g.edge(in[i]).dst, v);
        if (i) {
          EXPECT_LT(pred[i - 1], pred[i]);
        }
      }
      EXPECT_EQ(g.sources().end() != std::find(g.sources().begin(), g.sources().end(), v),
                pred.empty());
      EXPECT_EQ(g.sinks().end() != std::find(g.sinks().begin(), g.sinks().end(), v), succ.empty());
    }
    EXPECT_EQ(seen, g.num_edges());
    // Topological order: a permutation where every edge goes forward.
    const auto& rank = g.topo_rank();
    std::set<NodeId> all(g.topo_order().begin(), g.topo_order().end());
    EXPECT_EQ(static_cast<int>(all.size()), g.num_nodes());
    for (const Edge& e : g.edges())
      EXPECT_LT(rank[static_cast<std::size_t>(e.src)], rank[static_cast<std::size_t>(e.dst)]);
  }
}

TEST(Builder, DuplicateEdgesCollapseKeepingTheLargestBytes) {
  GraphBuilder b;
  b.add_node({});
  b.add_node({});
  b.add_edge(0, 1, 10.0);
  b.add_edge(0, 1, 30.0);
  b.add_edge(0, 1);
  const Graph g = b.build();
  EXPECT_EQ(g.num_edges(), 1);
  EXPECT_EQ(b.duplicates_collapsed(), 2);
  EXPECT_EQ(g.edge_bytes(0), 30.0);
}

TEST(Builder, EdgeBytesDefaultToProducerOutput) {
  GraphBuilder b;
  Node n;
  n.out_bytes = 64;
  b.add_node(n);
  b.add_node({});
  b.add_edge(0, 1);
  const Graph g = b.build();
  EXPECT_EQ(g.edge_bytes(0), 64);
  EXPECT_EQ(g.find_edge(0, 1), 0);
  EXPECT_EQ(g.find_edge(1, 0), -1);
}

TEST(Builder, CycleErrorNamesTheOpsOnOneCycle) {
  GraphBuilder b;
  for (const char* name : {"src", "a", "b", "c", "tail"}) b.add_node(named(name));
  b.add_edge(0, 1);
  b.add_edge(1, 2);
  b.add_edge(2, 3);
  b.add_edge(3, 1);
  b.add_edge(3, 4);
  try {
    b.build();
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_STREQ(e.what(), "the graph has a cycle: 1(a) -> 2(b) -> 3(c) -> 1");
  }
}

TEST(Builder, RejectsBadNumbersAndEnds) {
  const auto expect_error = [](const std::function<void(GraphBuilder&)>& setup, const char* msg) {
    GraphBuilder b;
    b.add_node({});
    b.add_node({});
    setup(b);
    try {
      b.build();
      ADD_FAILURE() << "no error, expected: " << msg;
    } catch (const GraphError& e) {
      EXPECT_STREQ(e.what(), msg);
    }
  };
  expect_error([](GraphBuilder& b) { b.node(1).flops = -1; }, "node 1: flops is negative (-1)");
  expect_error([](GraphBuilder& b) { b.node(0).out_bytes = std::nan(""); },
               "node 0: out_bytes is NaN");
  expect_error([](GraphBuilder& b) { b.node(0).compute_cost = HUGE_VAL; },
               "node 0: compute_cost is infinite");
  expect_error([](GraphBuilder& b) { b.add_edge(0, 2); },
               "edge 0->2: unknown node 2 (valid ids are 0..1)");
  expect_error([](GraphBuilder& b) { b.add_edge(1, 1); }, "edge 1->1 is a self-loop");
  expect_error([](GraphBuilder& b) { b.add_edge(0, 1, -5.0); },
               "edge 0->1: bytes must be finite and >= 0, found -5");
}

TEST(Builder, EmptyGraphIsValid) {
  GraphBuilder b;
  const Graph g = b.build();
  EXPECT_EQ(g.num_nodes(), 0);
  EXPECT_TRUE(g.topo_order().empty());
}

}  // namespace
}  // namespace doppler
