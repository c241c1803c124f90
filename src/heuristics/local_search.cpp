#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/clustering.hpp"
#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/levels.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/heuristics/simple_placers.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {
// Under a time budget the starts together take at most this share of the time left (ETF's scan
// of every ready pair is slow on wide graphs; it is cut short at its share: EtfPlacer).
constexpr double kStartShare = 0.25;
}  // namespace

ListScheduleStart best_list_schedule(const Problem& problem, const PlaceOptions& options,
                                     BudgetedEvaluator& eval, int limit) {
  const Stopwatch clock;
  const double share = kStartShare * eval.seconds_left();  // infinity without a time limit
  const CriticalPathPlacer cp;
  const HeftPlacer heft;
  const EtfPlacer etf, metf(0.1);
  const BalancedPlacer balanced;
  ListScheduleStart out;
  SimWorkspace ws;
  for (const Placer* pl :
       std::initializer_list<const Placer*>{&cp, &heft, &etf, &metf, &balanced}) {
    if (out.evaluations >= limit) break;
    Budget mine;
    if (std::isfinite(share)) mine.seconds = std::max(1e-9, share - clock.seconds());
    BudgetedEvaluator part = eval.part(mine);
    Assignment a = pl->place_within(problem, options, part).assignment;
    const std::optional<double> ms = eval.makespan(a.device_of, ws);
    if (!ms) {  // the budget is spent: the best so far, else this one unscored
      if (out.device_of.empty()) out.device_of = std::move(a.device_of);
      break;
    }
    ++out.evaluations;
    if (*ms < out.makespan) {
      out.makespan = *ms;
      out.device_of = std::move(a.device_of);
    }
  }
  return out;
}

void improve_start(const Placer& placer, const Problem& problem, const PlaceOptions& options,
                   BudgetedEvaluator& eval, ListScheduleStart& start) {
  std::vector<DeviceId> a = placer.place_within(problem, options, eval).assignment.device_of;
  SimWorkspace ws;
  const std::optional<double> ms = eval.makespan(a, ws);
  if (ms && *ms < start.makespan) {
    start.device_of = std::move(a);
    start.makespan = *ms;
  }
}

void improve_with_dsc(const Problem& problem, const PlaceOptions& options, BudgetedEvaluator& eval,
                      ListScheduleStart& start) {
  improve_start(DscPlacer(), problem, options, eval, start);
}

PlaceResult LocalSearchPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                            BudgetedEvaluator& eval) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto n = static_cast<std::size_t>(g.num_nodes());

  // Start from the best list scheduler (and DSC's and the level placer's placements where asked);
  // their simulations and time count against the budget.
  ListScheduleStart start = best_list_schedule(problem, options, eval);
  if (s_.dsc) improve_with_dsc(problem, options, eval, start);
  if (s_.levels) improve_start(LevelsPlacer(), problem, options, eval, start);
  std::vector<DeviceId> best = std::move(start.device_of);
  const double best_ms = start.makespan;
  if (p == 1 || n == 0 || eval.spent()) return Assignment{p, best, {}, name()};

  AnnealSettings settings;
  settings.t0 = s_.t0;
  settings.polish = s_.polish;
  settings.focus = s_.focus;
  settings.aim = s_.aim;
  settings.swaps = s_.swaps;
  settings.prefix_cycles = s_.prefix;
  settings.tiebreak = s_.tiebreak;
  settings.threads = options.threads;
  settings.lanes = options.lanes;
  BudgetedEvaluator rest = eval.part(eval.left());
  AnnealResult r = anneal(problem, std::move(best), best_ms, rest, settings, options.seed);
  return Assignment{p, std::move(r.best), {}, name()};
}

}  // namespace doppler
