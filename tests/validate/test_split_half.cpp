// validate_sim's split-half check of the engine against itself, with fake engines whose noise is
// known: none (the halves agree exactly) and nothing but noise (they do not agree at all).
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "support/builders.hpp"

#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/validate/sim_to_real.hpp"

namespace doppler {
namespace {

// Two independent chains of growing ops joined at the end: placements differ in makespan.
Graph two_chains() {
  std::vector<test::PhysNode> nodes;
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < 12; ++i) {
    nodes.push_back({1e9 * (1 + i), 4e6});
    if (i % 6 != 0) edges.emplace_back(i - 1, i);
  }
  nodes.push_back({1e9, 4e6});
  edges.emplace_back(5, 12);
  edges.emplace_back(11, 12);
  return test::phys_graph(nodes, edges);
}

ValidationOptions options(int repeat) {
  ValidationOptions o;
  o.assignments = 30;
  o.repeat = repeat;
  o.warmup = 0;
  o.search_budget = 200;
  return o;
}

// A noiseless engine (the simulator itself): both halves give the same medians, and the
// simulator ranks the assignments exactly as the engine does.
TEST(SplitHalf, NoiselessEngineAgreesWithItself) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const RunMakespan exact = [&](const Assignment& a, DispatchRule rule) {
    return problem.simulator().makespan(a, rule);
  };
  const ValidationResult r = validate_sim(problem, exact, options(4));
  EXPECT_DOUBLE_EQ(r.spearman_split_half, 1.0);
  EXPECT_DOUBLE_EQ(r.spearman, 1.0);
}

// An engine whose makespans are noise only: its halves do not agree (|rho| well below 0.5 for
// 30 assignments; the seed fixes the draw), and neither does the simulator with it.
TEST(SplitHalf, PureNoiseEngineDoesNotAgreeWithItself) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(1.0, 2.0);
  const RunMakespan random = [&](const Assignment&, DispatchRule) { return noise(rng); };
  const ValidationResult r = validate_sim(problem, random, options(6));
  EXPECT_LT(std::abs(r.spearman_split_half), 0.5);
  EXPECT_LT(std::abs(r.spearman), 0.5);
}

// An engine whose first run of each round (here every n-th call) takes 10% longer: in one fixed
// order that bias stays with the first assignment and moves its median; with each round in its
// own order every median is the true makespan (an assignment is first in a round rarely, never in
// 5 of the 9).
TEST(SplitHalf, APositionBiasDoesNotStayWithOneAssignment) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const ValidationOptions o = options(9);
  const std::size_t n =
      validation_assignments(problem, o.assignments, o.seed, o.search_budget).size();
  std::size_t calls = 0;
  const RunMakespan biased = [&](const Assignment& a, DispatchRule rule) {
    return problem.simulator().makespan(a, rule) * (calls++ % n == 0 ? 1.1 : 1.0);
  };
  const ValidationResult r = validate_sim(problem, biased, o);
  ASSERT_EQ(calls, 9 * n);
  for (const ValidationCase& c : r.cases)
    EXPECT_DOUBLE_EQ(c.measured.median, c.simulated) << c.method;
}

// An engine that runs every assignment 1.5x the simulated time (a profile calibrated while the
// machine was faster): the ranking is exact, the level is 1 / 1.5 and warned about; the
// noiseless engine is on level, without a warning.
TEST(SplitHalf, ALevelOffByACommonFactorIsWarnedAbout) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const RunMakespan slower = [&](const Assignment& a, DispatchRule rule) {
    return 1.5 * problem.simulator().makespan(a, rule);
  };
  const ValidationResult r = validate_sim(problem, slower, options(3));
  EXPECT_DOUBLE_EQ(r.spearman, 1.0);
  EXPECT_NEAR(r.sim_over_measured, 1 / 1.5, 1e-12);
  EXPECT_NE(level_warning(r.sim_over_measured).find("0.67x"), std::string::npos);
  const RunMakespan exact = [&](const Assignment& a, DispatchRule rule) {
    return problem.simulator().makespan(a, rule);
  };
  EXPECT_NEAR(validate_sim(problem, exact, options(3)).sim_over_measured, 1.0, 1e-12);
  EXPECT_EQ(level_warning(1.0), "");
  EXPECT_EQ(level_warning(1.2), "");
  EXPECT_NE(level_warning(1.3), "");
}

// Every measured run says when it ran: an engine that returns its own call count as the makespan
// makes each run's value its position, so positions and values must agree run by run; with 2
// warm-up rounds the first 2n positions are unmeasured, every later one is measured exactly once,
// and each assignment runs once per round (its k-th run in round 2 + k).
TEST(SplitHalf, EachRunKeepsItsPositionInTheSequence) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  ValidationOptions o = options(5);
  o.warmup = 2;
  const int n = static_cast<int>(
      validation_assignments(problem, o.assignments, o.seed, o.search_budget).size());
  int calls = 0;
  const RunMakespan clock = [&](const Assignment&, DispatchRule) { return 1.0 + calls++; };
  const ValidationResult r = validate_sim(problem, clock, o);
  ASSERT_EQ(calls, 7 * n);
  std::vector<int> seen(static_cast<std::size_t>(calls), 0);
  for (const ValidationCase& c : r.cases) {
    ASSERT_EQ(c.run_positions.size(), 5u) << c.method;
    ASSERT_EQ(c.measured.makespans.size(), 5u) << c.method;
    for (std::size_t k = 0; k < 5; ++k) {
      const int p = c.run_positions[k];
      EXPECT_DOUBLE_EQ(c.measured.makespans[k], 1.0 + p) << c.method;
      EXPECT_EQ(p / n, 2 + static_cast<int>(k)) << c.method;
      ++seen[static_cast<std::size_t>(p)];
    }
  }
  for (int p = 0; p < calls; ++p) EXPECT_EQ(seen[static_cast<std::size_t>(p)], p < 2 * n ? 0 : 1);
}

// One measured run per assignment has no halves.
TEST(SplitHalf, OneRunGivesNaN) {
  const Graph g = two_chains();
  const Problem problem(g, Platform::hardware(load_hardware_profile("p100"), 4));
  const RunMakespan exact = [&](const Assignment& a, DispatchRule rule) {
    return problem.simulator().makespan(a, rule);
  };
  EXPECT_TRUE(std::isnan(validate_sim(problem, exact, options(1)).spearman_split_half));
}

}  // namespace
}  // namespace doppler
