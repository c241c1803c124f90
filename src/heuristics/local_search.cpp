#include <algorithm>
#include <chrono>
#include <limits>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/heuristics/simple_placers.hpp"

namespace doppler {

ListScheduleStart best_list_schedule(const Problem& problem, const PlaceOptions& options,
                                     int limit) {
  const CriticalPathPlacer cp;
  const HeftPlacer heft;
  const EtfPlacer etf, metf(0.1);
  const BalancedPlacer balanced;
  ListScheduleStart out;
  SimWorkspace ws;
  for (const Placer* pl :
       std::initializer_list<const Placer*>{&cp, &heft, &etf, &metf, &balanced}) {
    if (out.evaluations >= limit) break;
    Assignment a = pl->place(problem, options);
    const double ms = problem.simulator().makespan(a.device_of, ws);
    ++out.evaluations;
    if (ms < out.makespan) {
      out.makespan = ms;
      out.device_of = std::move(a.device_of);
    }
  }
  return out;
}

Assignment LocalSearchPlacer::place(const Problem& problem, const PlaceOptions& options) const {
  evaluations_ = 0;
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto n = static_cast<std::size_t>(g.num_nodes());
  const std::int64_t budget_evals = options.budget.evaluations > 0
                                        ? options.budget.evaluations
                                        : (options.budget.seconds > 0 ? 0 : 20000);
  const auto t0 = std::chrono::steady_clock::now();

  // Start from the best list scheduler.
  ListScheduleStart start = best_list_schedule(problem, options);
  evaluations_ += start.evaluations;
  std::vector<DeviceId> best = std::move(start.device_of);
  const double best_ms = start.makespan;
  if (p == 1 || n == 0) return {p, best, {}, name()};

  AnnealSettings settings;
  settings.t0 = t0_;
  settings.polish = polish_;
  settings.focus = focus_;
  // The list schedulers' simulations and time count against the budget.
  Budget b;
  b.evaluations = budget_evals > 0 ? std::max<std::int64_t>(0, budget_evals - evaluations_) : 0;
  if (options.budget.seconds > 0)
    b.seconds = std::max(
        1e-9, options.budget.seconds -
                  std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  if (budget_evals > 0 && b.evaluations == 0) return {p, best, {}, name()};
  AnnealResult r = anneal(problem, std::move(best), best_ms, b, settings, options.seed);
  evaluations_ += r.evaluations;
  return {p, std::move(r.best), {}, name()};
}

}  // namespace doppler
