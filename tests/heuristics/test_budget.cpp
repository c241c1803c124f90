// The budgeted evaluator every search and learned placer evaluates through: it counts calls,
// refuses the call past the limit, charges a step's calls to the run, and stops at the time
// limit.
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {
namespace {

// Two independent unit ops.
Graph two_ops() {
  GraphBuilder b;
  for (int i = 0; i < 2; ++i) {
    Node n;
    n.compute_cost = 1;
    n.transfer_cost = 1;
    b.add_node(n);
  }
  return b.build();
}

TEST(Budget, ResolveFillsTheDefaultOnlyWithoutLimits) {
  EXPECT_EQ(resolve({}, 500).evaluations, 500);
  EXPECT_EQ(resolve({0, 2.0}, 500).evaluations, 0);  // a time limit alone: no call limit
  EXPECT_EQ(resolve({7, 0}, 500).evaluations, 7);
}

TEST(Budget, RefusesTheCallPastTheLimitAndCountsTheOthers) {
  const Graph g = two_ops();
  const Problem problem(g, Platform::reference(2));
  BudgetedEvaluator eval(problem.simulator(), {3, 0});
  SimWorkspace ws;
  const std::vector<DeviceId> a{0, 1};
  const std::int64_t sim0 = problem.simulator().calls();
  for (int i = 0; i < 3; ++i) {
    const auto ms = eval.makespan(a, ws);
    ASSERT_TRUE(ms.has_value());
    EXPECT_EQ(*ms, 1.0);  // both ops at once on two devices
  }
  EXPECT_TRUE(eval.spent());
  EXPECT_FALSE(eval.makespan(a, ws).has_value());
  EXPECT_FALSE(eval.charge());
  EXPECT_EQ(eval.calls(), 3);
  EXPECT_EQ(problem.simulator().calls() - sim0, 3);  // the refused call never ran
  EXPECT_DOUBLE_EQ(eval.fraction(), 1.0);
  EXPECT_THROW(eval.record(1), std::logic_error);
}

TEST(Budget, APartHasItsOwnLimitWithinTheRunAndChargesIt) {
  const Graph g = two_ops();
  const Problem problem(g, Platform::reference(2));
  BudgetedEvaluator run(problem.simulator(), {10, 0});
  ASSERT_TRUE(run.charge(4));
  BudgetedEvaluator step = run.part({100, 0});  // clamped to the 6 left
  EXPECT_EQ(step.limits().evaluations, 6);
  EXPECT_EQ(step.calls(), 0);
  ASSERT_TRUE(step.charge(2));
  EXPECT_DOUBLE_EQ(step.fraction(), 2.0 / 6.0);
  EXPECT_EQ(run.calls(), 6);
  EXPECT_EQ(run.calls_left(), 4);
  EXPECT_FALSE(step.charge(5));  // more than the run has left
  EXPECT_EQ(run.left().evaluations, 4);
}

TEST(Budget, TheTimeLimitEndsTheRunAndStaysEnded) {
  const Graph g = two_ops();
  const Problem problem(g, Platform::reference(2));
  BudgetedEvaluator eval(problem.simulator(), {0, 0.02});
  EXPECT_FALSE(eval.spent());
  EXPECT_EQ(eval.limits().evaluations, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_TRUE(eval.spent());
  EXPECT_FALSE(eval.charge());
  EXPECT_DOUBLE_EQ(eval.fraction(), 1.0);
}

// Every non-learned placer, given a budget below what it would spend unlimited, stays within it
// and still places every op.
TEST(Budget, EveryPlacerStaysWithinASmallBudget) {
  GraphBuilder b;
  for (int i = 0; i < 9; ++i) {
    Node n;
    n.compute_cost = 1 + i % 3;
    n.transfer_cost = 2;
    b.add_node(n);
    if (i > 0 && i % 3 != 0) b.add_edge(i - 1, i);
  }
  const Graph g = b.build();
  const Problem problem(g, Platform::reference(3));
  for (const PlacerInfo& info : placer_infos()) {
    if (info.learned) continue;
    SCOPED_TRACE(info.name);
    const PlaceResult r = make_placer(info.name)->place(problem, {1, {3, 0}});
    EXPECT_LE(r.spent.calls, 3);
    EXPECT_NO_THROW(r.assignment.validate(g, 3));
  }
}

}  // namespace
}  // namespace doppler
