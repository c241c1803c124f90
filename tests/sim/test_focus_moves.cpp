// Critical-chain focused moves in the annealer (AnnealSettings::focus, `local-search:focus=F`):
// incremental evaluation and early abort still make the same decisions as full simulation, the
// chain refreshes count against the call budget, the same seed gives the same result, and on
// random DAGs at equal calls focused moves beat uniform ones; moves that mend the chain
// (AnnealSettings::aim) beat plain focused ones where a transfer decides most links, and there
// dropping swap moves (AnnealSettings::swaps) pays.
#include <random>

#include <gtest/gtest.h>

#include "anneal_compare.hpp"

#include "doppler/heuristics/problem.hpp"
#include "doppler/heuristics/search_placers.hpp"

namespace doppler {
namespace {

// On 300-op DAGs of graph seeds 1..seeds on `devices` devices, from a random start, 3,000 calls:
// `s` (incremental, early abort) anneals exactly as the same settings with full simulations.
void expect_full_evaluation_agrees(const AnnealSettings& s, int devices, std::uint64_t seeds) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    const Graph g = test::generated_dag(300, seed);
    const Problem problem(g, Platform::reference(devices));
    std::mt19937_64 rng(seed);
    const auto start = test::random_assignment(rng, problem.graph().num_nodes(), devices);
    AnnealSettings full = s;
    full.incremental = false;
    full.early_abort = false;
    test::expect_same_anneal(problem, start, s, full, 3000, seed);
  }
}

// The sum over seeds 0..seeds-1 of `placer`'s makespans on `problem` under `calls` calls.
double total_makespan(const Problem& problem, const LocalSearchPlacer& placer, std::int64_t calls,
                      std::uint64_t seeds) {
  double total = 0;
  for (std::uint64_t seed = 0; seed < seeds; ++seed)
    total += problem.simulator().makespan(
        placer.place(problem, {seed, {calls, 0}}).assignment.device_of);
  return total;
}

TEST(FocusMoves, FullAndIncrementalEvaluationAgree) {
  AnnealSettings s;
  s.focus = 0.6;
  expect_full_evaluation_agrees(s, 4, 3);
}

TEST(FocusMoves, MendingMovesAgreeUnderFullAndIncrementalEvaluation) {
  AnnealSettings s;
  s.focus = 0.8;
  s.aim = 0.5;
  expect_full_evaluation_agrees(s, 16, 2);
}

TEST(FocusMoves, RefreshesCountAgainstTheBudgetAndSeedsReproduce) {
  const Graph g = test::generated_dag(400, 5);
  const Problem problem(g, Platform::reference(8));
  const LocalSearchPlacer focused({.focus = 0.5});
  const PlaceResult placed = focused.place(problem, {3, {2500, 0}});
  const Assignment& a = placed.assignment;
  EXPECT_EQ(placed.spent.calls, 2500);
  EXPECT_EQ(focused.place(problem, {3, {2500, 0}}).assignment.device_of, a.device_of);
}

// On random DAGs (400 ops, 8 devices, 5,000 calls, 3 seeds each), focused moves give a lower
// mean makespan than uniform op picks: most uniform moves touch an op off the critical chain,
// which cannot shorten the schedule.
TEST(FocusMoves, BeatUniformPicksAtEqualCalls) {
  for (std::uint64_t gs = 1; gs <= 2; ++gs) {
    const Graph g = test::generated_dag(400, gs);
    const Problem problem(g, Platform::reference(8));
    const double uniform = total_makespan(problem, LocalSearchPlacer(), 5000, 3);
    const double focused = total_makespan(problem, LocalSearchPlacer({.focus = 0.5}), 5000, 3);
    RecordProperty("ratio_" + std::to_string(gs), std::to_string(focused / uniform));
    EXPECT_LT(focused, 0.99 * uniform) << "graph seed " << gs;
  }
}

// Many devices and few calls per op (the 20,000-op DAG on 64 devices in miniature: 1,000 ops,
// 64 devices, 2 calls per op, 3 seeds each): nearly every edge crosses devices and most links
// of the chain are transfers, so mending them (half the focused moves) beats picking a random
// device or neighbour for the chain's op (by 0.4-0.5% here; on the 20,000-op DAG at 60 s by
// 0.5%, docs/results/parallel.md).
TEST(FocusMoves, MendingBeatsPlainFocusWhereTransfersDecide) {
  for (std::uint64_t gs = 1; gs <= 2; ++gs) {
    const Graph g = test::generated_dag(1000, gs);
    const Problem problem(g, Platform::reference(64));
    const double plain =
        total_makespan(problem, LocalSearchPlacer({.t0 = 0.0001, .focus = 0.8}), 2000, 3);
    const double mending = total_makespan(
        problem, LocalSearchPlacer({.t0 = 0.0001, .focus = 0.8, .aim = 0.5}), 2000, 3);
    RecordProperty("ratio_" + std::to_string(gs), std::to_string(mending / plain));
    EXPECT_LT(mending, 0.998 * plain) << "graph seed " << gs;
  }
}

// The same miniature on four graphs: without swap moves (two random ops exchange devices, which
// on 64 lightly loaded devices nearly always adds two transfers) their calls go to one-op moves,
// and with every reassignment focused and mending the total is lower than with swaps (by 0.17%
// at equal calls: 0.05-0.4% per graph; the gain on the 20,000-op DAG at equal seconds is larger,
// a swap's simulation resuming earlier). A swaps=0 that changed nothing would give exactly 1.
TEST(FocusMoves, WithoutSwapsTheCallsGoFurtherOnManyDevices) {
  double with = 0, without = 0;
  for (std::uint64_t gs = 1; gs <= 4; ++gs) {
    const Graph g = test::generated_dag(1000, gs);
    const Problem problem(g, Platform::reference(64));
    with +=
        total_makespan(problem, LocalSearchPlacer({.t0 = 0.0001, .focus = 1, .aim = 1}), 2000, 3);
    without += total_makespan(
        problem, LocalSearchPlacer({.t0 = 0.0001, .focus = 1, .aim = 1, .swaps = false}), 2000, 3);
  }
  RecordProperty("ratio", std::to_string(without / with));
  EXPECT_LT(without, 0.999 * with);
}

}  // namespace
}  // namespace doppler
