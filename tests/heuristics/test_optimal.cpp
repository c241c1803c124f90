// The optimal placer against brute force: the same optimum as an independent enumeration on
// random small graphs (reference model, per-edge transfer costs, heterogeneous and symmetric
// hardware), every partial-assignment bound below the best completion, never worse than the
// list schedulers, and honest status when a limit stops it.
#include <chrono>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "support/sanitized.hpp"
#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/optimal.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

// A random DAG (ids shuffled) with integral reference costs, physical costs (flops, bytes) and,
// with `edge_costs`, a per-edge transfer cost and byte count on about half of the edges.
Graph random_graph(std::mt19937_64& rng, int n, double edge_prob, bool edge_costs) {
  std::vector<NodeId> perm(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) perm[static_cast<std::size_t>(i)] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  std::uniform_int_distribution<int> cost(1, 10), tran(0, 12);
  std::bernoulli_distribution edge(edge_prob), coin(0.5);
  GraphBuilder b;
  for (int i = 0; i < n; ++i) {
    Node nd;
    nd.compute_cost = cost(rng);
    nd.transfer_cost = tran(rng);
    nd.flops = *nd.compute_cost * 1e9;
    nd.out_bytes = *nd.transfer_cost * 1e6;
    b.add_node(nd);
  }
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v) {
      if (!edge(rng)) continue;
      const NodeId s = perm[static_cast<std::size_t>(u)], d = perm[static_cast<std::size_t>(v)];
      if (edge_costs && coin(rng)) {
        const double t = tran(rng);
        b.add_edge(s, d, t * 1e6, t);
      } else {
        b.add_edge(s, d);
      }
    }
  return b.build();
}

// Minimum simulated makespan over every completion of `partial` (-1 = free): a plain odometer.
double best_completion(const Problem& problem, std::vector<DeviceId> partial) {
  std::vector<std::size_t> free;
  for (std::size_t v = 0; v < partial.size(); ++v)
    if (partial[v] < 0) free.push_back(v);
  const int p = problem.devices();
  double best = INFINITY;
  const auto total = static_cast<long>(std::pow(p, static_cast<double>(free.size())));
  for (long code = 0; code < total; ++code) {
    long c = code;
    for (std::size_t v : free) {
      partial[v] = static_cast<DeviceId>(c % p);
      c /= p;
    }
    best = std::min(best, problem.simulator().makespan(partial));
  }
  return best;
}

double optimum(const Problem& problem) {
  return best_completion(
      problem, std::vector<DeviceId>(static_cast<std::size_t>(problem.graph().num_nodes()), -1));
}

// A heterogeneous 3-device machine: the P100 box with a slower device 1 and a costly launch on 2.
Platform heterogeneous() {
  HardwareProfile hw = load_hardware_profile("p100");
  hw.devices[1].efficiency = 0.3;
  hw.devices[2].launch_overhead = 2e-4;
  return Platform::hardware(hw, 3);
}

// Three identical devices, one dedicated identical link per ordered pair.
Platform all_to_all() {
  return Platform::hardware(parse_hardware_profile(
                                R"({"format": "doppler-hardware", "version": 1, "name": "a2a",
              "device": {"name": "G", "peak_flops": {"f32": 5e12}},
              "count": 3,
              "topology": {"kind": "all-to-all", "link": {"bandwidth": 1e10, "latency": 1e-6}}})",
                                "a2a"),
                            3);
}

// True when the simulator honours per-edge transfer costs (a 2-op probe).
bool simulator_has_edge_costs() {
  GraphBuilder b;
  Node n;
  n.compute_cost = 1;
  n.transfer_cost = 1;
  b.add_node(n);
  b.add_node(n);
  b.add_edge(0, 1, std::nullopt, 5.0);
  const Graph g = b.build();
  return Simulator(g, Platform::reference(2)).makespan(std::vector<DeviceId>{0, 1}) == 7;
}

void expect_same_optimum(double got, double want, const std::string& what) {
  EXPECT_NEAR(got, want, 1e-9 * want) << what;
}

TEST(Optimal, MatchesExhaustiveOnSmallRandomGraphs) {
  std::mt19937_64 rng(17);
  for (int trial = 0; trial < (test::kSanitized ? 20 : 60); ++trial) {
    const int n = 3 + static_cast<int>(rng() % 8);  // 3..10 ops
    const int p = 2 + static_cast<int>(rng() % 2);  // 2..3 devices
    const Graph g = random_graph(rng, n, 0.1 + static_cast<double>(rng() % 50) / 100, false);
    const Problem problem(g, Platform::reference(p));
    const double want =
        problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment);
    const OptimalOutcome out = OptimalPlacer().solve(problem);
    const Assignment& a = out.assignment;
    EXPECT_NO_THROW(a.validate(g, p));
    EXPECT_EQ(a.method, "optimal");
    const OptimalResult& r = out.result;
    expect_same_optimum(problem.simulator().makespan(a), want, "trial " + std::to_string(trial));
    EXPECT_TRUE(r.proven);
    EXPECT_EQ(r.makespan, problem.simulator().makespan(a));
    EXPECT_EQ(r.lower_bound, r.makespan);
  }
}

TEST(Optimal, MatchesBruteForceWithPerEdgeTransferCosts) {
  if (!simulator_has_edge_costs()) GTEST_SKIP() << "the simulator ignores per-edge costs";
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < (test::kSanitized ? 8 : 25); ++trial) {
    const Graph g = random_graph(rng, 4 + static_cast<int>(rng() % 5), 0.4, true);
    const Problem problem(g, Platform::reference(3));
    expect_same_optimum(problem.simulator().makespan(OptimalPlacer().place(problem, {}).assignment),
                        optimum(problem), "trial " + std::to_string(trial));
  }
}

TEST(Optimal, SymmetryOnlyWhereDevicesAreInterchangeable) {
  std::mt19937_64 rng(31);
  const Graph g0 = random_graph(rng, 4, 0.3, false);
  EXPECT_TRUE(devices_interchangeable(Problem(g0, Platform::reference(4))));
  EXPECT_TRUE(devices_interchangeable(Problem(g0, all_to_all())));
  EXPECT_FALSE(devices_interchangeable(Problem(g0, heterogeneous())));
  // The P100 box has identical devices but a shared host bridge: not interchangeable.
  EXPECT_FALSE(
      devices_interchangeable(Problem(g0, Platform::hardware(load_hardware_profile("p100"), 4))));
  // On both hardware platforms the optimum is the one of a plain enumeration (no symmetry).
  for (int trial = 0; trial < (test::kSanitized ? 6 : 16); ++trial) {
    const Graph g = random_graph(rng, 4 + static_cast<int>(rng() % 4), 0.4, trial % 2 == 1);
    for (const Platform& platform : {heterogeneous(), all_to_all()}) {
      const Problem problem(g, platform);
      expect_same_optimum(
          problem.simulator().makespan(OptimalPlacer().place(problem, {}).assignment),
          optimum(problem), platform.name() + " trial " + std::to_string(trial));
    }
  }
}

// Random prefixes of a topological order, each with random devices: the bound never exceeds
// the best completion (the bound must hold for every completion, so for the best one).
TEST(Optimal, LowerBoundIsBelowTheBestCompletion) {
  std::mt19937_64 rng(41);
  const bool edge_costs = simulator_has_edge_costs();
  int checked = 0, tight = 0;
  for (int trial = 0; trial < 600; ++trial) {
    const Graph g = random_graph(rng, 3 + static_cast<int>(rng() % 5), 0.4, edge_costs);
    const int kind = trial % 3;
    const Platform platform = kind == 0   ? Platform::reference(2 + static_cast<int>(rng() % 2))
                              : kind == 1 ? heterogeneous()
                                          : Platform::hardware(load_hardware_profile("p100"), 3);
    const Problem problem(g, platform);
    const auto n = static_cast<std::size_t>(g.num_nodes());
    const std::size_t prefix = rng() % (n + 1);
    std::vector<DeviceId> partial(n, -1);
    for (std::size_t i = 0; i < prefix; ++i)
      partial[static_cast<std::size_t>(g.topo_order()[i])] =
          static_cast<DeviceId>(rng() % static_cast<unsigned>(problem.devices()));
    const double bound = optimal_lower_bound(problem, partial);
    const double best = best_completion(problem, partial);
    EXPECT_LE(bound, best * (1 + 1e-12)) << "trial " << trial << " prefix " << prefix;
    ++checked;
    tight += bound >= best * (1 - 1e-9);
  }
  EXPECT_EQ(checked, 600);
  EXPECT_GT(tight, 0) << "the bound is never tight: suspiciously weak";
}

TEST(Optimal, NeverWorseThanTheListSchedulers) {
  for (std::uint64_t seed = 1; seed <= 3; ++seed) {
    workloads::RandomDagParams params;
    params.ops = 16;
    params.width = 5;
    params.density = 0.3;
    params.seed = seed;
    const Graph g = workloads::generate_random_dag(params);
    const Problem problem(g, Platform::reference(4));
    const OptimalPlacer placer(5);
    const std::int64_t calls = problem.simulator().calls();
    const PlaceResult placed = placer.place(problem, {});
    const Assignment& a = placed.assignment;
    // Every simulator call went through the run's evaluator: its count is the simulator's own.
    EXPECT_EQ(placed.spent.calls, problem.simulator().calls() - calls);
    EXPECT_EQ(placed.note.rfind("proven optimal", 0), 0u) << placed.note;
    const OptimalOutcome out = placer.solve(problem);
    EXPECT_TRUE(out.result.proven);
    // Both proven optimal: the same makespan (the assignments may differ among optima when the
    // incumbent searches' time limits bind, e.g. under a sanitizer).
    EXPECT_EQ(out.result.makespan, problem.simulator().makespan(a));
    const double ms = problem.simulator().makespan(a);
    for (const char* spec : {"critical-path", "heft", "etf", "balanced"})
      EXPECT_LE(ms, problem.simulator().makespan(make_placer(spec)->place(problem, {}).assignment))
          << spec;
    EXPECT_LE(out.result.lower_bound, ms);
  }
}

TEST(Optimal, LimitsStopTheSearchAndReportNotProven) {
  workloads::RandomDagParams params;
  params.ops = 150;
  params.width = 10;
  params.density = 0.2;
  const Graph g = workloads::generate_random_dag(params);
  const Problem problem(g, Platform::reference(4));
  const auto t0 = std::chrono::steady_clock::now();
  const OptimalOutcome out = OptimalPlacer(0.3).solve(problem);
  const Assignment& a = out.assignment;
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(elapsed, 5.0);  // loose: the limit is checked every 256 nodes
  const OptimalResult& r = out.result;
  EXPECT_FALSE(r.proven);
  EXPECT_TRUE(r.time_limit_hit);
  EXPECT_EQ(r.makespan, problem.simulator().makespan(a));
  EXPECT_GE(r.lower_bound, problem.lower_bound());
  EXPECT_LE(r.lower_bound, r.makespan);
  EXPECT_NE(r.describe().find("time limit hit"), std::string::npos) << r.describe();

  // A node limit (nodes=) is deterministic (with a call budget small enough that the
  // incumbent's searches end by calls, not by their time limits).
  const OptimalPlacer limited(60, 50);
  const PlaceOptions few_calls{0, {400, 0}};
  const OptimalOutcome b = limited.solve(problem, few_calls);
  EXPECT_TRUE(b.result.node_limit_hit);
  EXPECT_FALSE(b.result.proven);
  EXPECT_EQ(b.result.nodes, 50);
  EXPECT_EQ(b.assignment.device_of, limited.solve(problem, few_calls).assignment.device_of);

  // A simulator-call budget stops it within the budget, not proven, and says so.
  const PlaceResult capped = OptimalPlacer().place(problem, {0, {300, 0}});
  EXPECT_LE(capped.spent.calls, 300);
  EXPECT_NE(capped.note.find("simulator-call limit hit"), std::string::npos) << capped.note;
}

TEST(Optimal, ACallBudgetAloneLimitsTheNodes) {
  // 40 ops on 16 devices: far from a proof, and the search's leaves are rare enough that a call
  // budget alone would leave it running to its 60 s time limit.
  std::mt19937_64 rng(9);
  const Graph g = test::random_dag(rng, {40, 0.1, 10, 10, true});
  const Problem problem(g, Platform::reference(16));
  EXPECT_EQ(optimal_node_limit({3000, 0}), 100000);   // at least 100,000
  EXPECT_EQ(optimal_node_limit({20000, 0}), 400000);  // 20 per call
  EXPECT_EQ(optimal_node_limit({20000, 5}), 0);       // seconds: the time limit instead
  EXPECT_EQ(optimal_node_limit({0, 0}), 0);
  const PlaceOptions calls{3, {3000, 0}};
  const OptimalOutcome a = OptimalPlacer().solve(problem, calls);
  EXPECT_TRUE(a.result.node_limit_hit) << a.result.describe();
  EXPECT_EQ(a.result.nodes, 100000);
  if (!test::kSanitized) {  // the same search again: a third of its 29 s under ASan
    EXPECT_EQ(a.assignment.device_of, OptimalPlacer().solve(problem, calls).assignment.device_of);
  }
  // nodes=0 or seconds= alone in the spec ask for a search limited by time (and calls) only.
  for (const char* spec : {"optimal:seconds=0.2", "optimal:seconds=0.2,nodes=0"}) {
    const PlaceResult r = make_placer(spec)->place(problem, calls);
    EXPECT_EQ(r.note.find("node limit"), std::string::npos) << spec << ": " << r.note;
  }
}

TEST(Optimal, SpecsAndBadPartialAssignments) {
  EXPECT_EQ(make_placer("optimal:seconds=5,nodes=100")->name(), "optimal");
  EXPECT_THROW(make_placer("optimal:nodes=-2"), InputError);
  EXPECT_THROW(make_placer("optimal:depth=3"), InputError);
  GraphBuilder b;
  Node n;
  n.compute_cost = 1;
  n.transfer_cost = 1;
  b.add_node(n);
  b.add_node(n);
  b.add_edge(0, 1);
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  EXPECT_THROW(optimal_lower_bound(problem, std::vector<DeviceId>{-1, 0}), InputError);
  EXPECT_THROW(optimal_lower_bound(problem, std::vector<DeviceId>{0}), InputError);
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{0, 1}), 3);  // 1 + transfer 1 + 1
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{0, -1}), 2);
}

// Fan-out: successors of an op either share its device, one after another, or pay the
// transfer first (the tail bound), whether the op is assigned or not.
TEST(Optimal, TailBoundSerialisesFanOut) {
  GraphBuilder b;
  Node root;
  root.compute_cost = 1;
  root.transfer_cost = 10;
  b.add_node(root);
  Node leaf;
  leaf.compute_cost = 1;
  leaf.transfer_cost = 1;
  for (NodeId v = 1; v <= 3; ++v) {
    b.add_node(leaf);
    b.add_edge(0, v);
  }
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(2));
  EXPECT_EQ(best_completion(problem, {-1, -1, -1, -1}), 4);
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{0, -1, -1, -1}), 4);
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{-1, -1, -1, -1}), 4);
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{0, 0, -1, -1}), 4);
  EXPECT_EQ(optimal_lower_bound(problem, std::vector<DeviceId>{0, 1, -1, -1}), 12);
}

}  // namespace
}  // namespace doppler
