// Coarsening and the multilevel placer: coarse graphs stay acyclic and conserve work, a
// projected assignment's makespan equals the coarse one's where it must, and multilevel beats
// the list schedulers on a deep graph where keeping chains together matters.
#include <algorithm>
#include <numeric>
#include <queue>
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/coarsen.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/multilevel.hpp"
#include "doppler/heuristics/search_placers.hpp"

namespace doppler {
namespace {

// Independent acyclicity check of the quotient under cluster_of: Kahn's algorithm over the
// cluster-level edges of the fine graph must consume every cluster.
bool quotient_is_acyclic(const Graph& g, const std::vector<NodeId>& cl) {
  const int k = *std::max_element(cl.begin(), cl.end()) + 1;
  std::vector<std::vector<int>> succ(static_cast<std::size_t>(k));
  std::vector<int> indeg(static_cast<std::size_t>(k), 0);
  for (const Edge& e : g.edges()) {
    const int a = cl[static_cast<std::size_t>(e.src)], b = cl[static_cast<std::size_t>(e.dst)];
    if (a == b) continue;
    succ[static_cast<std::size_t>(a)].push_back(b);
    ++indeg[static_cast<std::size_t>(b)];
  }
  std::queue<int> q;
  for (int c = 0; c < k; ++c)
    if (indeg[static_cast<std::size_t>(c)] == 0) q.push(c);
  int seen = 0;
  for (; !q.empty(); q.pop(), ++seen)
    for (int b : succ[static_cast<std::size_t>(q.front())])
      if (--indeg[static_cast<std::size_t>(b)] == 0) q.push(b);
  return seen == k;
}

TEST(Coarsen, RepeatedStepsStayAcyclicConserveWorkAndRespectTheCap) {
  std::mt19937_64 rng(3);
  for (int trial = 0; trial < 40; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 20 + 15 * trial;
    opt.edge_prob = 3.0 / opt.nodes + 0.01 * (trial % 5);
    const Graph g = test::random_dag(rng, opt);
    const Problem problem(g, Platform::reference(4));
    CoarsenCosts costs = nominal_costs(g, problem.cost());
    const double total = std::accumulate(costs.compute.begin(), costs.compute.end(), 0.0);
    const Graph* cur = &g;
    std::vector<Coarsening> steps;
    for (int step = 0; step < 6; ++step) {
      CoarsenSettings s;
      s.max_cluster = total / 3;
      s.seed = static_cast<std::uint64_t>(trial * 10 + step);
      Coarsening c = coarsen_once(*cur, steps.empty() ? costs : steps.back().costs, s);
      ASSERT_TRUE(quotient_is_acyclic(*cur, c.cluster_of)) << "trial " << trial;
      const double coarse_total =
          std::accumulate(c.costs.compute.begin(), c.costs.compute.end(), 0.0);
      EXPECT_DOUBLE_EQ(coarse_total, total);
      for (std::size_t v = 0; v < c.costs.compute.size(); ++v)
        EXPECT_EQ(c.costs.compute[v], *c.graph.node(static_cast<NodeId>(v)).compute_cost);
      // Merged pairs: at most two members, and a pair above the cap was never formed.
      std::vector<int> size(static_cast<std::size_t>(c.graph.num_nodes()), 0);
      for (NodeId x : c.cluster_of) ++size[static_cast<std::size_t>(x)];
      for (std::size_t x = 0; x < size.size(); ++x) {
        EXPECT_LE(size[x], 2);
        if (size[x] == 2) {
          EXPECT_LE(c.costs.compute[x], s.max_cluster);
        }
      }
      EXPECT_LE(c.graph.num_nodes(), cur->num_nodes());
      steps.push_back(std::move(c));
      cur = &steps.back().graph;
    }
  }
}

TEST(Coarsen, NodesOfDifferentPartsNeverMerge) {
  // The V-cycles' coarsening: with a part per node (a placement), every cluster of every step
  // lies in one part, so the placement is one of each coarse level.
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 20; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 40 + 20 * trial;
    opt.edge_prob = 4.0 / opt.nodes;
    const Graph g = test::random_dag(rng, opt);
    const Problem problem(g, Platform::reference(4));
    std::vector<int> part(static_cast<std::size_t>(g.num_nodes()));
    for (auto& x : part) x = static_cast<int>(rng() % (1 + trial % 4));
    std::vector<int> at(part.size());
    std::iota(at.begin(), at.end(), 0);  // fine node -> node of the current level
    const Graph* cur = &g;
    std::vector<Coarsening> steps;
    CoarsenSettings s;
    s.part = part;
    for (int step = 0; step < 4; ++step) {
      s.seed = static_cast<std::uint64_t>(trial * 7 + step);
      Coarsening c = coarsen_once(
          *cur, steps.empty() ? nominal_costs(g, problem.cost()) : steps.back().costs, s);
      ASSERT_TRUE(quotient_is_acyclic(*cur, c.cluster_of));
      for (auto& x : at) x = c.cluster_of[static_cast<std::size_t>(x)];
      // The part of every cluster, read from the original nodes: one per cluster.
      std::vector<int> of(static_cast<std::size_t>(c.graph.num_nodes()), -1);
      for (std::size_t v = 0; v < part.size(); ++v) {
        int& p = of[static_cast<std::size_t>(at[v])];
        if (p < 0) p = part[v];
        EXPECT_EQ(p, part[v]) << "trial " << trial << " step " << step << " node " << v;
      }
      s.part = of;
      steps.push_back(std::move(c));
      cur = &steps.back().graph;
    }
    if (trial % 4 == 0) {  // one part: it coarsens as without parts
      EXPECT_LT(cur->num_nodes(), g.num_nodes() / 2);
    }
  }
  CoarsenSettings bad;
  bad.part = {0, 1};
  const Graph g = test::ref_graph({{1, 1}, {1, 1}, {1, 1}}, {{0, 1}, {1, 2}});
  EXPECT_THROW(coarsen_once(g, CoarsenCosts{{1, 1, 1}, {1, 1}}, bad), InputError);
}

TEST(Coarsen, AContractionThatWouldCloseACycleIsUndone) {
  // u->v, x->y, u->y, x->v: merging both pairs {u,v} and {x,y} makes a two-cycle.
  const Graph g =
      test::ref_graph({{1, 1}, {1, 1}, {1, 1}, {1, 1}}, {{0, 1}, {2, 3}, {0, 3}, {2, 1}});
  const CoarsenCosts costs{{1, 1, 1, 1}, {5, 1, 5, 1}};
  EXPECT_THROW(quotient_graph(g, costs, {0, 0, 1, 1}), InputError);
  const Coarsening c = coarsen_once(g, costs, {});
  EXPECT_TRUE(quotient_is_acyclic(g, c.cluster_of));
}

TEST(Coarsen, ProjectedMakespanEqualsTheCoarseOneForChainsOnTheirOwnDevices) {
  // Chains of ops with zero-cost internal edges; chains connect last op -> first op with costly
  // edges. One chain per device: the fine schedule runs every chain back to back, as the coarse
  // node does, so both makespans are equal (integer costs: exact).
  std::mt19937_64 rng(5);
  std::uniform_int_distribution<int> cost(1, 9);
  for (int trial = 0; trial < 20; ++trial) {
    const int chains = 6, len = 5;
    std::vector<double> c;
    std::vector<test::CostEdge> edges;
    std::vector<NodeId> cl;
    for (int k = 0; k < chains; ++k)
      for (int i = 0; i < len; ++i) {
        c.push_back(cost(rng));
        cl.push_back(k);
        if (i > 0) edges.push_back({k * len + i - 1, k * len + i, 0.0});
      }
    for (int k = 1; k < chains; ++k)
      for (int j = 0; j < k; ++j)
        if (cost(rng) <= 4) edges.push_back({j * len + len - 1, k * len, double(cost(rng))});
    const Graph g = test::edge_cost_graph(c, edges);
    const Problem fine(g, Platform::reference(chains));
    const Coarsening q = quotient_graph(g, nominal_costs(g, fine.cost()), cl);
    const Problem coarse(q.graph, Platform::reference(chains));
    std::vector<DeviceId> perm(chains);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<DeviceId> projected(c.size());
    for (std::size_t v = 0; v < c.size(); ++v) projected[v] = perm[static_cast<std::size_t>(cl[v])];
    EXPECT_EQ(fine.simulator().makespan(projected), coarse.simulator().makespan(perm));
  }
}

// A deep layered DAG: `width` parallel chains of `depth` ops, each op also reading a random op
// of the previous layer with probability `cross`; transfers cost 10x compute on average.
Graph deep_dag(std::mt19937_64& rng, int width, int depth, double cross) {
  std::vector<double> c;
  std::vector<test::CostEdge> edges;
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> pick(0, width - 1), w(5, 15);
  for (int l = 0; l < depth; ++l)
    for (int i = 0; i < width; ++i) {
      c.push_back(w(rng));
      if (l == 0) continue;
      const int v = l * width + i;
      edges.push_back({v - width, v, 10.0 * w(rng)});
      const int j = pick(rng);
      if (j != i && u(rng) < cross) edges.push_back({(l - 1) * width + j, v, 10.0 * w(rng)});
    }
  return test::edge_cost_graph(c, edges);
}

TEST(Multilevel, BeatsTheListSchedulersAndLocalSearchOnADeepGraphAtTheSameBudget) {
  // With one refinement pass (the default) and with three V-cycles.
  std::mt19937_64 rng(8);
  const Graph g = deep_dag(rng, 16, 120, 0.05);  // 1,920 ops
  const Problem problem(g, Platform::reference(8));
  PlaceOptions o;
  o.budget.evaluations = 4000;
  const double etf = problem.simulator().makespan(EtfPlacer().place(problem, o).assignment);
  const double ls = problem.simulator().makespan(LocalSearchPlacer().place(problem, o).assignment);
  const MultilevelPlacer ml;
  const std::int64_t calls0 = problem.simulator().calls();
  const PlaceResult placed = ml.place(problem, o);
  const Assignment& a = placed.assignment;
  a.validate(g, 8);
  const double m = problem.simulator().makespan(a);
  EXPECT_LE(placed.spent.calls, o.budget.evaluations);  // never over the budget
  // Every call of the run went through its evaluator (the coarse graph's have their own
  // simulator, so the fine simulator saw fewer).
  EXPECT_LE(problem.simulator().calls() - calls0 - 1, placed.spent.calls);
  // The placement a person would write: two whole chains per device.
  std::vector<DeviceId> chains(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) chains[static_cast<std::size_t>(v)] = (v % 16) / 2;
  EXPECT_LT(m, 1.1 * problem.simulator().makespan(chains));
  EXPECT_LT(m, 0.9 * etf) << "etf " << etf << " local-search " << ls;
  EXPECT_LT(m, ls) << "etf " << etf;
  EXPECT_GE(ml.last_levels().size(), 3u);
  EXPECT_EQ(ml.last_levels().front().nodes, g.num_nodes());
  // Three V-cycles at the same budget: within the calls, repeatable, still ahead of both.
  const PlaceResult cycled = make_placer("multilevel:cycles=3")->place(problem, o);
  EXPECT_LE(cycled.spent.calls, o.budget.evaluations);
  const double mc = problem.simulator().makespan(cycled.assignment);
  EXPECT_LT(mc, 0.9 * etf);
  EXPECT_LT(mc, ls);
  EXPECT_EQ(make_placer("multilevel:cycles=3")->place(problem, o).assignment.device_of,
            cycled.assignment.device_of);
  EXPECT_NE(test::error_of([] { make_placer("multilevel:cycles=0"); }).find("cycles"),
            std::string::npos);
}

TEST(Multilevel, InnerPlacerSpecAndErrors) {
  std::mt19937_64 rng(9);
  const Graph g = deep_dag(rng, 8, 60, 0.2);
  const Problem problem(g, Platform::reference(4));
  PlaceOptions o;
  o.budget.evaluations = 500;
  const auto p = make_placer("multilevel:inner=local-search:t0=0.05;polish=0.2,coarse=64");
  const Assignment a = p->place(problem, o).assignment;
  EXPECT_NO_THROW(a.validate(g, 4));
  EXPECT_EQ(a.device_of, make_placer("multilevel:inner=local-search:t0=0.05;polish=0.2,coarse=64")
                             ->place(problem, o)
                             .assignment.device_of);  // deterministic
  EXPECT_NE(test::error_of([] { make_placer("multilevel:inner=multilevel"); }).find("inner"),
            std::string::npos);
  EXPECT_NE(test::error_of([] { make_placer("multilevel:share=1.5"); }).find("share"),
            std::string::npos);
  EXPECT_NE(
      test::error_of([] { make_placer("multilevel:inner=nope"); }).find("unknown method 'nope'"),
      std::string::npos);
}

}  // namespace
}  // namespace doppler
