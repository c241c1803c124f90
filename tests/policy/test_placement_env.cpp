// PlacementEnv (policy/placement_env.hpp): episodes against hand-computed makespans, the
// simulator, the critical-path placer and the candidate rule.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/hardware/platform.hpp"
#include "doppler/heuristics/run_placer.hpp"
#include "doppler/policy/placement_env.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// Diamond 0 -> {1, 2} -> 3; compute 2, 5, 3, 1; every edge costs 4 to cross devices.
Graph diamond() {
  return test::edge_cost_graph({2, 5, 3, 1}, {{0, 1, 4}, {0, 2, 4}, {1, 3, 4}, {2, 3, 4}});
}

TEST(PlacementEnv, PlcFollowsBLevelsAndOneDeviceSumsTheCompute) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(2));
  PlacementEnv env(problem, EnvMode::plc);
  // b-levels: 0: 2+4+5+4+1 = 16, 1: 5+4+1 = 10, 2: 3+4+1 = 8, 3: 1.
  std::vector<NodeId> seen;
  while (!env.done()) {
    ASSERT_FALSE(env.selecting());
    seen.push_back(env.op());
    EXPECT_EQ(env.reward(), 0.0);
    env.place(0);
  }
  EXPECT_EQ(seen, (std::vector<NodeId>{0, 1, 2, 3}));
  EXPECT_DOUBLE_EQ(env.makespan(), 2 + 5 + 3 + 1);
  EXPECT_EQ(env.steps(), 4);
  EXPECT_DOUBLE_EQ(env.reference_makespan(), run_placer("critical-path", problem, {}).makespan);
  EXPECT_DOUBLE_EQ(env.reward(), -env.makespan() / env.reference_makespan());
}

TEST(PlacementEnv, SplittingTheDiamondPaysTheTransfers) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(2));
  PlacementEnv env(problem, EnvMode::sel_plc);
  for (const auto& [op, dev] :
       std::vector<std::pair<NodeId, DeviceId>>{{0, 0}, {2, 1}, {1, 0}, {3, 0}}) {
    ASSERT_TRUE(env.selecting());
    env.select(op);
    EXPECT_EQ(env.op(), op);
    env.place(dev);
  }
  // 0 on d0 [0,2]; 1 on d0 [2,7]; 2 on d1 [2+4, 9]; 3 on d0 after 2's output arrives at 13.
  EXPECT_DOUBLE_EQ(env.makespan(), 14);
  EXPECT_EQ(env.steps(), 8);
}

TEST(PlacementEnv, InvalidActionsThrowAndChangeNothing) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(2));
  PlacementEnv env(problem, EnvMode::sel_plc);
  EXPECT_THROW(env.place(0), InputError);   // nothing selected
  EXPECT_THROW(env.select(3), InputError);  // predecessors unplaced
  EXPECT_THROW(env.select(9), InputError);  // no such op
  env.select(0);
  EXPECT_THROW(env.select(1), InputError);  // op 0 awaits its device
  EXPECT_THROW(env.place(2), InputError);   // device out of range
  EXPECT_THROW(env.place(-1), InputError);
  EXPECT_EQ(env.steps(), 1);
  env.place(1);
  EXPECT_EQ(env.device_of()[0], 1);
}

TEST(PlacementEnv, RandomEpisodesMatchTheSimulatorAndRespectTheCandidateRule) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 20; ++trial) {
    const Graph g = test::random_dag(rng, {.nodes = 30, .edge_prob = 0.15});
    const Problem problem(g, Platform::reference(3));
    PlacementEnv env(problem, trial % 2 ? EnvMode::plc : EnvMode::sel_plc, trial % 3 == 0);
    while (!env.done()) {
      if (env.selecting()) {
        const auto& c = env.candidates();
        ASSERT_FALSE(c.empty());
        env.select(c[std::uniform_int_distribution<std::size_t>(0, c.size() - 1)(rng)]);
      }
      const NodeId v = env.op();
      for (NodeId u : g.predecessors(v)) {  // deferred inputs are placed with v
        if (g.node(u).kind != OpKind::input) {
          ASSERT_GE(env.device_of()[u], 0);
        }
      }
      env.place(std::uniform_int_distribution<int>(0, 2)(rng));
    }
    for (DeviceId d : env.device_of()) ASSERT_GE(d, 0);
    EXPECT_DOUBLE_EQ(env.makespan(), problem.simulator().makespan(env.device_of()));
    EXPECT_EQ(env.order().size(), static_cast<std::size_t>(g.num_nodes()));
    env.reset();
    EXPECT_EQ(env.steps(), 0);
    EXPECT_EQ(env.makespan(), 0.0);
  }
}

TEST(PlacementEnv, DeviceFeaturesGiveTheEarliestStart) {
  const Graph g = diamond();
  const Problem problem(g, Platform::reference(2));
  PlacementEnv env(problem, EnvMode::plc);
  env.place(0);  // op 0 on d0, finishing at 2
  ASSERT_EQ(env.op(), 1);
  const std::vector<float> f = env.device_features();
  ASSERT_EQ(f.size(), 10u);
  EXPECT_FLOAT_EQ(f[0 * 5 + 4], 2);      // on d0: after op 0
  EXPECT_FLOAT_EQ(f[1 * 5 + 4], 2 + 4);  // on d1: after the transfer
  EXPECT_FLOAT_EQ(f[0 * 5 + 0], 2);      // compute already on d0
  EXPECT_FLOAT_EQ(f[1 * 5 + 0], 0);
}

}  // namespace
}  // namespace doppler
