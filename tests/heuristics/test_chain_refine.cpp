// Chain refinement (heuristics/chain_refine.hpp): the chain model and its best matching on a
// diamond by hand, the refined placement running as chains (an ASAP schedule computed here, no
// two ops of a device overlapping, equal to the simulator's makespan), a margin over the
// placements it starts from on a deep DAG, where it applies, and the level placer's use of it.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/chain_refine.hpp"
#include "doppler/heuristics/levels.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

using test::ref_graph;

// a -> b, a -> c, b -> d, c -> d; compute 1 each, transfers 5.
Graph diamond() {
  return ref_graph({{1, 5}, {1, 5}, {1, 5}, {1, 5}}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}});
}

// Each op on its own device: every edge pays, 1 + 5 + 1 + 5 + 1 = 13. As chains, a feeds one of
// b and c locally and d receives the other's locally: the remote branch arrives at 1 + 5 + 1 = 7,
// its transfer to d is saved, and the local branch's transfer (2 + 5 = 7) arrives as well: d
// runs 7 to 8. (All on one device would give 4: outside the model, which keeps one op at a time
// per device.)
TEST(ChainRefine, FindsTheDiamondsBestChainsByHand) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(4));
  ASSERT_TRUE(chains_apply(problem));
  EXPECT_DOUBLE_EQ(chain_makespan(problem, {0, 1, 2, 3}), 13.0);
  const auto refined = refine_chains(problem, {0, 1, 2, 3});
  ASSERT_TRUE(refined.has_value());
  EXPECT_DOUBLE_EQ(problem.simulator().makespan(*refined), 8.0);
  EXPECT_DOUBLE_EQ(chain_makespan(problem, *refined), 8.0);
}

// The ASAP schedule of a placement with free local edges (no device contention): finish times.
std::vector<double> asap_finish(const Problem& problem, const std::vector<DeviceId>& dev) {
  const Graph& g = problem.graph();
  std::vector<double> finish(static_cast<std::size_t>(g.num_nodes()), 0.0);
  for (NodeId v : g.topo_order()) {
    double start = 0;
    const auto preds = g.predecessors(v);
    const auto edges = g.in_edges(v);
    for (std::size_t i = 0; i < preds.size(); ++i) {
      const auto u = static_cast<std::size_t>(preds[i]);
      const bool local = dev[u] == dev[static_cast<std::size_t>(v)];
      start = std::max(start, finish[u] + (local ? 0.0 : problem.cost().transfer(edges[i], 0, 1)));
    }
    finish[static_cast<std::size_t>(v)] = start + problem.cost().compute(v, 0);
  }
  return finish;
}

// Deep layered DAGs (1-8 ops per layer) on 64 devices: the refined placement's ASAP schedule
// never runs two ops of one device at once, so it is the runtime's schedule: the simulator's
// makespan equals its latest finish.
TEST(ChainRefine, TheRefinedPlacementRunsAsChains) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const Graph g = workloads::generate_random_dag({400, 8, 0.3, 1.0, seed});
    const Problem problem(g, Platform::reference(64));
    const Assignment start = make_placer("dsc")->place(problem, {}).assignment;
    const std::vector<DeviceId> dev = refine_chains(problem, start.device_of).value();
    const std::vector<double> finish = asap_finish(problem, dev);
    const double makespan = *std::max_element(finish.begin(), finish.end());
    std::vector<std::vector<std::pair<double, double>>> busy(64);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto i = static_cast<std::size_t>(v);
      busy[static_cast<std::size_t>(dev[i])].push_back(
          {finish[i] - problem.cost().compute(v, 0), finish[i]});
    }
    for (auto& spans : busy) {
      std::sort(spans.begin(), spans.end());
      for (std::size_t k = 1; k < spans.size(); ++k)
        EXPECT_LE(spans[k - 1].second, spans[k].first + 1e-12 * makespan) << "seed " << seed;
    }
    EXPECT_NEAR(problem.simulator().makespan(dev), makespan, 1e-12 * makespan) << "seed " << seed;
  }
}

// 2,000 ops in about 120 layers of 1-32 ops (seed 1) on 64 devices.
Graph deep_dag() {
  return workloads::generate_random_dag({2000, 32, 0.2, 1.0, 1});
}

// From DSC's and the critical-path rule's placements of a deep DAG the refinement is shorter by
// more than 3% (measured x 1e10: DSC 24.66 to 23.76, critical path 24.90 to 23.72); from the
// level placer's own passes it is never longer.
TEST(ChainRefine, ShortensThePlacementsItStartsFrom) {
  const Graph g = deep_dag();
  const Problem problem(g, Platform::reference(64));
  for (const char* m : {"dsc", "critical-path"}) {
    const Assignment a = make_placer(m)->place(problem, {}).assignment;
    const double before = problem.simulator().makespan(a.device_of);
    const double after = problem.simulator().makespan(refine_chains(problem, a.device_of).value());
    EXPECT_LT(after, 0.97 * before) << m;
  }
  const double passes = problem.simulator().makespan(
      make_placer("levels:chains=0")->place(problem, {}).assignment.device_of);
  EXPECT_LE(
      problem.simulator().makespan(make_placer("levels")->place(problem, {}).assignment.device_of),
      passes);
}

// Not where a level is wider than the device count, nor on a hardware profile, nor on one
// device: nullopt, and the level placer's result is its passes' alone.
TEST(ChainRefine, AppliesOnlyWhereChainsFit) {
  const Graph g = deep_dag();  // levels of up to 32 ops
  EXPECT_TRUE(chains_apply(Problem(g, Platform::reference(32))));
  EXPECT_FALSE(chains_apply(Problem(g, Platform::reference(31))));
  EXPECT_FALSE(refine_chains(Problem(g, Platform::reference(16)), std::vector<DeviceId>(2000, 0)));
  const Graph d = diamond();
  EXPECT_FALSE(chains_apply(Problem(d, Platform::hardware(load_hardware_profile("p100"), 4))));
  EXPECT_FALSE(chains_apply(Problem(d, Platform::reference(1))));
  EXPECT_THROW(chain_makespan(Problem(d, Platform::reference(1)), {0, 0, 0, 0}), InputError);
  const Problem narrow(g, Platform::reference(16));
  EXPECT_EQ(LevelsPlacer().place(narrow, {}).assignment.device_of,
            make_placer("levels:chains=0")->place(narrow, {}).assignment.device_of);
}

TEST(ChainRefine, RefusesSettingsOutOfRange) {
  const Graph d = diamond();
  const Problem problem(d, Platform::reference(4));
  EXPECT_THROW(refine_chains(problem, {0, 1, 2, 3}, {0, 0.05}), InputError);
  EXPECT_THROW(refine_chains(problem, {0, 1, 2, 3}, {4, 0}), InputError);
  EXPECT_THROW(refine_chains(problem, {0, 1, 2}), InputError);  // one device short
  EXPECT_THROW(chain_makespan(problem, {0, 1, 2, 3, 0}), InputError);
  EXPECT_THROW(make_placer("levels:chains=-1"), InputError);
}

}  // namespace
}  // namespace doppler
