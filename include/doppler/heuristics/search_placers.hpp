#pragma once
// Search placers that call the simulator: the enumerative optimiser, local search (simulated
// annealing) and the exhaustive optimum for tiny graphs.
#include <limits>
#include <vector>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// The best start of the list schedulers local search begins from.
struct ListScheduleStart {
  std::vector<DeviceId> device_of;                            ///< empty when none was tried
  double makespan = std::numeric_limits<double>::infinity();  ///< simulated (FIFO)
  int evaluations = 0;                                        ///< simulator calls made
};

/// The best (the first on ties) of the first `limit` of critical-path, HEFT, ETF, m-ETF(0.1) and
/// balanced on `problem`, each simulated once through `eval` (it stops when `eval` is spent,
/// keeping the first unscored start when none was scored): local-search's and doppler-search's
/// start. Under a time budget the starts together take at most a quarter of the time left: ETF
/// and m-ETF, slow on wide graphs, hurry through the ops left at that point (EtfPlacer).
ListScheduleStart best_list_schedule(const Problem& problem, const PlaceOptions& options,
                                     BudgetedEvaluator& eval, int limit = 5);

/// Replaces `start` by DSC's placement when that is shorter (one call through `eval`; kept as
/// it was when the call is refused): the best cheap start where transfers dominate, which no
/// list scheduler is (multilevel's start; doppler-search's with dsc=1).
void improve_with_dsc(const Problem& problem, const PlaceOptions& options, BudgetedEvaluator& eval,
                      ListScheduleStart& start);

/// Replaces `start` by `placer`'s placement when that is shorter (the placer's own calls, and
/// one more to score its placement, through `eval`; kept as it was when the call is refused).
/// doppler-search's levels=1 passes LevelsPlacer.
void improve_start(const Placer& placer, const Problem& problem, const PlaceOptions& options,
                   BudgetedEvaluator& eval, ListScheduleStart& start);

/// The enumerative optimiser in the spirit of einsummable's placer: tensor ops (groups) in
/// topological order; for each, every mapping of its blocks to devices (all permutations when
/// blocks == devices, else all balanced mappings: device counts differ by at most one) up to
/// `limit` mappings (beyond it, `limit` random ones), each scored by simulating the ops placed so
/// far; the best is kept. Graphs without groups use inferred groups (tensor_groups) or, with
/// infer=false, place op by op greedily.
class EnumOptPlacer : public Placer {
public:
  EnumOptPlacer(int limit = 720, bool infer_groups = true) : limit_(limit), infer_(infer_groups) {}
  std::string name() const override { return "enumopt"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  int limit_;
  bool infer_;
};

/// LocalSearchPlacer's options (the registry's `local-search:` keys of the same names).
struct LocalSearchSettings {
  double t0 = 0.03;             ///< start temperature, a fraction of the start makespan
  double polish = 0.15;         ///< share of the budget left to descent and iterated local search
  double focus = 0;             ///< AnnealSettings::focus (0: uniform op picks)
  double aim = 0;               ///< AnnealSettings::aim (0: no mending)
  bool swaps = true;            ///< AnnealSettings::swaps
  bool prefix = kPrefixCycles;  ///< AnnealSettings::prefix_cycles
  TieBreak tiebreak = TieBreak::none;  ///< AnnealSettings::tiebreak
  bool dsc = false;                    ///< DSC's placement is a start too (one more call)
  bool levels = false;  ///< LevelsPlacer's placement is a start too (its calls and one more)
};

/// Simulated annealing over assignments, scored by the simulator. Starts from the best of the list
/// schedulers (critical-path, heft, etf, m-etf, balanced; with `dsc` and `levels` also DSC's and
/// the level placer's placements); moves reassign one op, swap the devices of two ops, or shift a
/// whole tensor-op group by a device offset; the temperature falls geometrically from `t0` x the
/// initial makespan; the last `polish` fraction of the budget is a first-improvement descent from
/// the best assignment followed, while budget remains, by iterated local search (perturb the best
/// local optimum, descend again). Budget: evaluations (default kDefaultSearchCalls) and/or seconds;
/// the heuristics' simulations count.
class LocalSearchPlacer : public Placer {
public:
  explicit LocalSearchPlacer(LocalSearchSettings s = {}) : s_(s) {}
  std::string name() const override { return "local-search"; }
  std::int64_t default_calls() const override { return kDefaultSearchCalls; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  LocalSearchSettings s_;
};

/// The true optimum (minimum simulated makespan) by enumerating every assignment; under the
/// reference model devices are interchangeable, so only canonical labelings are tried. Refuses
/// problems with more than `max_assignments` candidates (default 3^12 = 531,441).
class ExhaustivePlacer : public Placer {
public:
  explicit ExhaustivePlacer(double max_assignments = 531441) : max_(max_assignments) {}
  std::string name() const override { return "exhaustive"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  double max_;
};

}  // namespace doppler
