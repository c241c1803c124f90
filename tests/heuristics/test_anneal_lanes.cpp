// Speculative lanes (AnnealSettings::lanes): a chain simulates several proposed moves at once
// and takes the first it accepts. Checked against the plain simulator: the makespan the run
// reports is its assignment's, the result of the descent is a local optimum under single-op
// moves (found by brute force), incremental and full simulation in the lanes give the same run,
// the calls never exceed the budget and the run is deterministic for a seed.
#include <random>

#include <gtest/gtest.h>

#include "support/sanitized.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/budget.hpp"

namespace doppler {
namespace {

Graph lane_dag(std::uint64_t seed, int ops) {
  std::mt19937_64 rng(seed);
  return test::random_dag(rng, {ops, 0.1, 10, 12, true});
}

AnnealResult run_lanes(const Problem& problem, std::int64_t calls, int threads, int lanes,
                       bool incremental, std::uint64_t seed, AnnealSettings s = {}) {
  const std::vector<DeviceId> start(static_cast<std::size_t>(problem.graph().num_nodes()), 0);
  const double start_ms = problem.simulator().makespan(start);
  s.threads = threads;
  s.lanes = lanes;
  s.incremental = incremental;
  BudgetedEvaluator eval(problem.simulator(), {calls, 0});
  AnnealResult r = anneal(problem, start, start_ms, eval, s, seed);
  EXPECT_LE(eval.calls(), calls);
  return r;
}

// True when no single op moved to another device lowers the makespan of `a`.
bool one_opt(const Problem& problem, std::vector<DeviceId> a) {
  const double ms = problem.simulator().makespan(a);
  for (std::size_t v = 0; v < a.size(); ++v) {
    const DeviceId old = a[v];
    for (DeviceId d = 0; d < problem.devices(); ++d) {
      a[v] = d;
      if (problem.simulator().makespan(a) < ms) return false;
    }
    a[v] = old;
  }
  return true;
}

TEST(AnnealLanes, ReportsTheTrueMakespanAndEndsInALocalOptimum) {
  // One seed under the sanitizers (30 s of ThreadSanitizer's run for three).
  for (std::uint64_t seed = 0; seed < (test::kSanitized ? 1u : 3u); ++seed) {
    const Graph g = lane_dag(20 + seed, 30);
    const Problem problem(g, Platform::reference(3));
    for (int lanes : {2, 3}) {
      AnnealSettings s;
      s.polish = 0.5;  // a long descent: it ends before the budget does
      const AnnealResult r = run_lanes(problem, 20000, lanes, lanes, true, seed, s);
      EXPECT_EQ(problem.simulator().makespan(r.best), r.best_makespan) << "lanes " << lanes;
      EXPECT_TRUE(one_opt(problem, r.best)) << "seed " << seed << ", lanes " << lanes;
    }
  }
}

TEST(AnnealLanes, IncrementalAndFullSimulationMakeTheSameRun) {
  // The lanes' incremental bases lag behind the current assignment by the moves other lanes
  // had accepted (and are re-simulated past 32 such ops): the makespans, and so every decision,
  // must still be those of full simulation.
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    const Graph g = lane_dag(30 + seed, 80);
    const Problem problem(g, Platform::reference(4));
    const AnnealResult inc = run_lanes(problem, 6000, 4, 4, true, seed);
    const AnnealResult full = run_lanes(problem, 6000, 4, 4, false, seed);
    EXPECT_EQ(inc.best, full.best) << "seed " << seed;
    EXPECT_EQ(inc.best_makespan, full.best_makespan) << "seed " << seed;
  }
}

TEST(AnnealLanes, SpendsAtMostItsBudgetAndRepeatsForASeed) {
  const Graph g = lane_dag(40, 60);
  const Problem problem(g, Platform::reference(4));
  for (const auto& [threads, lanes] : {std::pair{2, 2}, {4, 2}, {3, 3}}) {
    const AnnealResult a = run_lanes(problem, 5001, threads, lanes, true, 9);
    const AnnealResult b = run_lanes(problem, 5001, threads, lanes, true, 9);
    EXPECT_EQ(a.best, b.best) << threads << " threads, " << lanes << " lanes";
    EXPECT_LE(a.evaluations, 5001);
    EXPECT_GE(a.evaluations, 5001 - 10);
  }
  // Focused picks spend calls of their own while a step's moves are proposed.
  AnnealSettings focused;
  focused.focus = 0.5;
  focused.focus_refresh = 1;
  for (std::int64_t calls : {3001, 3002, 3003}) {
    const AnnealResult r = run_lanes(problem, calls, 3, 3, true, 4, focused);
    EXPECT_LE(r.evaluations, calls);
    EXPECT_EQ(problem.simulator().makespan(r.best), r.best_makespan);
  }
}

TEST(AnnealLanes, LanesBeyondTheThreadsAreNotUsed) {
  // One thread has room for one lane: the run is the plain single-thread annealer's.
  const Graph g = lane_dag(50, 60);
  const Problem problem(g, Platform::reference(4));
  const AnnealResult plain = run_lanes(problem, 4000, 1, 1, true, 3);
  const AnnealResult clamped = run_lanes(problem, 4000, 1, 4, true, 3);
  EXPECT_EQ(plain.best, clamped.best);
  EXPECT_EQ(plain.best_makespan, clamped.best_makespan);
}

}  // namespace
}  // namespace doppler
