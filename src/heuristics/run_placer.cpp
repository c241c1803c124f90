#include "doppler/heuristics/run_placer.hpp"

#include <chrono>

#include "doppler/heuristics/optimal.hpp"

namespace doppler {

PlacementRun run_placer(const std::string& spec, const Problem& problem,
                        const PlaceOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  PlacementRun r;
  const auto placer = make_placer(spec);
  r.assignment = placer->place(problem, options);
  r.evaluations = placer->evaluations();
  if (const auto* opt = dynamic_cast<const OptimalPlacer*>(placer.get()))
    r.note = opt->last_result().describe();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.assignment.method = spec;
  r.makespan = problem.simulator().makespan(r.assignment);
  return r;
}

}  // namespace doppler
