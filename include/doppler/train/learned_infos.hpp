#pragma once
// What the learned placement methods are, without their code: names, descriptions and options,
// as listings and --help show them. Torch-free (compiled into libdoppler), so that a program can
// list the learned methods and register them as deferred placers (register_deferred_placers)
// without loading libtorch; libdoppler_learn registers their factories with these same infos.
#include <vector>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// doppler, doppler-il, doppler-sim, doppler-sys, doppler-sel, doppler-plc, doppler-joint,
/// doppler-search, placeto and gdp, in that order (the names of kLearnedMethodNames), each
/// with learned = true.
std::vector<PlacerInfo> learned_placer_infos();

}  // namespace doppler
