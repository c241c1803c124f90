#pragma once
// The hardware profiles shipped with Doppler (hardware/*.json, embedded in the binary).
#include <string>
#include <vector>

#include "doppler/hardware/profile.hpp"

namespace doppler {

/// A shipped profile: short names accepted on the command line and its JSON text.
struct ShippedProfile {
  std::string name;                  ///< canonical name, e.g. "4xP100-PCIe"
  std::vector<std::string> aliases;  ///< short names, e.g. "p100"
  std::string json;                  ///< the profile document
};

/// Every shipped profile.
const std::vector<ShippedProfile>& shipped_profiles();

/// Loads a profile by shipped name or alias (case-insensitive) or from a JSON file path.
/// Throws InputError listing the shipped names when neither matches.
HardwareProfile load_hardware_profile(const std::string& name_or_path);

}  // namespace doppler
