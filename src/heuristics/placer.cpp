#include "doppler/heuristics/placer.hpp"

namespace doppler {

PlaceResult Placer::place(const Problem& problem, const PlaceOptions& options) const {
  PlaceOptions resolved = options;
  resolved.budget = resolve(options.budget, default_calls());
  BudgetedEvaluator eval(problem.simulator(), resolved.budget);
  if (options.progress) eval.watch(options.progress);
  PlaceResult r = place_within(problem, resolved, eval);
  r.spent = eval.spent_so_far();
  r.curve = eval.trace();
  return r;
}

}  // namespace doppler
