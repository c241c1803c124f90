#pragma once
// Level-by-level placement: the ops of each topological level are given devices together, by a
// minimum-cost assignment of each op's estimated finish plus the time still to run after it;
// that time is taken from the previous pass's own schedule, pass after pass. Built for deep
// graphs on many devices where every op must choose which of its inputs to receive locally.
#include <vector>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Which way the passes of LevelsPlacer go.
enum class LevelSweeps {
  forward,    ///< every pass forward, from the sources
  alternate,  ///< forward, backward (the reversed graph, from the sinks), forward, ...
  both,       ///< a forward sequence of passes, then a new, alternating one
};

/// Settings of level-by-level placement (LevelsPlacer).
struct LevelSettings {
  int passes = 30;     ///< passes, each scored by one simulator call (>= 1)
  double tau = 0.05;   ///< softness of a level's objective, in mean nominal op compute times (> 0)
  double blend = 0.8;  ///< weight of the last pass's own tails in the next pass's ([0, 1])
  LevelSweeps sweeps = LevelSweeps::both;  ///< which way the passes go
  /// One more forward sequence (where `sweeps` has one), whose passes after the first score an
  /// op on device d with the time after it were its successors on the devices the previous pass
  /// gave them (a transfer to each one elsewhere), instead of the one time after it: an op can
  /// follow its successors, and so join a sibling that feeds the same successor.
  bool follow = true;
  /// Sweeps of chain refinement (chain_refine.hpp) of the best pass's placement, scored by one
  /// more simulator call and kept where shorter; 0: none. Applies only where chains_apply():
  /// 249.8 to 249.0 on the 20,000-op DAG on 32-64 devices, 23.73 to 23.63 on the 2,000-op one
  /// on 32.
  int chains = 8;
};

/// What one pass (forward or backward) planned.
struct LevelPlan {
  std::vector<DeviceId> device_of;  ///< device of every op (size N)
  std::vector<NodeId> order;        ///< input ops, then the others in the order they were placed
  double makespan = 0;              ///< the pass's own estimate (cost-model units)
};

/// One forward pass (no simulator call). Ops go level by level (level = the longest path in
/// edges from a source; at most 64 ops of a level at once, by decreasing `rest`), each batch by
/// a minimum-cost matching of its ops to device slots (P x ceil(batch / P) slots: the j-th op
/// on a device starts after j others) with cost exp((s - ref) / tau'), where s is the op's
/// estimated finish on that slot (inputs' arrival: the producer's estimated finish plus the
/// transfer between the two devices, 0 on the same one; then the device's previous op) plus
/// rest[v], ref is the largest over the batch of each op's best s, and tau' = tau x the mean
/// nominal compute time: a soft minimum of the batch's latest finish. Input ops (kind input)
/// are left out (their edges cost nothing) and follow their first consumer. Replaces `rest`
/// (size N) by the pass's own tails, blended as blend x own + (1 - blend) x given: for every
/// op, the estimated time from its finish to the end of the pass's schedule (its successors'
/// transfers and compute, and the next op on its device).
/// With `backward` the pass places the reversed graph (levels from the sinks, an op's inputs
/// being its successors), whose schedule run backwards in time is one of the graph; `rest` is
/// then the time before each op. Either way `heads` (size N) gets the other direction's times,
/// blended alike: each op's estimated start in the pass's schedule. With `previous` (the last
/// pass's devices, size N; empty: none) an op's score on device d takes, in place of rest, the
/// largest over its successors w of the transfer from d to previous[w] (0 on the same device)
/// plus w's compute there and rest[w] (LevelSettings::follow).
LevelPlan level_pass(const Problem& problem, const LevelSettings& s, std::vector<double>& rest,
                     std::vector<double>& heads, bool backward = false,
                     const std::vector<DeviceId>& previous = {});

/// The level placer: `passes` passes, each scored by one simulator call, the shortest simulated
/// placement kept (ties: the earlier pass), split evenly over its sequences: forward; forward
/// following the successors (`follow`); alternating forward and backward (forward-backward
/// improvement, as in project scheduling); `sweeps` and `follow` choose which run. A sequence
/// starts from the nominal times (after each op: b-level - nominal compute; before it: the
/// t-level) and each pass gives the next its own. Measured (docs/scale.md): alternating finds
/// 56.7 on the reference ffnn where forward passes stay at the list schedulers' 84.2; following
/// finds chain_mm's 1200 (others 1300-1700) and gains 4-8% on the Llama graphs; plain forward
/// passes do best on the transformer layer. Deterministic; O(passes x (E x P + N x 64 x max(P,
/// 64))) time (one matching of at most 64 rows per batch). Then, where devices are plentiful
/// (chains_apply), the best placement is refined as chains (`chains` sweeps, one more call):
/// 249.8 to 249.0 on the 20,000-op DAG on 64 devices.
class LevelsPlacer : public Placer {
public:
  explicit LevelsPlacer(LevelSettings s = {});
  std::string name() const override { return "levels"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  LevelSettings s_;
};

}  // namespace doppler
