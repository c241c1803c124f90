#pragma once
// Coarsen, place, refine: the multilevel placer for large graphs.
#include <string>
#include <vector>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Settings of the multilevel placer (the spec's options).
struct MultilevelSettings {
  std::string inner = "local-search";  ///< placer spec of the coarsest level (';' for ',')
  int coarse_nodes = 0;      ///< stop coarsening at or below this many nodes (0: max(256, 16 P))
  double cap = 0.5;          ///< largest cluster, as a fraction of the per-device share of work
  double inner_share = 0.3;  ///< fraction of the budget given to the inner placer
  double t0 = 0.005;         ///< refinement annealing start temperature (fraction of makespan)
  double focus = 0;          ///< refinement's critical-chain focus (AnnealSettings::focus)
};

/// What one level of the last run looked like (for reports and tests).
struct MultilevelLevel {
  int nodes = 0;                 ///< ops (level 0) or clusters at this level
  double makespan = 0;           ///< after placing (coarsest) or refining this level, its own units
  std::int64_t evaluations = 0;  ///< simulator calls spent at this level
  double seconds = 0;            ///< wall-clock seconds spent at this level
};

/// Coarsens the graph by acyclic heavy-edge matching (coarsen_once) until it has at most
/// `coarse_nodes` nodes or a step shrinks it by less than 5%; places the coarsest graph with the
/// inner placer (under the reference model, with the nominal compute and transfer times of the
/// original cost model) and projects it onto the ops; starts from the shortest (simulated) of
/// that projection, the best list scheduler (as local-search) and `dsc`; then refines level
/// by level, coarsest first, with the annealer on the ops themselves (exact makespans), whose
/// group moves gather a whole cluster of the level on one device (70% of moves at coarse
/// levels, 25% at the finest, with single-op moves and swaps). Budget: evaluations (default
/// kDefaultSearchCalls when neither is given) and/or seconds, split evenly over the levels after
/// the inner placer's share; every simulator call counts, the inner placer's included.
class MultilevelPlacer : public Placer {
public:
  explicit MultilevelPlacer(MultilevelSettings settings = {}) : s_(std::move(settings)) {}
  std::string name() const override { return "multilevel"; }
  std::int64_t default_calls() const override { return kDefaultSearchCalls; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;
  /// Levels of the last place(), finest first.
  const std::vector<MultilevelLevel>& last_levels() const { return levels_; }

private:
  MultilevelSettings s_;
  mutable std::vector<MultilevelLevel> levels_;
};

}  // namespace doppler
