#pragma once
// Internal: JSON (de)serialisation of the training configuration, for checkpoints and run
// directories (the policy's architecture: policy/nn/policy_config_json.hpp).
#include <nlohmann/json.hpp>

#include "policy/nn/policy_config_json.hpp"

#include "doppler/train/train_config.hpp"

namespace doppler::detail {

nlohmann::json to_json(const TrainConfig& c);
TrainConfig train_config_from_json(const nlohmann::json& j);

}  // namespace doppler::detail
