// Dominant Sequence Clustering and the cluster merges: optimality on fork and join graphs
// (brute force over every subset), chains, coarse-grain in-trees (brute force over every
// partition), the schedule invariants on random DAGs, merges and the placer.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/clustering.hpp"

namespace doppler {
namespace {

using test::CostEdge;
using test::edge_cost_graph;

Clustering dsc(const Problem& problem) {
  return dominant_sequence_clustering(problem.graph(), problem.cost(),
                                      problem.analysis().b_level());
}

/// Makespan of the DSC placer with one device per op (unbounded for the clustering).
double unbounded_makespan(const Graph& g) {
  const Problem problem(g, Platform::reference(g.num_nodes()));
  const Assignment a = DscPlacer().place(problem, {}).assignment;
  a.validate(g, g.num_nodes());
  return problem.simulator().makespan(a.device_of);
}

/// min over subsets S of max(sum of c over S, max of a over the rest): the best split of the
/// ops (c_i, a_i) between a shared sequential device and devices of their own.
double best_split(const std::vector<double>& c, const std::vector<double>& a) {
  double best = 1e300;
  const auto k = c.size();
  for (std::size_t mask = 0; mask < (std::size_t{1} << k); ++mask) {
    double sum = 0, rest = 0;
    for (std::size_t i = 0; i < k; ++i)
      if (mask >> i & 1)
        sum += c[i];
      else
        rest = std::max(rest, a[i]);
    best = std::min(best, std::max(sum, rest));
  }
  return best;
}

// A fork: source 0 (c0) -> children 1..k (c_i, edge e_i). A child on the source's device runs
// after it, in sequence with the others there; one elsewhere starts at c0 + e_i. The optimum is
// c0 + best_split(c, c + e), and DSC is optimal on forks (Yang & Gerasoulis).
TEST(Dsc, OptimalOnForks) {
  std::mt19937_64 rng(1);
  std::uniform_int_distribution<int> cost(0, 10), width(1, 8);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = width(rng);
    std::vector<double> comp{static_cast<double>(cost(rng))}, c, a;
    std::vector<CostEdge> edges;
    for (int i = 1; i <= k; ++i) {
      c.push_back(cost(rng));
      const double e = cost(rng);
      a.push_back(c.back() + e);
      comp.push_back(c.back());
      edges.push_back({0, i, e});
    }
    const Graph g = edge_cost_graph(comp, edges);
    const double want = comp[0] + best_split(c, a);
    SCOPED_TRACE(trial);
    EXPECT_EQ(dsc(Problem(g, Platform::reference(1))).parallel_time, want);
    EXPECT_EQ(unbounded_makespan(g), want);
  }
}

// A join: sources 0..k-1 (c_i, edge e_i) -> sink k (c_s). Sources on the sink's device run in
// sequence before it; others' data arrives at c_i + e_i. Optimum: best_split(c, c + e) + c_s.
TEST(Dsc, OptimalOnJoins) {
  std::mt19937_64 rng(2);
  std::uniform_int_distribution<int> cost(0, 10), width(1, 8);
  for (int trial = 0; trial < 200; ++trial) {
    const int k = width(rng);
    std::vector<double> comp, c, a;
    std::vector<CostEdge> edges;
    for (int i = 0; i < k; ++i) {
      c.push_back(cost(rng));
      const double e = cost(rng);
      a.push_back(c.back() + e);
      comp.push_back(c.back());
      edges.push_back({i, k, e});
    }
    comp.push_back(cost(rng));
    const Graph g = edge_cost_graph(comp, edges);
    const double want = best_split(c, a) + comp.back();
    SCOPED_TRACE(trial);
    EXPECT_EQ(dsc(Problem(g, Platform::reference(1))).parallel_time, want);
    EXPECT_EQ(unbounded_makespan(g), want);
  }
}

// A chain with costly transfers ends in one cluster: no transfer, the sum of the computes.
TEST(Dsc, ChainIsOneCluster) {
  const Graph g = edge_cost_graph({3, 1, 4, 1, 5}, {{0, 1, 9}, {1, 2, 9}, {2, 3, 9}, {3, 4, 9}});
  const Clustering c = dsc(Problem(g, Platform::reference(1)));
  EXPECT_EQ(c.clusters, 1);
  EXPECT_EQ(c.parallel_time, 14);
  EXPECT_EQ(c.order, (std::vector<NodeId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(unbounded_makespan(g), 14);
}

/// The least simulated makespan over every partition of the ops into clusters (each cluster on
/// its own device, FIFO dispatch): restricted growth strings.
double best_partition(const Graph& g) {
  const int n = g.num_nodes();
  const Problem problem(g, Platform::reference(n));
  std::vector<DeviceId> d(static_cast<std::size_t>(n), 0);
  double best = problem.simulator().makespan(d);
  const auto rec = [&](auto&& self, int i, int used) -> void {
    if (i == n) {
      best = std::min(best, problem.simulator().makespan(d));
      return;
    }
    for (int k = 0; k <= used && k < n; ++k) {
      d[static_cast<std::size_t>(i)] = k;
      self(self, i + 1, std::max(used, k + 1));
    }
  };
  rec(rec, 1, 1);
  return best;
}

// Coarse-grain in-trees (every compute >= every transfer): DSC is optimal (Yang & Gerasoulis),
// so its parallel time is no worse than the best partition under the simulator.
TEST(Dsc, OptimalOnCoarseGrainInTrees) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> comp(5, 10), comm(0, 5), size(2, 8);
  for (int trial = 0; trial < 30; ++trial) {
    const int n = size(rng);
    std::vector<double> c;
    std::vector<CostEdge> edges;
    for (int v = 0; v < n; ++v) c.push_back(comp(rng));
    for (int v = 1; v < n; ++v)  // v feeds a random earlier op: node 0 is the root
      edges.push_back({v, std::uniform_int_distribution<int>(0, v - 1)(rng), double(comm(rng))});
    std::sort(edges.begin(), edges.end(),
              [](const CostEdge& a, const CostEdge& b) { return a.src < b.src; });
    const Graph g = edge_cost_graph(c, edges);
    SCOPED_TRACE(trial);
    const double pt = dsc(Problem(g, Platform::reference(1))).parallel_time;
    EXPECT_LE(pt, best_partition(g));
    EXPECT_EQ(unbounded_makespan(g), pt);
  }
}

/// Finish time of every op when each cluster runs its ops in `c.order` sequence as soon as
/// possible (an independent evaluation of the clustering).
std::vector<double> asap_finish(const Graph& g, const CostModel& cost, const Clustering& c) {
  std::vector<double> fin(static_cast<std::size_t>(g.num_nodes()), 0);
  std::vector<double> free(static_cast<std::size_t>(c.clusters), 0);
  for (NodeId v : c.order) {
    const int k = c.cluster_of[static_cast<std::size_t>(v)];
    double t = free[static_cast<std::size_t>(k)];
    for (EdgeId e : g.in_edges(v)) {
      const NodeId u = g.edge(e).src;
      const bool same = c.cluster_of[static_cast<std::size_t>(u)] == k;
      t = std::max(t, fin[static_cast<std::size_t>(u)] + (same ? 0 : cost.transfer(e)));
    }
    fin[static_cast<std::size_t>(v)] = t + cost.compute(v);
    free[static_cast<std::size_t>(k)] = fin[static_cast<std::size_t>(v)];
  }
  return fin;
}

/// Checks the Clustering invariants of the header against the graph.
void expect_valid(const Graph& g, const CostModel& cost, const Clustering& c) {
  const auto n = static_cast<std::size_t>(g.num_nodes());
  ASSERT_EQ(c.cluster_of.size(), n);
  ASSERT_EQ(c.order.size(), n);
  std::vector<int> pos(n, -1), seen(static_cast<std::size_t>(c.clusters), 0);
  for (std::size_t i = 0; i < n; ++i) {
    ASSERT_EQ(pos[static_cast<std::size_t>(c.order[i])], -1);
    pos[static_cast<std::size_t>(c.order[i])] = static_cast<int>(i);
  }
  std::vector<double> last_finish(static_cast<std::size_t>(c.clusters), 0);
  double pt = 0;
  int next_new = 0;
  for (NodeId v : c.order) {
    const int k = c.cluster_of[static_cast<std::size_t>(v)];
    ASSERT_TRUE(k >= 0 && k < c.clusters);
    if (!seen[static_cast<std::size_t>(k)]++) {
      EXPECT_EQ(k, next_new++) << "numbered by start";
    }
    const double s = c.start[static_cast<std::size_t>(v)];
    EXPECT_GE(s, last_finish[static_cast<std::size_t>(k)]) << "no overlap in a cluster";
    last_finish[static_cast<std::size_t>(k)] = s + cost.compute(v);
    pt = std::max(pt, s + cost.compute(v));
    for (EdgeId e : g.in_edges(v)) {
      const NodeId u = g.edge(e).src;
      EXPECT_LT(pos[static_cast<std::size_t>(u)], pos[static_cast<std::size_t>(v)]);
      const bool same = c.cluster_of[static_cast<std::size_t>(u)] == k;
      EXPECT_GE(s, c.start[static_cast<std::size_t>(u)] + cost.compute(u) +
                       (same ? 0 : cost.transfer(e)));
    }
  }
  EXPECT_EQ(next_new, c.clusters) << "no empty cluster";
  EXPECT_EQ(pt, c.parallel_time);
}

// Random DAGs: the schedule is valid, never longer than the critical path with every transfer
// (no clustering at all) nor shorter than the one without transfers, and running each cluster's
// sequence as soon as possible is no longer than DSC's plan (equal unless an op pulled into a
// cluster could have started earlier there).
TEST(Dsc, ScheduleInvariantsOnRandomDags) {
  std::mt19937_64 rng(4);
  int asap_equal = 0, trials = 0;
  for (int n : {5, 20, 80}) {
    for (double prob : {0.05, 0.2, 0.5}) {
      for (int rep = 0; rep < 6; ++rep, ++trials) {
        const Graph g = test::random_dag(rng, {n, prob, 10, 10, true});
        const Problem problem(g, Platform::reference(1));
        const Clustering c = dsc(problem);
        SCOPED_TRACE(testing::Message() << n << " " << prob << " " << rep);
        expect_valid(g, problem.cost(), c);
        EXPECT_LE(c.parallel_time, problem.analysis().critical_path_length());
        EXPECT_GE(c.parallel_time, problem.analysis().critical_path_no_transfer());
        const std::vector<double> fin = asap_finish(g, problem.cost(), c);
        const double asap = *std::max_element(fin.begin(), fin.end());
        EXPECT_LE(asap, c.parallel_time);
        asap_equal += asap == c.parallel_time;
        const Clustering again = dsc(problem);
        EXPECT_EQ(again.cluster_of, c.cluster_of);
        EXPECT_EQ(again.order, c.order);
      }
    }
  }
  EXPECT_GE(asap_equal, trials * 9 / 10);
}

// With P >= clusters every op keeps its cluster's device, and the simulator with DSC's order as
// the priority runs each cluster's plan: no later than planned, except where a work-conserving
// device starts a ready op earlier than planned and so delays the next (a list scheduling
// anomaly), which random DAGs here show rarely.
TEST(Dsc, SimulatedUnboundedMakespanMatchesThePlan) {
  std::mt19937_64 rng(5);
  int within = 0, trials = 0;
  for (int rep = 0; rep < 40; ++rep, ++trials) {
    const Graph g = test::random_dag(rng, {30, 0.15, 10, 10, true});
    const Problem one(g, Platform::reference(1));
    const Clustering c = dsc(one);
    const Problem problem(g, Platform::reference(c.clusters));
    const Assignment a = DscPlacer().place(problem, {0, {}, false}).assignment;
    for (std::size_t v = 0; v < a.device_of.size(); ++v) EXPECT_EQ(a.device_of[v], c.cluster_of[v]);
    const double sim = problem.simulator().makespan(a, DispatchRule::priority);
    within += sim <= c.parallel_time;
  }
  EXPECT_GE(within, trials * 9 / 10);
}

// Merges: every op on 0..P-1 and a cluster stays together; each rule on a hand-worked case.
TEST(ClusterMerge, ValidAndByRule) {
  // S (1) -> T1 (6), S -> T2 (6), edges 3; U (3) and V (2) independent. DSC: S at 0, T1 joins
  // S's cluster (start 1 < 4), T2 alone at 4 (7 > 4), U and V at 0. Clusters by start: {S, T1}
  // (work 7, planned [0, 7]), U (3, [0, 3]), V (2, [0, 2]), T2 (6, [4, 10]). On 2 devices:
  // glb: 7 -> d0, 3 -> d1, 2 -> d1, 6 -> d1 (5 < 7).
  // lpt: 7 -> d0, 6 -> d1, 3 -> d1 (6 < 7), 2 -> d0 (7 < 9).
  // eft: d0 (ends 7, tie), d1 (3 < 7 + 3), d1 (3 + 2 < 7 + 2), T2 d1 (5 + 6 < 7 + 6).
  // comm as eft but T2 pays the transfer from S off d0: d0 (7 + 6 = 13 < 5 + 6 + 3).
  const Graph g = edge_cost_graph({1, 6, 6, 3, 2}, {{0, 1, 3}, {0, 2, 3}});
  const Problem problem(g, Platform::reference(2));
  const Clustering c = dsc(problem);
  ASSERT_EQ(c.clusters, 4);
  EXPECT_EQ(c.cluster_of, (std::vector<int>{0, 0, 3, 1, 2}));
  EXPECT_EQ(c.start, (std::vector<double>{0, 1, 4, 0, 0}));
  EXPECT_EQ(merge_clusters(g, c, problem.cost(), 2, ClusterMerge::glb),
            (std::vector<DeviceId>{0, 0, 1, 1, 1}));
  EXPECT_EQ(merge_clusters(g, c, problem.cost(), 2, ClusterMerge::lpt),
            (std::vector<DeviceId>{0, 0, 1, 1, 0}));
  EXPECT_EQ(merge_clusters(g, c, problem.cost(), 2, ClusterMerge::eft),
            (std::vector<DeviceId>{0, 0, 1, 1, 1}));
  EXPECT_EQ(merge_clusters(g, c, problem.cost(), 2, ClusterMerge::comm),
            (std::vector<DeviceId>{0, 0, 0, 1, 1}));
  EXPECT_EQ(merge_clusters(g, c, problem.cost(), 4, ClusterMerge::lpt),
            (std::vector<DeviceId>{0, 0, 3, 1, 2}));
  std::mt19937_64 rng(6);
  for (int rep = 0; rep < 10; ++rep) {
    const Graph r = test::random_dag(rng, {60, 0.05, 10, 10, true});
    const Problem pr(r, Platform::reference(1));
    const Clustering cr = dsc(pr);
    for (int p : {1, 2, 3, 7, 64})
      for (ClusterMerge rule :
           {ClusterMerge::glb, ClusterMerge::lpt, ClusterMerge::eft, ClusterMerge::comm}) {
        const std::vector<DeviceId> d = merge_clusters(r, cr, pr.cost(), p, rule);
        Assignment a{p, d, {}, "dsc"};
        EXPECT_NO_THROW(a.validate(r, p));
        std::vector<DeviceId> of_cluster(static_cast<std::size_t>(cr.clusters), -1);
        for (std::size_t v = 0; v < d.size(); ++v) {  // a cluster stays together
          DeviceId& k = of_cluster[static_cast<std::size_t>(cr.cluster_of[v])];
          if (k < 0) k = d[v];
          EXPECT_EQ(d[v], k);
        }
      }
  }
}

// The placer: merge=best keeps the best rule by simulation (four calls when it must merge),
// is deterministic, and puts every op on device 0 of one device.
TEST(DscPlacer, BestOfTheMergesValidDeterministic) {
  std::mt19937_64 rng(7);
  const Graph g = test::random_dag(rng, {200, 0.03, 10, 10, true});
  const Problem problem(g, Platform::reference(4));
  const DscPlacer best;
  const PlaceResult placed = best.place(problem, {});
  const Assignment& a = placed.assignment;
  a.validate(g, 4);
  EXPECT_EQ(a.method, "dsc");
  EXPECT_EQ(placed.spent.calls, 4);
  const double m = problem.simulator().makespan(a.device_of);
  for (const char* rule : {"glb", "lpt", "eft", "comm"}) {
    const DscPlacer one(rule);
    const PlaceResult placed_one = one.place(problem, {});
    const Assignment& b = placed_one.assignment;
    EXPECT_EQ(placed_one.spent.calls, 0);
    EXPECT_LE(m, problem.simulator().makespan(b.device_of)) << rule;
  }
  EXPECT_EQ(best.place(problem, {}).assignment.device_of, a.device_of);
  const Problem single(g, Platform::reference(1));
  for (DeviceId d : best.place(single, {}).assignment.device_of) EXPECT_EQ(d, 0);
  EXPECT_EQ(make_placer("dsc:merge=lpt")->name(), "dsc");
  EXPECT_NE(
      test::error_of([] { make_placer("dsc:merge=wrap"); }).find("glb, lpt, eft, comm or best"),
      std::string::npos);
}

// Input ops follow their first consumer when colocate_inputs is set; the hardware model works.
TEST(DscPlacer, ColocatesInputsAndRunsOnHardware) {
  GraphBuilder b;
  for (int i = 0; i < 6; ++i) {
    Node n;
    n.kind = i < 2 ? OpKind::input : OpKind::other;
    n.flops = i < 2 ? 0 : 1e9;
    n.out_bytes = 1e6;
    n.compute_cost = i < 2 ? 0 : 5;
    n.transfer_cost = 20;
    b.add_node(n);
  }
  // Inputs 0, 1 feed 2 and 3; 2, 3 feed 4 and 5.
  for (auto [u, v] : {std::pair{0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 4}, {3, 5}, {2, 5}})
    b.add_edge(u, v);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(4));
  const Assignment a = DscPlacer().place(problem, {}).assignment;
  a.validate(g, 4);
  const std::vector<NodeId>& o = a.order;
  for (NodeId in : {0, 1}) {
    // First consumer in the order among 2 and 3.
    const auto first = std::find_if(o.begin(), o.end(), [](NodeId v) { return v == 2 || v == 3; });
    EXPECT_EQ(a.device_of[static_cast<std::size_t>(in)],
              a.device_of[static_cast<std::size_t>(*first)]);
  }
  const Problem hw(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const Assignment h = DscPlacer().place(hw, {}).assignment;
  EXPECT_NO_THROW(h.validate(g, 4));
}

}  // namespace
}  // namespace doppler
