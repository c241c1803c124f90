// Policy inputs: static features, path node sets (checked against a brute-force longest path)
// and device features (by hand).
#include <functional>
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/features.hpp"

namespace doppler {
namespace {

double path_length(const Graph& g, const CostModel& c, const std::vector<int>& path) {
  double len = 0;
  for (std::size_t i = 0; i < path.size(); ++i) {
    len += c.compute(path[i]);
    if (i + 1 < path.size()) len += c.transfer(g.find_edge(path[i], path[i + 1]));
  }
  return len;
}

// Longest path from v to an exit (and from an entry to v) by enumeration.
double brute_down(const Graph& g, const CostModel& c, NodeId v) {
  double best = c.compute(v);
  const auto succ = g.successors(v);
  for (std::size_t i = 0; i < succ.size(); ++i)
    best = std::max(best, c.compute(v) + c.transfer(g.out_edge_begin(v) + static_cast<EdgeId>(i)) +
                              brute_down(g, c, succ[i]));
  return best;
}
double brute_up(const Graph& g, const CostModel& c, NodeId v) {
  double best = c.compute(v);
  for (EdgeId e : g.in_edges(v))
    best = std::max(best, brute_up(g, c, g.edge(e).src) + c.transfer(e) + c.compute(v));
  return best;
}

TEST(Features, PathsAreTheLongestPathsAndBelongToTheirNode) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 100; ++trial) {
    const Graph g = test::random_dag(rng, {1 + static_cast<int>(rng() % 14), 0.3, 9, 9, true});
    const Problem problem(g, Platform::reference(2));
    const GraphFeatures f = graph_features(g, problem.cost(), problem.analysis());
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto b = path_to_exit(f, v);
      const auto t = path_from_entry(f, v);
      ASSERT_FALSE(b.empty());
      EXPECT_EQ(b.front(), v) << "b-path starts at its own node";
      EXPECT_TRUE(g.successors(b.back()).empty());
      EXPECT_EQ(t.back(), v) << "t-path ends at its own node";
      EXPECT_TRUE(g.predecessors(t.front()).empty());
      for (std::size_t i = 0; i + 1 < b.size(); ++i) EXPECT_GE(g.find_edge(b[i], b[i + 1]), 0);
      for (std::size_t i = 0; i + 1 < t.size(); ++i) EXPECT_GE(g.find_edge(t[i], t[i + 1]), 0);
      EXPECT_DOUBLE_EQ(path_length(g, problem.cost(), b), brute_down(g, problem.cost(), v));
      EXPECT_DOUBLE_EQ(path_length(g, problem.cost(), t), brute_up(g, problem.cost(), v));
    }
  }
}

TEST(Features, StaticFeaturesAreZScoredColumns) {
  // a (2, 1) -> b (3, 2): compute 2, 3; b-level 6, 3; t-level 0, 3; in 0, 1; out 1, 0.
  const Graph g = test::ref_graph({{2, 1}, {3, 2}}, {{0, 1}});
  const Problem problem(g, Platform::reference(2));
  const GraphFeatures f = graph_features(g, problem.cost(), problem.analysis());
  // Two rows: every column becomes (-1, +1) or (+1, -1) (up to the 1e-6 in the denominator).
  const float expected[2][5] = {{-1, 1, -1, -1, 1}, {1, -1, 1, 1, -1}};
  for (int r = 0; r < 2; ++r)
    for (int c = 0; c < kNodeFeatures; ++c)
      EXPECT_NEAR(f.node[static_cast<std::size_t>(r * 5 + c)], expected[r][c], 1e-5);
  ASSERT_EQ(f.edge_src.size(), 2u);
  EXPECT_EQ(f.edge_src[0], 0);
  EXPECT_EQ(f.edge_dst[0], 1);
  EXPECT_EQ(f.edge_src[1], 1);  // the reverse direction
  EXPECT_EQ(f.edge_dst[1], 0);
}

// c (4) and a (2, transfer 5) on devices 1 and 0; b reads both. Device features of b:
// loads (2, 4); parent compute (2, 4); parents' earliest start (0, 0); latest finish (2, 4);
// earliest start of b: device 0 = max(2, 4 + 3 (c's transfer 3), 2) = 7; device 1 = max(2 + 5, 4)
// = 7.
TEST(Features, DeviceFeaturesByHand) {
  const Graph g = test::ref_graph({{2, 5}, {1, 0}, {4, 3}}, {{0, 1}, {2, 1}});
  const Problem problem(g, Platform::reference(2));
  ListSchedule s(g, problem.cost(), 2);
  s.place(0, 0);
  s.place(2, 1);
  const auto y = device_features(s, 1);
  const std::vector<float> want = {2, 2, 0, 2, 7, 4, 4, 0, 4, 7};
  EXPECT_EQ(y, want);
}

// Deferred inputs are not placed when their consumer is evaluated: they count for nothing.
TEST(Features, DeferredInputsAreIgnored) {
  GraphBuilder b;
  Node in;
  in.kind = OpKind::input;
  in.compute_cost = 0;
  in.transfer_cost = 100;
  b.add_node(in);
  Node op;
  op.compute_cost = 3;
  op.transfer_cost = 1;
  b.add_node(op);
  b.add_edge(0, 1);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  ListSchedule s(g, problem.cost(), 2, /*defer_inputs=*/true);
  ASSERT_EQ(s.candidates(), std::vector<NodeId>{1});
  EXPECT_EQ(device_features(s, 1), std::vector<float>(10, 0.0f));
}

}  // namespace
}  // namespace doppler
