// The lower bound with transfers (graph/communication_bound.hpp): hand-computed optima where it
// is tight, never above the brute-force optimum on small random graphs (reference model and
// hardware profiles), never above any placement of larger graphs, and strictly tighter than the
// transfer-free bound where transfers dominate.
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/graph/communication_bound.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

double optimum(const Problem& problem) {
  return problem.simulator().makespan(ExhaustivePlacer().place(problem, {}).assignment);
}

// Diamond a -> {b, c} -> d, (C, M): a (2,1), b (3,2), c (1,5), d (4,0). Without transfers the
// bound is the path a, b, d = 9. With them: b's data reaches d at 2 + 3 + 2 = 7 at the earliest,
// c's at 2 + 1 + 5 = 8; keeping c local (b remote) gives max(7, 3) = 7, keeping both gives
// a's finish 2 + 1 + 3 = 6 on one device; so d starts at 6 or later and ends at 10 or later.
// Optimum: everything on one device, 2 + 3 + 1 + 4 = 10.
TEST(TransferBound, DiamondIsTightByHand) {
  const Graph g =
      test::ref_graph({{2, 1}, {3, 2}, {1, 5}, {4, 0}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const CostModel cost = CostModel::reference(g);
  for (int p : {2, 4}) EXPECT_EQ(communication_lower_bound(g, cost, p), 10) << p;
  EXPECT_EQ(communication_lower_bound(g, cost, 1), 10);  // total work
  const Problem problem(g, Platform::reference(2));
  EXPECT_EQ(problem.lower_bound(), 9);
  EXPECT_EQ(problem.transfer_lower_bound(), 10);
  EXPECT_EQ(optimum(problem), 10);
}

// Fork-join a (1,2) -> {b (5,2), c (5,2)} -> d (1,0) on 2 devices: b and c start at 1 at the
// earliest (a local) and end at 6; d gets one of them locally at 6 and the other at 6 + 2 = 8,
// or both locally at 1 + 5 + 5 = 11: the bound is 8 + 1 = 9, reached by a, b on one device and
// c, d on the other.
TEST(TransferBound, ForkJoinIsTightByHand) {
  const Graph g =
      test::ref_graph({{1, 2}, {5, 2}, {5, 2}, {1, 0}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
  const CostModel cost = CostModel::reference(g);
  EXPECT_EQ(communication_lower_bound(g, cost, 2), 9);
  const Problem problem(g, Platform::reference(2));
  EXPECT_EQ(problem.simulator().makespan(std::vector<DeviceId>{0, 0, 1, 1}), 9);
  EXPECT_EQ(optimum(problem), 9);
}

// Fork a (1,3) -> {b (4,0), c (4,0)} on 2 devices: from the predecessors' side alone b and c
// may both start at 1 (a local to each), a bound of 5. From a's successors' side: both on a's
// device end at 1 + 4 + 4 = 9; one remote starts at 1 + 3 = 4 and ends at 8. The bound is 8,
// reached by a, b on one device and c on the other.
TEST(TransferBound, ForkCountsLikeAJoin) {
  const Graph g = test::ref_graph({{1, 3}, {4, 0}, {4, 0}}, {{0, 1}, {0, 2}});
  EXPECT_EQ(communication_lower_bound(g, CostModel::reference(g), 2), 8);
  const Problem problem(g, Platform::reference(2));
  EXPECT_EQ(problem.simulator().makespan(std::vector<DeviceId>{0, 0, 1}), 8);
  EXPECT_EQ(optimum(problem), 8);
}

// A chain whose transfer costs more than the consumer: keeping it together is optimal.
TEST(TransferBound, ExpensiveChainStaysTogether) {
  const Graph g = test::ref_graph({{2, 10}, {3, 10}, {4, 0}}, {{0, 1}, {1, 2}});
  EXPECT_EQ(communication_lower_bound(g, CostModel::reference(g), 3), 9);
}

// Wide join of 40 independent producers (cost 1, transfer 1) into one sink on many devices: more
// than the 32 enumerated prefixes. Best: the sink's device runs one producer, the others arrive
// at 1 + 1 = 2, so the sink starts at 2 and the optimum is 3 (the bound must not exceed it).
TEST(TransferBound, WideJoinBeyondEnumeratedPrefixes) {
  std::vector<test::RefNode> costs(41, {1, 1});
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 40; ++i) edges.emplace_back(i, 40);
  const Graph g = test::ref_graph(costs, edges);
  EXPECT_EQ(communication_lower_bound(g, CostModel::reference(g), 64), 3);
  // With one device everything is serial: 41.
  EXPECT_EQ(communication_lower_bound(g, CostModel::reference(g), 1), 41);
}

TEST(TransferBound, NeverAboveTheOptimumUnderTheReferenceModel) {
  std::mt19937_64 rng(41);
  int tighter = 0;
  for (int trial = 0; trial < 80; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 3 + static_cast<int>(rng() % 6);
    opt.edge_prob = 0.2 + static_cast<double>(rng() % 60) / 100;
    opt.max_transfer = trial % 2 ? 10 : 30;  // half of them transfer-dominated
    const Graph g = test::random_dag(rng, opt);
    const int p = 2 + static_cast<int>(rng() % 2);
    const Problem problem(g, Platform::reference(p));
    const double bound = problem.transfer_lower_bound();
    EXPECT_LE(bound, optimum(problem) + 1e-9) << "trial " << trial;
    EXPECT_GE(bound, problem.lower_bound());
    tighter += bound > problem.lower_bound();
  }
  EXPECT_GE(tighter, 20);  // it is a real improvement, not the old bound again
}

// Small random DAGs with physical costs on hardware profiles (heterogeneous links, latencies,
// slots): the bound never exceeds the brute-force optimum.
TEST(TransferBound, NeverAboveTheOptimumOnHardware) {
  int tighter = 0, trial = 0;
  for (const char* profile : {"p100", "v100", "h100", "cpu"}) {
    for (std::uint64_t seed = 0; seed < 8; ++seed, ++trial) {
      workloads::RandomDagParams params;
      params.ops = 6 + static_cast<std::int64_t>(seed % 3);
      params.width = 3;
      params.density = 0.5;
      params.ccr = seed % 2 ? 0.05 : 1.0;
      params.seed = seed;
      const Graph g = workloads::generate_random_dag(params);
      const Problem problem(g, Platform::hardware(load_hardware_profile(profile), 3));
      const double bound = problem.transfer_lower_bound();
      EXPECT_LE(bound, optimum(problem) * (1 + 1e-12)) << profile << " seed " << seed;
      tighter += bound > problem.lower_bound();
    }
  }
  EXPECT_GE(tighter, trial / 8);
}

// Larger graphs on every shipped profile: no placement found by the list schedulers, clustering,
// a short search or random assignment is below the bound.
TEST(TransferBound, NoPlacementBelowItOnLargerGraphs) {
  std::mt19937_64 rng(5);
  for (const ShippedProfile& sp : shipped_profiles()) {
    workloads::RandomDagParams params;
    params.ops = 300;
    params.width = 12;
    params.ccr = 0.2;
    params.seed = rng();
    const Graph g = workloads::generate_random_dag(params);
    HardwareProfile hw = load_hardware_profile(sp.name);
    const int p = std::min(4, hw.num_devices());
    const Problem problem(g, Platform::hardware(std::move(hw), p));
    const double bound = problem.transfer_lower_bound();
    for (const char* m : {"etf", "heft", "dsc", "local-search"}) {
      const Assignment a = make_placer(m)->place(problem, {1, {500, 0}}).assignment;
      EXPECT_LE(bound, problem.simulator().makespan(a) * (1 + 1e-12)) << sp.name << " " << m;
    }
    std::uniform_int_distribution<int> dev(0, p - 1);
    for (int k = 0; k < 50; ++k) {
      std::vector<DeviceId> a(static_cast<std::size_t>(g.num_nodes()));
      for (auto& d : a) d = static_cast<DeviceId>(dev(rng));
      EXPECT_LE(bound, problem.simulator().makespan(a) * (1 + 1e-12)) << sp.name;
    }
  }
}

TEST(TransferBound, RefusesDeviceCountsTheModelCannotModel) {
  workloads::RandomDagParams params;
  params.ops = 10;
  params.width = 4;
  const Graph g = workloads::generate_random_dag(params);
  const Platform platform = Platform::hardware(load_hardware_profile("p100"), 4);
  EXPECT_THROW(communication_lower_bound(g, platform.cost_model(g), 5), InputError);
}

}  // namespace
}  // namespace doppler
