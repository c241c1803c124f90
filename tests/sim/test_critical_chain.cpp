// critical_chain: hand-traced chains on tiny schedules (a transfer-bound chain, a device-bound
// one, a fan-in), and on random DAGs the chain is tight: it starts at the op finishing at the
// makespan, each link is a data dependency whose arrival is the op's ready time or a device
// predecessor finishing exactly when the op starts, and it ends at an op that started at 0.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "anneal_compare.hpp"
#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/sim/critical_chain.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

using test::ref_graph;

std::vector<NodeId> chain_of(const Graph& g, int p, std::vector<DeviceId> dev) {
  const Simulator sim(g, Platform::reference(p));
  return critical_chain(g, sim.simulate(Assignment{p, std::move(dev), {}, ""}));
}

// a -> b -> c on [0, 1, 0]: a 0-2, b 7-10, c 11-15; every start waits for a transfer.
TEST(CriticalChain, FollowsTransfersBackToTheSource) {
  const Graph g = ref_graph({{2, 5}, {3, 1}, {4, 0}}, {{0, 1}, {1, 2}});
  EXPECT_EQ(chain_of(g, 2, {0, 1, 0}), (std::vector<NodeId>{2, 1, 0}));
}

// (test_reference_hand's OpWaitsForItsDeviceInReadyOrder) On device 0, A runs 0-5, B 5-6, the
// C-op 6-7: the C-op (ready 4) waited for B, B (ready 3) waited for A, A waited for nothing.
TEST(CriticalChain, FollowsTheDeviceWhenAnOpWaitedForIt) {
  const Graph g = ref_graph({{1, 0}, {5, 0}, {1, 0}, {1, 2}, {2, 1}}, {{3, 2}, {4, 0}});
  EXPECT_EQ(chain_of(g, 2, {0, 0, 0, 1, 1}), (std::vector<NodeId>{0, 2, 1}));
}

// c on device 0 reads a (local, at 3) and b (device 1, arrives 5 + 1 = 6): b decided c's start.
TEST(CriticalChain, TakesTheInputThatArrivedLast) {
  const Graph g = ref_graph({{3, 2}, {5, 1}, {1, 0}}, {{0, 2}, {1, 2}});
  EXPECT_EQ(chain_of(g, 2, {0, 1, 0}), (std::vector<NodeId>{2, 1}));
}

TEST(CriticalChain, IsTightOnRandomSchedules) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < 200; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 5 + static_cast<int>(rng() % 60);
    opt.edge_prob = 0.05 + static_cast<double>(rng() % 30) / 100;
    const Graph g = test::random_dag(rng, opt);
    const int p = 1 + static_cast<int>(rng() % 4);
    const Simulator sim(g, Platform::reference(p));
    const Schedule s =
        sim.simulate(Assignment{p, test::random_assignment(rng, g.num_nodes(), p), {}, ""});
    const auto chain = critical_chain(g, s);
    ASSERT_FALSE(chain.empty());
    const auto at = [&](const std::vector<double>& t, NodeId v) {
      return t[static_cast<std::size_t>(v)];
    };
    EXPECT_EQ(at(s.finish, chain.front()), s.makespan) << "trial " << trial;
    EXPECT_EQ(at(s.start, chain.back()), 0)
        << "trial " << trial << " chain " << chain.size() << " back " << chain.back() << " ready "
        << at(s.ready, chain.back()) << " preds " << g.predecessors(chain.back()).size();
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
      const NodeId x = chain[i], y = chain[i + 1];
      const auto preds = g.predecessors(x);
      const bool is_pred = std::find(preds.begin(), preds.end(), y) != preds.end();
      if (at(s.start, x) > at(s.ready, x)) {  // x waited for its device: y freed it
        EXPECT_EQ(s.device[static_cast<std::size_t>(y)], s.device[static_cast<std::size_t>(x)]);
        EXPECT_EQ(at(s.finish, y), at(s.start, x)) << "trial " << trial;
      } else {  // x waited for y's data
        EXPECT_TRUE(is_pred) << "trial " << trial;
        const double transfer =
            s.device[static_cast<std::size_t>(y)] == s.device[static_cast<std::size_t>(x)]
                ? 0
                : g.node(y).transfer_cost.value_or(0);
        EXPECT_EQ(at(s.finish, y) + transfer, at(s.ready, x)) << "trial " << trial;
      }
    }
  }
}

}  // namespace
}  // namespace doppler
