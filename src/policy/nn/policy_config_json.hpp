#pragma once
// Internal: JSON (de)serialisation of a policy's architecture, as stored in checkpoints' meta.
#include <nlohmann/json.hpp>

#include "doppler/policy/policy_config.hpp"

namespace doppler::detail {

/// The architecture as a JSON object (variant, widths, steps, features, ...).
nlohmann::json to_json(const PolicyConfig& c);
/// Inverse of to_json (nlohmann exceptions on missing or mistyped fields).
PolicyConfig policy_config_from_json(const nlohmann::json& j);

}  // namespace doppler::detail
