#pragma once
// Internal: checkpoint files (torch::serialize archives holding the SEL and PLC networks, their
// Adam states and a JSON "meta" string with the configuration and the training state).
#include <filesystem>
#include <memory>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "policy/nn/agent.hpp"
#include "train/fused_adam.hpp"

namespace doppler::detail {

/// An opened checkpoint.
struct Checkpoint {
  nlohmann::json meta;  ///< {"format": "doppler-checkpoint", ...}
  std::shared_ptr<torch::serialize::InputArchive> archive;
};

/// Writes networks, optimiser states (when given) and `meta` to `path` atomically.
void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent, FusedAdam* opt_sel,
                      FusedAdam* opt_plc, const nlohmann::json& meta);

/// Opens a checkpoint; InputError naming the file when it is missing, truncated or not a
/// Doppler checkpoint.
Checkpoint open_checkpoint(const std::filesystem::path& path);

/// Loads the networks of `c` into `agent` (built with the checkpoint's policy configuration).
void load_networks(const Checkpoint& c, nn::DualAgent& agent, const std::filesystem::path& path);

/// Loads the optimiser states of `c`.
void load_optimizers(const Checkpoint& c, FusedAdam& opt_sel, FusedAdam& opt_plc,
                     const std::filesystem::path& path);

}  // namespace doppler::detail
