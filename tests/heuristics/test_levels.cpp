// The level placer (heuristics/levels.hpp): the optimum where a level's matching decides it
// (a chain on one device, independent ops spread evenly, both by hand), a margin over DSC and
// the list schedulers on a deep random DAG on many devices (measured: 0.964 of the best of
// them), the gain of following the successors on chainmm, its call accounting, determinism and
// its options' errors.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "support/builders.hpp"
#include "support/support.hpp"

#include "doppler/heuristics/levels.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/chainmm.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler {
namespace {

using test::ref_graph;
using test::RefNode;

double levels_makespan(const Problem& problem, PlaceOptions options = {}) {
  const PlaceResult r = LevelsPlacer().place(problem, options);
  r.assignment.validate(problem.graph(), problem.devices());
  return problem.simulator().makespan(r.assignment.device_of);
}

// A chain whose transfers cost more than nothing: every op after the first finds its input on
// its producer's device, so the whole chain runs on one device (sum of compute: 2+3+1+4 = 10).
TEST(Levels, KeepsAChainOnOneDevice) {
  const Graph g = ref_graph({{2, 1}, {3, 1}, {1, 1}, {4, 1}}, {{0, 1}, {1, 2}, {2, 3}});
  EXPECT_EQ(levels_makespan(Problem(g, Platform::reference(4))), 10.0);
}

// Independent ops are one level: each on its own device when there are enough (the longest op,
// 5), two per device on half as many devices (equal ops: 2 x 3).
TEST(Levels, SpreadsOneLevelEvenly) {
  const Graph wide = ref_graph({{1, 1}, {5, 1}, {2, 1}, {4, 1}}, {});
  EXPECT_EQ(levels_makespan(Problem(wide, Platform::reference(4))), 5.0);
  const Graph equal = ref_graph(std::vector<RefNode>(8, RefNode{3, 1}), {});
  EXPECT_EQ(levels_makespan(Problem(equal, Platform::reference(4))), 6.0);
}

// 2,000 ops in about 120 layers of 1-32 ops (seed 1).
Graph deep_dag() {
  return workloads::generate_random_dag({2000, 32, 0.2, 1.0, 1});
}

// On a deep layered DAG on 64 devices (transfers as costly as compute) the level placer beats
// DSC, ETF, HEFT and the critical-path rule by more than 2% (measured 3.6%: 23.77 against
// DSC's 24.66, x 1e10).
TEST(Levels, BeatsClusteringAndListSchedulersOnADeepDagOnManyDevices) {
  const Graph g = deep_dag();
  const Problem problem(g, Platform::reference(64));
  double best_other = 1e300;
  for (const char* m : {"dsc", "etf", "heft", "critical-path"}) {
    const Assignment a = make_placer(m)->place(problem, {}).assignment;
    best_other = std::min(best_other, problem.simulator().makespan(a.device_of));
  }
  EXPECT_LT(levels_makespan(problem), 0.98 * best_other);
}

// chainmm on 4 devices (the generator's defaults): following the successors' devices lets the
// blocks of one matmul join the op they all feed; without it the passes stay at DSC's and ETF's
// 1.5e13 (measured 1.2e13 with it, 20% shorter).
TEST(Levels, FollowingTheSuccessorsShortensChainMm) {
  workloads::ChainMMParams mm;
  mm.set_partition_for(4);
  const Graph g = workloads::generate_chainmm(mm);
  const Problem problem(g, Platform::reference(4));
  const auto makespan_of = [&](const char* spec) {
    return problem.simulator().makespan(make_placer(spec)->place(problem, {}).assignment.device_of);
  };
  const double without = makespan_of("levels:follow=0");
  EXPECT_LT(makespan_of("levels"), 0.9 * without);
  EXPECT_LE(makespan_of("dsc"), without * 1.0001) << "the case needs DSC no better than without";
}

// Each pass costs one simulator call: the default makes thirty (and one more for the chain
// refinement, which applies here), a budget of three stops after three with a placement; the
// same problem gives the same placement.
TEST(Levels, SpendsOneCallPerPassAndRepeats) {
  const Graph g = deep_dag();
  const Problem problem(g, Platform::reference(64));
  const PlaceResult full = LevelsPlacer().place(problem, {});
  EXPECT_EQ(full.spent.calls, 31);  // 30 passes and the chain refinement
  PlaceOptions three;
  three.budget.evaluations = 3;
  const PlaceResult cut = LevelsPlacer().place(problem, three);
  EXPECT_EQ(cut.spent.calls, 3);
  cut.assignment.validate(g, 64);
  EXPECT_EQ(LevelsPlacer().place(problem, {}).assignment.device_of, full.assignment.device_of);
}

TEST(Levels, RefusesOptionsOutOfRange) {
  EXPECT_THROW(make_placer("levels:passes=0"), InputError);
  EXPECT_THROW(make_placer("levels:tau=0"), InputError);
  EXPECT_THROW(make_placer("levels:blend=1.5"), InputError);
  EXPECT_THROW(make_placer("levels:sweeps=sideways"), InputError);
  EXPECT_NO_THROW(make_placer("levels:passes=3,tau=0.1,blend=1,sweeps=alternate"));
}

}  // namespace
}  // namespace doppler
