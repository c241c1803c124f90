#pragma once
// Internal: checkpoint files (torch::serialize archives holding the SEL and PLC networks, a JSON
// "meta" string with the configuration, and whatever a trainer adds: its optimiser states and
// training state; train/optimizer_checkpoint.hpp). Inference reads them from here.
#include <filesystem>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "policy/nn/agent.hpp"

namespace doppler::detail {

/// An opened checkpoint.
struct Checkpoint {
  nlohmann::json meta;  ///< {"format": "doppler-checkpoint", ...}
  std::shared_ptr<torch::serialize::InputArchive> archive;
};

/// Records a writer adds to the root archive beside the networks and the meta (may be empty).
using ExtraRecords = std::function<void(torch::serialize::OutputArchive& root)>;

/// Saves `root` to `path` atomically (a temporary file renamed over it); InputError naming the
/// file when it cannot be written.
void save_archive_atomic(torch::serialize::OutputArchive& root, const std::filesystem::path& path);

/// Writes the networks, `extra`'s records and `meta` to `path` atomically.
void write_checkpoint(const std::filesystem::path& path, nn::DualAgent& agent,
                      const nlohmann::json& meta, const ExtraRecords& extra = {});

/// Opens a checkpoint; InputError naming the file when it is missing, truncated or not a
/// Doppler checkpoint.
Checkpoint open_checkpoint(const std::filesystem::path& path);

/// Loads the networks of `c` into `agent` (built with the checkpoint's policy configuration).
void load_networks(const Checkpoint& c, nn::DualAgent& agent, const std::filesystem::path& path);

}  // namespace doppler::detail
