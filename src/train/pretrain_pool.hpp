#pragma once
// The problems of a pretraining run (private to src/train): the pool drawn from the spec and the
// held-out problems, with what is computed on them once (graph tensors, reference makespans).
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "policy/nn/graph_tensors.hpp"

#include "doppler/train/pretrain_spec.hpp"
#include "doppler/util/parallel_for.hpp"

namespace doppler::detail {

/// Makespans (simulated) of placer `spec` on every problem, with `budget` evaluations each (0:
/// the placer's default), on the threads.
std::vector<double> simulate_placer(const std::vector<PoolProblem>& problems,
                                    const std::string& spec, std::int64_t budget, int threads);

/// The training pool and the held-out problems. The pool never holds a graph identical to a
/// held-out one; pool_gt and pool_cp have one entry per pool problem.
struct PretrainPool {
  std::vector<PoolProblem> pool;          ///< the training problems, in draw order
  std::vector<PoolProblem> held;          ///< the held-out problems (evaluation only)
  std::vector<nn::GraphTensors> pool_gt;  ///< per pool problem: its network inputs
  /// Per pool problem: critical-path list scheduling's makespan (the unit of the ratios).
  std::vector<double> pool_cp;
  /// Per held-out problem, filled by reference_held_out(): network inputs, critical-path and
  /// local-search makespans.
  std::vector<nn::GraphTensors> held_gt;
  std::vector<double> held_cp, held_ls;

  /// Draws both sets from `spec` and computes pool_gt and pool_cp on `threads` threads; returns
  /// the simulator calls made (one per pool problem).
  std::int64_t draw(const PretrainSpec& spec, const PolicyConfig& policy, int threads);
  /// Computes the held-out references once (later calls do nothing); local search gets
  /// `eval_budget` evaluations.
  void reference_held_out(const PolicyConfig& policy, std::int64_t eval_budget, int threads);
  /// Number of pool problems.
  int size() const { return static_cast<int>(pool.size()); }
};

}  // namespace doppler::detail
