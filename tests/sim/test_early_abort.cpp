// Early-abort evaluation (Simulator::makespan_below): on random graphs, assignments and cutoffs
// the decision "at most the cutoff" equals the full simulator's and the value below the cutoff is
// the exact makespan; the annealer makes the same decisions with and without it.
#include <random>

#include <gtest/gtest.h>

#include "anneal_compare.hpp"
#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/anneal.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

using test::random_assignment;

// Checks makespan_below against makespan() for cutoffs around and at the exact makespan.
void check_cutoffs(const Simulator& sim, std::mt19937_64& rng, int trials) {
  SimWorkspace ws;
  std::uniform_real_distribution<double> scale(0.3, 1.7);
  for (int t = 0; t < trials; ++t) {
    const auto a = random_assignment(rng, sim.graph().num_nodes(), sim.devices());
    const double ms = sim.makespan(a);
    for (const double cutoff : {ms, ms * 0.999, ms * 1.001, ms * scale(rng), 0.0}) {
      const double below = sim.makespan_below(a, ws, cutoff);
      ASSERT_EQ(below <= cutoff, ms <= cutoff) << "cutoff " << cutoff << " makespan " << ms;
      if (ms <= cutoff) {
        EXPECT_EQ(below, ms);
      }
      EXPECT_LE(below, ms * (1 + 1e-9));  // a lower bound when it stops early
    }
  }
}

TEST(EarlyAbort, SameDecisionAsFullSimulationOnReferenceGraphs) {
  std::mt19937_64 rng(11);
  for (int g_i = 0; g_i < 30; ++g_i) {
    test::RandomDagOptions opt;
    opt.nodes = 5 + g_i * 7;
    opt.edge_prob = 0.05 + 0.02 * (g_i % 10);
    const Graph g = test::random_dag(rng, opt);
    check_cutoffs(Simulator(g, Platform::reference(1 + g_i % 6)), rng, 20);
  }
}

TEST(EarlyAbort, SameDecisionWithPerEdgeCostsAndHardwareProfiles) {
  std::mt19937_64 rng(12);
  for (int g_i = 0; g_i < 10; ++g_i) {
    std::vector<double> c;
    std::vector<test::CostEdge> edges;
    std::uniform_int_distribution<int> cost(0, 9);
    for (int v = 0; v < 40; ++v) {
      c.push_back(cost(rng));
      for (int u = 0; u < v; ++u)
        if (cost(rng) == 0) edges.push_back({u, v, static_cast<double>(cost(rng))});
    }
    const Graph g = test::edge_cost_graph(c, edges);
    check_cutoffs(Simulator(g, Platform::reference(4)), rng, 20);

    std::vector<test::PhysNode> phys;
    std::vector<std::pair<int, int>> pe;
    for (int v = 0; v < 40; ++v) {
      phys.push_back({1e9 * (1 + cost(rng)), 1e6 * (1 + cost(rng))});
      for (int u = 0; u < v; ++u)
        if (cost(rng) == 0) pe.emplace_back(u, v);
    }
    const Graph hg = test::phys_graph(phys, pe);
    check_cutoffs(Simulator(hg, Platform::hardware(load_hardware_profile("p100"), 4)), rng, 20);
    HardwareProfile charged = load_hardware_profile("cpu");
    for (DeviceSpec& d : charged.devices) d.copy_share = 1;  // copies delay the running ops
    check_cutoffs(Simulator(hg, Platform::hardware(charged, 2)), rng, 20);
    for (DeviceSpec& d : charged.devices) d.contention = 0.4;  // and the others' compute too
    check_cutoffs(Simulator(hg, Platform::hardware(std::move(charged), 2)), rng, 20);
  }
}

TEST(EarlyAbort, PartialAssignmentsAreSimulatedInFull) {
  // Excluded ops (device -1) would make the path bound count work that never runs.
  const Graph g = test::ref_graph({{5, 1}, {5, 1}, {50, 1}}, {{0, 1}, {1, 2}});
  const Simulator sim(g, Platform::reference(2));
  SimWorkspace ws;
  const std::vector<DeviceId> a = {0, 0, -1};
  EXPECT_EQ(sim.makespan_below(a, ws, 10.0), 10.0);
}

TEST(EarlyAbort, AnnealerDecisionsAreIdenticalWithAndWithoutIt) {
  std::mt19937_64 rng(13);
  for (int g_i = 0; g_i < 8; ++g_i) {
    test::RandomDagOptions opt;
    opt.nodes = 30 + 20 * g_i;
    opt.edge_prob = 0.08;
    const Graph g = test::random_dag(rng, opt);
    const Problem problem(g, Platform::reference(3 + g_i % 4));
    const auto start = random_assignment(rng, g.num_nodes(), problem.devices());
    AnnealSettings with, without;
    without.early_abort = false;
    test::expect_same_anneal(problem, start, with, without, 3000, 7);
  }
}

}  // namespace
}  // namespace doppler
