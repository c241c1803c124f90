#pragma once
// A trained Doppler policy (SEL + PLC) loaded for placement: the greedy rollout, or the best of
// K sampled rollouts scored by the simulator. Torch-free interface (libdoppler_learn).
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/budget.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/policy_config.hpp"

namespace doppler {

/// The best of K rollouts of a policy.
struct SampledPlacement {
  Assignment best;           ///< lowest simulated makespan among the rollouts
  double best_makespan = 0;  ///< its makespan (FIFO simulator, problem units)
  std::int64_t calls = 0;    ///< simulator calls made (= rollouts)
  /// PLC's device distribution for every op at the step the best rollout placed it ([N][P];
  /// empty rows for ops PLC did not decide, e.g. inputs that follow their consumer): the move
  /// proposal of doppler-search.
  std::vector<std::vector<double>> proposal;
};

/// How to sample: rollout 0 is the greedy one, rollouts 1..K-1 sample at `temperature`.
struct SampleOptions {
  int samples = 64;          ///< K >= 1 rollouts (simulator calls)
  std::uint64_t seed = 0;    ///< seeds the sampled rollouts
  double temperature = 1.0;  ///< > 0
  int threads = 2;           ///< rollouts run on this many threads (results do not depend on it)
  /// Told after every wave of `threads` x 2 rollouts (calls so far, best makespan so far);
  /// false stops sampling with the best rollout so far (at least the greedy one). Optional.
  ProgressCallback progress{};
};

/// A trained policy loaded for placement.
class DopplerPolicy {
public:
  /// Loads the networks of a checkpoint, or of RUN/ckpt.pt when `path` is a run directory.
  /// Throws InputError when unreadable.
  static DopplerPolicy load(const std::filesystem::path& path);
  DopplerPolicy(DopplerPolicy&&) noexcept;
  DopplerPolicy& operator=(DopplerPolicy&&) noexcept;
  ~DopplerPolicy();

  /// The greedy placement of `problem` (any graph, any device count); no simulator call.
  Assignment place(const Problem& problem);
  /// The best of options.samples rollouts, each simulated once.
  SampledPlacement sample(const Problem& problem, const SampleOptions& options);
  /// The architecture.
  const PolicyConfig& config() const;

private:
  DopplerPolicy();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The shipped pretrained policy (models/doppler-pretrained.pt, scripts/pretrain.sh): the file
/// named by the environment variable DOPPLER_MODEL when set, else the source tree's models/
/// folder this build was configured from. The file may be absent (load() then fails).
std::filesystem::path default_policy_path();

/// `path` itself when it is a file, else `path`/ckpt.pt (a run directory given for a checkpoint).
std::filesystem::path checkpoint_path(const std::filesystem::path& path);

}  // namespace doppler
