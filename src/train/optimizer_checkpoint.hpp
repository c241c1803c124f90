#pragma once
// Internal: training checkpoints: the networks and meta of policy/nn/checkpoint.hpp plus the two
// Adam states (records "opt_sel" and "opt_plc"), so that a run can be resumed.
#include <filesystem>

#include <nlohmann/json.hpp>

#include "policy/nn/checkpoint.hpp"
#include "train/fused_adam.hpp"

namespace doppler::detail {

/// Writes networks, optimiser states (when both are given) and `meta` to `path` atomically.
void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent, FusedAdam* opt_sel,
                      FusedAdam* opt_plc, const nlohmann::json& meta);

/// Loads the optimiser states of `c`; InputError naming `path` when it has none.
void load_optimizers(const Checkpoint& c, FusedAdam& opt_sel, FusedAdam& opt_plc,
                     const std::filesystem::path& path);

}  // namespace doppler::detail
