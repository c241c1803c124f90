#include "doppler/heuristics/run_placer.hpp"

namespace doppler {

PlacementRun run_placer(const std::string& spec, const Problem& problem,
                        const PlaceOptions& options) {
  PlacementRun r;
  const auto placer = make_placer(spec);
  PlaceResult placed = placer->place(problem, options);
  r.assignment = std::move(placed.assignment);
  r.evaluations = placed.spent.calls;
  r.seconds = placed.spent.seconds;
  r.note = std::move(placed.note);
  r.curve = std::move(placed.curve);
  r.assignment.method = spec;
  const Schedule s = problem.simulator().simulate(r.assignment);
  r.makespan = s.makespan;
  r.cross_transfers = s.cross_transfers;
  r.cross_bytes = s.cross_bytes;
  return r;
}

}  // namespace doppler
