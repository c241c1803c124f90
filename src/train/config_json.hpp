#pragma once
// Internal: JSON (de)serialisation of the policy and training configurations, for checkpoints
// and run directories.
#include <nlohmann/json.hpp>

#include "doppler/policy/policy_config.hpp"
#include "doppler/train/train_config.hpp"

namespace doppler::detail {

nlohmann::json to_json(const PolicyConfig& c);
PolicyConfig policy_config_from_json(const nlohmann::json& j);
nlohmann::json to_json(const TrainConfig& c);
TrainConfig train_config_from_json(const nlohmann::json& j);

}  // namespace doppler::detail
