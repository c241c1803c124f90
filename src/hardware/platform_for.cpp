#include "doppler/hardware/platform_for.hpp"

#include "doppler/hardware/shipped.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

Platform platform_for(const Graph& g, const std::string& hardware, int devices) {
  if (!hardware.empty()) return Platform::hardware(load_hardware_profile(hardware), devices);
  if (!g.has_reference_costs()) {
    std::string names;
    for (const auto& p : shipped_profiles()) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("graph '" + g.meta().name +
                     "' has no reference costs: pass --hardware PROFILE (shipped: " + names + ")");
  }
  return Platform::reference(devices);
}

}  // namespace doppler
