#pragma once
// Running one placement method by spec, timed and scored by the simulator: what `doppler place`,
// `doppler compare` and the Python binding's `doppler.place` share.
#include <cstdint>
#include <string>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// The outcome of one placement run.
struct PlacementRun {
  Assignment assignment;             ///< the placement (its `method` is the spec)
  double makespan = 0;               ///< simulated makespan (FIFO dispatch; problem units)
  double seconds = 0;                ///< wall-clock placement time (seconds)
  std::int64_t evaluations = 0;      ///< simulator calls made by the method
  std::string note;                  ///< the method's status line (optimal: proof status), or empty
  int cross_transfers = 0;           ///< transfers between devices in the simulated schedule
  double cross_bytes = 0;            ///< bytes they move
  std::vector<ProgressPoint> curve;  ///< the search's anytime curve (PlaceResult::curve)
};

/// Makes the placer of `spec` (make_placer: InputError for an unknown name or option), places
/// `problem` with it and scores the assignment with the problem's simulator (one simulation,
/// not counted against the method's budget).
PlacementRun run_placer(const std::string& spec, const Problem& problem,
                        const PlaceOptions& options);

}  // namespace doppler
