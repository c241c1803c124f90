#pragma once
// Internal: builds the links and routes of a profile from its "topology" object.
#include <string>

#include "doppler/hardware/profile.hpp"
#include "doppler/util/json_doc.hpp"

namespace doppler::detail {

/// Fills profile.links, profile.routes and profile.topology from the topology object at
/// `pointer`; profile.devices must already be set. Throws InputError on a bad description.
void build_topology(const JsonDoc& doc, const nlohmann::json& topo, const std::string& pointer,
                    HardwareProfile& profile);

}  // namespace doppler::detail
