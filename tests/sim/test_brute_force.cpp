// The reference model against an independent, plainly written time-stepping loop on 1,000 random
// small cases. The loop shares no code with the simulator: at each instant it starts, on every
// free device, the ready op that became ready earliest (ties: lower id), until nothing changes,
// then jumps to the next instant at which something finishes or arrives.
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

double brute_force(const Graph& g, const std::vector<DeviceId>& dev, int p) {
  const int n = g.num_nodes();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> finish(static_cast<std::size_t>(n), inf);
  std::vector<char> started(static_cast<std::size_t>(n), 0);
  std::vector<double> busy_until(static_cast<std::size_t>(p), 0);
  // When v's inputs are all on its device (inf while a producer has not finished).
  const auto ready_at = [&](int v) {
    double r = 0;
    for (EdgeId e : g.in_edges(v)) {
      const int u = g.edge(e).src;
      const double f = finish[static_cast<std::size_t>(u)];
      if (f == inf) return inf;
      const double arrive = dev[static_cast<std::size_t>(u)] == dev[static_cast<std::size_t>(v)]
                                ? f
                                : f + *g.node(u).transfer_cost;
      r = std::max(r, arrive);
    }
    return r;
  };
  double t = 0;
  int done = 0;
  while (done < n) {
    bool changed = true;
    while (changed) {
      changed = false;
      for (int d = 0; d < p; ++d) {
        if (busy_until[static_cast<std::size_t>(d)] > t) continue;
        int best = -1;
        double best_ready = inf;
        for (int v = 0; v < n; ++v) {
          if (started[static_cast<std::size_t>(v)] || dev[static_cast<std::size_t>(v)] != d)
            continue;
          const double r = ready_at(v);
          if (r <= t && r < best_ready) {  // ascending ids: the first of equal ready times wins
            best = v;
            best_ready = r;
          }
        }
        if (best < 0) continue;
        started[static_cast<std::size_t>(best)] = 1;
        finish[static_cast<std::size_t>(best)] = t + *g.node(best).compute_cost;
        busy_until[static_cast<std::size_t>(d)] = finish[static_cast<std::size_t>(best)];
        ++done;
        changed = true;
      }
    }
    // Next instant: the earliest future finish or input arrival.
    double next = inf;
    for (int d = 0; d < p; ++d)
      if (busy_until[static_cast<std::size_t>(d)] > t)
        next = std::min(next, busy_until[static_cast<std::size_t>(d)]);
    for (int v = 0; v < n; ++v)
      if (!started[static_cast<std::size_t>(v)]) {
        const double r = ready_at(v);
        if (r > t) next = std::min(next, r);
      }
    if (done < n && next == inf) ADD_FAILURE() << "brute force stuck";
    if (next == inf) break;
    t = next;
  }
  double makespan = 0;
  for (double f : finish) makespan = std::max(makespan, f);
  return n ? makespan : 0;
}

TEST(BruteForce, ReferenceModelMatchesOnRandomCases) {
  std::mt19937_64 rng(2024);
  int with_transfers = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    test::RandomDagOptions opt;
    opt.nodes = 1 + static_cast<int>(rng() % 14);
    opt.edge_prob = static_cast<double>(rng() % 60) / 100;
    opt.max_compute = 1 + static_cast<double>(rng() % 9);
    opt.max_transfer = static_cast<double>(rng() % 12);
    const Graph g = test::random_dag(rng, opt);
    const int p = 1 + static_cast<int>(rng() % 4);
    std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()));
    for (auto& d : dev) d = static_cast<DeviceId>(rng() % static_cast<unsigned>(p));
    const Simulator sim(g, Platform::reference(p));
    const double want = brute_force(g, dev, p);
    ASSERT_EQ(sim.makespan(dev), want) << "trial " << trial;
    with_transfers += g.num_edges() > 0 && p > 1;
  }
  EXPECT_GT(with_transfers, 500);
}

}  // namespace
}  // namespace doppler
