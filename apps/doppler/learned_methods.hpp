#pragma once
// The learned placement methods of `doppler place` and `doppler compare`: Doppler (loaded or
// trained inside the command) and its ablations.
#include <cstdint>
#include <string>

#include "doppler/heuristics/placer.hpp"

namespace doppler::cli {

/// A learned method's placement and how much it cost.
struct LearnedRun {
  Assignment assignment;  ///< best assignment found (training episodes and final greedy rollout)
  std::int64_t cost_calls =
      0;  ///< simulator calls made while training (Stage I counts its episodes' evaluations too)
};

/// True when `spec` names a learned method (doppler, doppler-il, doppler-sim, doppler-sel,
/// doppler-plc, doppler-joint).
bool is_learned_method(const std::string& spec);

/// Trains (or loads, with policy=PATH) and places. The seed seeds initialisation and sampling.
LearnedRun run_learned_method(const std::string& spec, const Problem& problem,
                              const PlaceOptions& options);

/// --help lines describing the learned methods.
std::string learned_methods_help();

}  // namespace doppler::cli
