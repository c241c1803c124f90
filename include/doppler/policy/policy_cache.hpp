#pragma once
// Loaded policies shared by the placers of a process: a checkpoint is read once, and sampling
// from it is serialised (DopplerPolicy is not meant for concurrent callers).
#include <memory>
#include <mutex>
#include <string>

#include "doppler/policy/doppler_policy.hpp"

namespace doppler {

/// A loaded policy and the mutex its sample() runs under.
struct SharedPolicy {
  explicit SharedPolicy(DopplerPolicy p) : policy(std::move(p)) {}
  std::mutex mutex;      ///< held during sample()
  DopplerPolicy policy;  ///< the loaded policy
};

/// The policy at `path` (a checkpoint or a run directory), loaded once per process: cached by
/// the checkpoint's canonical path, modification time and size, so a rewritten file is reloaded.
/// At most 8 stay loaded. InputError (naming the file) when it cannot be loaded.
std::shared_ptr<SharedPolicy> shared_policy(const std::string& path);

/// The best of `o.samples` rollouts of a shared policy, under its mutex.
SampledPlacement sample_shared(SharedPolicy& p, const Problem& problem, const SampleOptions& o);

}  // namespace doppler
