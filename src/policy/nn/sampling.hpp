#pragma once
// Internal: batches of rollouts of one policy, run on several threads, each from its own seed,
// optionally scored by the simulator in the same thread.
#include <cstdint>
#include <functional>
#include <limits>
#include <vector>

#include "policy/nn/agent.hpp"
#include "policy/nn/rollout.hpp"

#include "doppler/policy/doppler_policy.hpp"

namespace doppler::nn {

/// One sampled rollout and its simulated makespan (NaN when not simulated).
struct Sampled {
  Episode episode;
  double cost = std::numeric_limits<double>::quiet_NaN();
};

/// One rollout per seed (rollout k draws from mt19937_64(seeds[k]): the result does not depend
/// on `threads`), on up to `threads` threads; with `simulate`, each is scored by the problem's
/// simulator (FIFO) in its thread. Results in seed order.
std::vector<Sampled> sample_rollouts(const Problem& problem, const PolicyConfig& config,
                                     const EpisodeNets& nets, const RolloutOptions& options,
                                     const std::vector<std::uint64_t>& seeds, bool simulate,
                                     int threads);

/// sample_rollouts over `seeds` in waves of `wave` rollouts (0: one wave of all), asking
/// `go_on(so_far)` (when given) after each wave: false ends early, with fewer results. Every
/// rollout keeps its seed, so what comes back never depends on the waves, only how much.
std::vector<Sampled> sample_rollouts_in_waves(
    const Problem& problem, const PolicyConfig& config, const EpisodeNets& nets,
    const RolloutOptions& options, const std::vector<std::uint64_t>& seeds, bool simulate,
    int threads, std::size_t wave, const std::function<bool(const std::vector<Sampled>&)>& go_on);

/// The best of `o.samples` rollouts of `agent` on `problem` (rollout 0 greedy, the others
/// sampled at o.temperature), with the PLC distributions of the best one.
SampledPlacement sample_placement(const Problem& problem, DualAgent& agent, const GraphTensors& gt,
                                  const SampleOptions& o, Teacher teacher = Teacher::critical_path);

/// Index of the lowest cost (the first on ties); -1 for an empty batch.
int best_index(const std::vector<Sampled>& batch);

}  // namespace doppler::nn
