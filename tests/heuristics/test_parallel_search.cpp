// Parallel search and the shared budget: the calls of every thread together never exceed the
// budget; the same seed and thread count under a call budget give the same assignment; a longer
// budget never ends worse (cycles restart from the best; with prefix cycles for any two
// budgets); the progress callback sees a falling curve and can stop a run, which keeps its best.
#include <algorithm>
#include <atomic>
#include <initializer_list>
#include <limits>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/search_placers.hpp"

namespace doppler {
namespace {

Graph medium_dag(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return test::random_dag(rng, {60, 0.08, 10, 12, true});
}

TEST(SharedBudget, ThreadsChargingOneEvaluatorAndItsPartsNeverExceedTheLimit) {
  const Graph g = medium_dag(1);
  const Problem problem(g, Platform::reference(4));
  constexpr std::int64_t kLimit = 10007;
  BudgetedEvaluator run(problem.simulator(), {kLimit, 0});
  std::atomic<std::int64_t> granted{0};
  std::vector<std::jthread> pool;
  for (int t = 0; t < 6; ++t)
    pool.emplace_back([&, t] {
      // Half the threads charge the run itself, half a part each whose limits together exceed
      // the run's: only the run's limit can stop them.
      if (t % 2 == 0) {
        while (run.charge(1 + t % 3)) granted += 1 + t % 3;
      } else {
        BudgetedEvaluator part = run.part({kLimit, 0});
        while (part.charge()) ++granted;
      }
    });
  pool.clear();  // joins
  EXPECT_EQ(run.calls(), granted.load());
  EXPECT_LE(run.calls(), kLimit);
  EXPECT_GE(run.calls(), kLimit - 2);  // a charge of up to 3 calls may not fit at the end
  EXPECT_TRUE(run.spent());
}

TEST(SharedBudget, ParallelSearchesSpendExactlyTheirCallBudget) {
  const Graph g = medium_dag(2);
  const Problem problem(g, Platform::reference(4));
  for (const char* spec : {"local-search", "multilevel", "auto"})
    for (int threads : {1, 2, 3}) {
      PlaceOptions o;
      o.budget = {5000, 0};
      o.threads = threads;
      const PlaceResult r = make_placer(spec)->place(problem, o);
      EXPECT_LE(r.spent.calls, 5000) << spec << " threads " << threads;
      EXPECT_GE(r.spent.calls, 4990) << spec << " threads " << threads;
    }
}

TEST(ParallelSearch, SameSeedAndThreadCountGiveTheSameAssignment) {
  const Graph g = medium_dag(3);
  const Problem problem(g, Platform::reference(4));
  for (const char* spec : {"local-search", "multilevel", "auto"}) {
    PlaceOptions o;
    o.seed = 7;
    o.budget = {6000, 0};
    o.threads = 2;
    const Assignment a = make_placer(spec)->place(problem, o).assignment;
    const Assignment b = make_placer(spec)->place(problem, o).assignment;
    EXPECT_EQ(a.device_of, b.device_of) << spec;
  }
}

// Anneals a random DAG (from `graph_seed`) on 3 devices, from every op on device 0, under each
// budget of `calls` in turn with settings `s`: every run spends its budget, reports its makespan
// truly and ends no worse than the run of the budget before.
void expect_no_rise(std::uint64_t graph_seed, const AnnealSettings& s, std::uint64_t seed,
                    std::initializer_list<std::int64_t> calls) {
  const Graph g = medium_dag(graph_seed);
  const Problem problem(g, Platform::reference(3));
  const std::vector<DeviceId> start(static_cast<std::size_t>(g.num_nodes()), 0);
  const double start_ms = problem.simulator().makespan(start);
  double previous = start_ms;
  for (std::int64_t c : calls) {
    BudgetedEvaluator eval(problem.simulator(), {c, 0});
    const AnnealResult r = anneal(problem, start, start_ms, eval, s, seed);
    EXPECT_EQ(problem.simulator().makespan(r.best), r.best_makespan);
    EXPECT_LE(r.best_makespan, previous) << "seed " << seed << ", " << c << " calls";
    EXPECT_EQ(r.evaluations, c);
    previous = r.best_makespan;
  }
}

TEST(Anneal, ALongerBudgetNeverEndsWorseThanOneCycle) {
  // With cycles of 400 calls, a budget of 400 is the first cycle of every longer budget, which
  // then only restarts from the best: the makespan cannot rise with the budget.
  AnnealSettings s;
  s.cycle_calls = 400;
  for (std::uint64_t seed = 0; seed < 4; ++seed)
    expect_no_rise(10 + seed, s, seed, {400, 800, 2000, 6000});
}

TEST(Anneal, WithPrefixCyclesNoLargerBudgetEndsWorse) {
  // Prefix cycles (100, 200, 400, 800, 1600, then 2000 calls) do not depend on the budget, so the
  // run of any budget is the start of the run of every larger one, within a cycle too: its best
  // cannot rise with the budget, whatever the budgets (here inside and across cycles). With two
  // chains each chain's run is the start of its run under a larger budget (meetings at
  // budget-free intervals), and the result is the better chain's.
  AnnealSettings s;
  s.cycle_calls = 2000;
  s.prefix_cycles = true;
  for (std::uint64_t seed = 0; seed < 6; ++seed)
    expect_no_rise(20 + seed, s, seed, {90, 150, 333, 700, 1000, 1499, 2500, 3100, 4999, 7001});
  s.threads = 2;  // the same calls per chain
  for (std::uint64_t seed = 6; seed < 16; ++seed)
    expect_no_rise(20 + seed, s, seed, {180, 300, 666, 1400, 2000, 2998, 5000, 6200, 9998, 14002});
}

TEST(Progress, TheCurveFallsAndEndsAtTheResult) {
  const Graph g = medium_dag(4);
  const Problem problem(g, Platform::reference(4));
  for (int threads : {1, 2}) {
    PlaceOptions o;
    o.budget = {4000, 0};
    o.threads = threads;
    const PlaceResult r = make_placer("local-search")->place(problem, o);
    ASSERT_FALSE(r.curve.empty());
    for (std::size_t i = 1; i < r.curve.size(); ++i) {
      EXPECT_LT(r.curve[i].makespan, r.curve[i - 1].makespan);
      EXPECT_GE(r.curve[i].seconds, r.curve[i - 1].seconds);
      EXPECT_GE(r.curve[i].calls, r.curve[i - 1].calls);
    }
    EXPECT_DOUBLE_EQ(r.curve.back().makespan, problem.simulator().makespan(r.assignment.device_of));
  }
}

TEST(Progress, ACallbackThatSaysStopEndsTheRunWithTheBestFound) {
  const Graph g = medium_dag(5);
  const Problem problem(g, Platform::reference(4));
  for (const char* spec : {"local-search", "multilevel", "auto"}) {
    int told = 0;
    double best_told = std::numeric_limits<double>::infinity();
    PlaceOptions o;
    o.budget = {200000, 0};
    o.threads = 2;
    o.progress = [&](const ProgressPoint& at) {
      best_told = std::min(best_told, at.makespan);
      return ++told < 5;  // stop at the fifth report
    };
    const PlaceResult r = make_placer(spec)->place(problem, o);
    EXPECT_EQ(told, 5) << spec;
    EXPECT_LT(r.spent.calls, 200000) << spec;
    // The result is at least as good as anything reported before the stop.
    EXPECT_LE(problem.simulator().makespan(r.assignment.device_of), best_told) << spec;
  }
}

}  // namespace
}  // namespace doppler
