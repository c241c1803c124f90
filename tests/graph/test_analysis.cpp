// b-level, t-level, critical path, lower bound and levels: hand-computed small DAGs and
// properties on random DAGs checked against a brute-force path enumeration.
#include <functional>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/graph_builder.hpp"

namespace doppler {
namespace {

Graph make(const std::vector<std::pair<double, double>>& costs,
           const std::vector<std::pair<int, int>>& edges) {
  GraphBuilder b;
  for (const auto& [c, m] : costs) {
    Node n;
    n.compute_cost = c;
    n.transfer_cost = m;
    b.add_node(n);
  }
  for (const auto& [u, v] : edges) b.add_edge(u, v);
  return b.build();
}

// Diamond a -> {b, c} -> d. Costs (C, M): a (2,1), b (3,2), c (1,5), d (4,0).
// b-level: d = 4, b = 3 + 2 + 4 = 9, c = 1 + 5 + 4 = 10, a = 2 + max(1 + 9, 1 + 10) = 13.
// t-level: a = 0, b = c = 0 + 2 + 1 = 3, d = max(3 + 3 + 2, 3 + 1 + 5) = 9.
// Critical path a, c, d (13); without transfers a, b, d = 9; total work 10.
TEST(Analysis, DiamondByHand) {
  const Graph g = make({{2, 1}, {3, 2}, {1, 5}, {4, 0}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const CostModel cost = CostModel::reference(g);
  const GraphAnalysis an(g, cost);
  EXPECT_EQ(an.b_level(), (std::vector<double>{13, 9, 10, 4}));
  EXPECT_EQ(an.t_level(), (std::vector<double>{0, 3, 3, 9}));
  EXPECT_EQ(an.critical_path(), (std::vector<NodeId>{0, 2, 3}));
  EXPECT_EQ(an.critical_path_length(), 13);
  EXPECT_EQ(an.critical_path_no_transfer(), 9);
  EXPECT_EQ(an.total_work(), 10);
  EXPECT_EQ(an.lower_bound(1), 10);  // total work
  EXPECT_EQ(an.lower_bound(2), 9);   // the zero-transfer critical path dominates
  EXPECT_EQ(an.lower_bound(64), 9);
}

// Levels in edges from a source: the diamond 0 -> {1, 2} -> 3 with a skip edge 0 -> 3 and a
// lone node 4: 0, 1, 1, 2, 0 (the skip edge does not lower 3's level).
TEST(Analysis, HopLevelsByHand) {
  const Graph g =
      make({{1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}});
  EXPECT_EQ(hop_levels(g), (std::vector<int>{0, 1, 1, 2, 0}));
}

// Two independent chains 0->1->2 (costs 1, 1, 1) and 3->4 (costs 5, 5); transfers 10 each.
// Critical path: 3 -> 4 = 5 + 10 + 5 = 20 vs 1+10+1+10+1 = 23: the long chain wins with
// transfers, the short-but-heavy chain without (10 vs 3). Work 13: bound(1) = 13, bound(2) = 10.
TEST(Analysis, TransferCostsChangeTheCriticalPath) {
  const Graph g = make({{1, 10}, {1, 10}, {1, 10}, {5, 10}, {5, 10}}, {{0, 1}, {1, 2}, {3, 4}});
  const CostModel cost = CostModel::reference(g);  // must outlive `an` (lower_bound reads it)
  const GraphAnalysis an(g, cost);
  EXPECT_EQ(an.critical_path(), (std::vector<NodeId>{0, 1, 2}));
  EXPECT_EQ(an.critical_path_length(), 23);
  EXPECT_EQ(an.critical_path_no_transfer(), 10);
  EXPECT_EQ(an.lower_bound(1), 13);
  EXPECT_EQ(an.lower_bound(2), 10);
  EXPECT_EQ(an.lower_bound(3), 10);
}

TEST(Analysis, PhysicalModelUsesFastestDeviceAndSlots) {
  const Graph g = make({{0, 0}, {0, 0}}, {{0, 1}});
  DeviceCosts dev;
  dev.time_per_work = {1.0, 0.5};  // device 1 is twice as fast
  dev.overhead = {0.0, 0.0};
  dev.slots = {1, 1};
  dev.latency = {0, 1, 1, 0};
  dev.time_per_size = {0, 0, 0, 0};
  const CostModel cost("test", CostUnit::seconds, {4, 6}, {8}, dev);
  EXPECT_EQ(cost.compute(0, 1), 2);
  EXPECT_EQ(cost.compute(0), 3);  // nominal = mean of 4 and 2
  EXPECT_EQ(cost.transfer(0, 0, 1), 1);
  const GraphAnalysis an(g, cost);
  EXPECT_EQ(an.b_level()[0], 3 + 1 + 4.5);
  // Fastest devices: 2 + 3 = 5 along the chain; work 5 / 2 devices = 2.5.
  EXPECT_EQ(an.lower_bound(2), 5);
  EXPECT_EQ(an.lower_bound(1), 10);  // only device 0: 4 + 6
  EXPECT_THROW(an.lower_bound(3), InputError);
}

// Longest path by explicit enumeration of every path (exponential; small graphs only).
double brute_force_longest(const Graph& g, const CostModel& c, bool transfers) {
  double best = 0;
  std::function<void(NodeId, double)> walk = [&](NodeId v, double len) {
    len += c.compute(v);
    best = std::max(best, len);
    const auto succ = g.successors(v);
    for (std::size_t i = 0; i < succ.size(); ++i)
      walk(succ[i],
           len + (transfers ? c.transfer(g.out_edge_begin(v) + static_cast<EdgeId>(i)) : 0));
  };
  for (NodeId s : g.sources()) walk(s, 0);
  return best;
}

TEST(Analysis, PropertiesOnRandomDags) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 1 + static_cast<int>(rng() % 12);
    opt.edge_prob = 0.1 + 0.5 * static_cast<double>(rng() % 100) / 100;
    const Graph g = test::random_dag(rng, opt);
    const CostModel c = CostModel::reference(g);
    const GraphAnalysis an(g, c);
    const auto& bl = an.b_level();
    const auto& tl = an.t_level();
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto succ = g.successors(v);
      bool tight = succ.empty() && bl[static_cast<std::size_t>(v)] == c.compute(v);
      for (std::size_t i = 0; i < succ.size(); ++i) {
        const double via = c.compute(v) + c.transfer(g.out_edge_begin(v) + static_cast<EdgeId>(i)) +
                           bl[static_cast<std::size_t>(succ[i])];
        EXPECT_GE(bl[static_cast<std::size_t>(v)], via);
        tight = tight || bl[static_cast<std::size_t>(v)] == via;
      }
      EXPECT_TRUE(tight) << "b-level of " << v << " is realised by no child";
      for (EdgeId e : g.in_edges(v)) {
        const NodeId p = g.edge(e).src;
        EXPECT_GE(tl[static_cast<std::size_t>(v)],
                  tl[static_cast<std::size_t>(p)] + c.compute(p) + c.transfer(e));
      }
      EXPECT_LE(tl[static_cast<std::size_t>(v)] + bl[static_cast<std::size_t>(v)],
                an.critical_path_length());
    }
    EXPECT_EQ(an.critical_path_length(), brute_force_longest(g, c, true));
    EXPECT_EQ(an.critical_path_no_transfer(), brute_force_longest(g, c, false));
    // The critical path is a real path whose length is the critical path length.
    const auto& cp = an.critical_path();
    ASSERT_FALSE(cp.empty());
    EXPECT_TRUE(g.predecessors(cp.front()).empty());
    EXPECT_TRUE(g.successors(cp.back()).empty());
    double len = 0;
    for (std::size_t i = 0; i < cp.size(); ++i) {
      len += c.compute(cp[i]);
      if (i + 1 < cp.size()) {
        const EdgeId e = g.find_edge(cp[i], cp[i + 1]);
        ASSERT_GE(e, 0);
        len += c.transfer(e);
      }
    }
    EXPECT_EQ(len, an.critical_path_length());
    EXPECT_EQ(an.lower_bound(1), an.total_work());
    for (int p = 1; p <= 4; ++p) EXPECT_GE(an.lower_bound(p), an.lower_bound(p + 1));
  }
}

}  // namespace
}  // namespace doppler
