#pragma once
// Helpers shared by the evaluation tests of tests/sim: generated DAGs, random assignments, and
// the check that two annealer settings that must make the same decisions (early abort,
// incremental evaluation) return the same result.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace doppler::test {

/// The generator's random DAG of `ops` ops (its other parameters at their defaults) from `seed`.
inline Graph generated_dag(int ops, std::uint64_t seed) {
  workloads::RandomDagParams params;
  params.ops = ops;
  params.seed = seed;
  return workloads::generate_random_dag(params);
}

/// A uniformly random device for each of `n` ops on `p` devices.
inline std::vector<DeviceId> random_assignment(std::mt19937_64& rng, int n, int p) {
  std::uniform_int_distribution<DeviceId> dev(0, p - 1);
  std::vector<DeviceId> a(static_cast<std::size_t>(n));
  for (auto& d : a) d = dev(rng);
  return a;
}

/// Anneals from `start` with `x` and with `y` (same budget of `evaluations` calls and seed) and
/// expects the same best assignment, makespan and call count, the makespan exact.
inline void expect_same_anneal(const Problem& problem, const std::vector<DeviceId>& start,
                               const AnnealSettings& x, const AnnealSettings& y,
                               std::int64_t evaluations, std::uint64_t seed) {
  const double start_ms = problem.simulator().makespan(start);
  BudgetedEvaluator bx(problem.simulator(), {evaluations, 0});
  BudgetedEvaluator by(problem.simulator(), {evaluations, 0});
  const AnnealResult rx = anneal(problem, start, start_ms, bx, x, seed);
  const AnnealResult ry = anneal(problem, start, start_ms, by, y, seed);
  EXPECT_EQ(rx.best, ry.best);
  EXPECT_EQ(rx.best_makespan, ry.best_makespan);
  EXPECT_EQ(rx.evaluations, ry.evaluations);
  EXPECT_EQ(problem.simulator().makespan(rx.best), rx.best_makespan);  // exact, not a bound
}

}  // namespace doppler::test
