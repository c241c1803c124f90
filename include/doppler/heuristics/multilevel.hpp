#pragma once
// Coarsen, place, refine: the multilevel placer for large graphs.
#include <string>
#include <vector>

#include "doppler/heuristics/anneal.hpp"
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
  double aim = 0;            ///< share of focused moves that mend the chain (AnnealSettings::aim)
  bool swaps = true;         ///< refinement's swap moves (AnnealSettings::swaps)
  bool prefix = kPrefixCycles;  ///< refinement's prefix cycles (AnnealSettings::prefix_cycles)
  TieBreak tiebreak = TieBreak::none;  ///< refinement's ties (AnnealSettings::tiebreak)
  int cycles = 1;  ///< V-cycles: passes of refinement; each after the first coarsens
                   ///< anew within the devices of the placement so far (>= 1)
  /// Share of the budget, in [0, 1), after which the tied search ends (0: none): on graphs with
  /// repeated layers (repeat_classes) the start is tied (each class on one device) and annealed
  /// by moves of whole classes, so every layer is placed alike; refinement takes the rest.
  double tied = 0;
  double tied_t0 = 0.00005;  ///< the tied search's start temperature (fraction of makespan)
  /// Layers of the stand-in (repeat_proxy) on which the tied search spends 3/4 of its share
  /// before it anneals the whole graph by classes; 0: none (on the graph from the start).
  int tied_proxy = 0;
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
/// kDefaultSearchCalls when neither is given) and/or seconds, split evenly over the cycles after
/// the inner placer's share and within a cycle over its levels; every simulator call counts, the
/// inner placer's included. With `cycles` > 1, each further cycle coarsens again, merging only
/// ops on one device of the placement so far (so the placement is one of every coarse level,
/// with new clusters from another seed), and refines its levels the same way: moves of whole
/// co-located clusters that single-op moves cannot make one step at a time.
/// With `tied` > 0 and repeated layers, a tied search runs between the coarsest level and the
/// refinement (see MultilevelSettings::tied); its result is kept only when it is shorter.
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
  /// The ops (level-0 ids) of every node of each coarse level, coarsest last.
  using Groups = std::vector<std::vector<std::vector<NodeId>>>;
  /// Where one pass of refinement ends: the run's calls and seconds then (0: no such limit).
  struct PassEnd {
    std::int64_t calls = 0;
    double seconds = 0;
  };
  /// Refines `cur` level by level, coarsest of `groups` (the ops of each level's nodes) first,
  /// each level with an equal share of what is left before `end`.
  void refine(const Problem& problem, const PlaceOptions& options, BudgetedEvaluator& eval,
              const class Stopwatch& t_start, PassEnd end, const Groups& groups, int cycle,
              std::vector<DeviceId>& cur, double& cur_ms) const;
  /// The cycles within what is left of `eval`, split evenly; the first refines `first` (the
  /// hierarchy that placed `cur`), every other one a new hierarchy within cur's devices.
  void run_cycles(const Problem& problem, const PlaceOptions& options, BudgetedEvaluator& eval,
                  const class Stopwatch& t_start, const Groups& first, std::vector<DeviceId>& cur,
                  double& cur_ms) const;

  /// The tied search (MultilevelSettings::tied) from `cur` until the tied share of `eval`'s
  /// limits; `cur` becomes its result when shorter. Returns the note's line: what it did, or
  /// why it did not run (empty when `tied` is 0).
  std::string tied_search(const Problem& problem, const PlaceOptions& options,
                          BudgetedEvaluator& eval, const class Stopwatch& t_start,
                          std::vector<DeviceId>& cur, double& cur_ms) const;

  /// The tied search's first part: anneals by classes on the stand-in of tied_proxy layers
  /// (repeat_proxy) within 3/4 of `part`'s limits and makes `start` the stand-in's result carried
  /// to the graph when that is shorter. Returns the note's clause.
  std::string proxy_search(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& part, const std::vector<std::vector<NodeId>>& classes,
                           std::vector<DeviceId>& start, double& start_ms) const;

  MultilevelSettings s_;
  mutable std::vector<MultilevelLevel> levels_;
};

}  // namespace doppler
