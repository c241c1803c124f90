#pragma once
// Placement methods of the registry whose code is loaded on first use.
#include <functional>
#include <vector>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Registers placement methods whose code is loaded on first use (the CLI's learned methods,
/// whose libtorch is loaded only when one is made): placer_infos() lists them at once;
/// make_placer() of one calls `load` (outside the registry's lock), which must register_placer()
/// it, and then makes it. A name already registered with a factory is left as it is.
void register_deferred_placers(std::vector<PlacerInfo> infos, std::function<void()> load);

}  // namespace doppler
