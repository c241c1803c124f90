#pragma once
// Training the Doppler policies: Stage I (imitation of the critical-path placer), Stage II
// (REINFORCE on the simulator) and Stage III (REINFORCE on the real engine, through a cost
// function). Torch-free interface; the implementation uses libtorch.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/policy/math_threads.hpp"
#include "doppler/train/train_config.hpp"

namespace doppler {

/// Statistics of one update (one line of a run's log.jsonl). An update rolls out K episodes of
/// the same policy, scores them (RL stages) and steps the networks once.
struct EpisodeStats {
  int update = 0;       ///< 0-based update of the stage
  int episode = 0;      ///< 0-based index of the update's last rollout in the stage
  int rollouts = 0;     ///< K of this update
  double makespan = 0;  ///< mean makespan of the batch (Stage I: the list-schedule estimate)
  double makespan_min = 0, makespan_std = 0;  ///< best and spread of the batch
  double reward = 0;    ///< mean advantage (loo: 0 by construction; mean: relative reward)
  double baseline = 0;  ///< mean baseline: running mean (mean) or the batch mean (loo)
  double loss_sel = 0, loss_plc = 0;        ///< losses minimised
  double entropy_sel = 0, entropy_plc = 0;  ///< mean per-step policy entropies
  /// Norms of the gradients of the policy-gradient, (weighted) entropy and (weighted)
  /// self-imitation terms per network; NaN on updates where they are not measured.
  double pg_norm_sel = 0, pg_norm_plc = 0, entropy_norm_sel = 0, entropy_norm_plc = 0,
         si_norm_sel = 0, si_norm_plc = 0;
  double match_sel = 0,
         match_plc = 0;        ///< fraction of steps whose greedy action is a teacher action
  double lr = 0, epsilon = 0;  ///< schedule values used
  double seconds = 0;          ///< wall-clock time of the update (rollouts + costs + step)
  double best = 0;             ///< best makespan so far (NaN in Stage I: nothing is scored)
  std::int64_t calls = 0;      ///< cost-function calls so far (all stages)
  bool diverged = false;       ///< the update was non-finite and rolled back (learning rate halved)
};

/// Result of a training run.
struct TrainResult {
  Assignment best;           ///< best assignment scored (RL rollouts and the final greedy rollout)
  double best_makespan = 0;  ///< NaN after Stage I alone (it scores nothing)
  Assignment greedy;         ///< the final policy's greedy rollout
  double greedy_makespan = 0;   ///< NaN after Stage I alone
  int episodes = 0;             ///< rollouts run in the stage (including before a resume)
  std::int64_t cost_calls = 0;  ///< calls of the cost function, all stages
  double seconds = 0;  ///< training wall-clock time, all stages (including before a resume)
};

/// Scores an assignment: the simulator by default, the engine for Stage III.
using CostFunction = std::function<double(const Assignment&)>;

/// A training run of the Doppler policies on one problem.
class DopplerTrainer {
public:
  /// Fresh networks from `config.policy`, initialised from `config.seed`.
  DopplerTrainer(const Problem& problem, TrainConfig config);
  ~DopplerTrainer();
  DopplerTrainer(const DopplerTrainer&) = delete;
  DopplerTrainer& operator=(const DopplerTrainer&) = delete;

  /// Starts from the weights (and architecture) of a checkpoint (--init); optimiser states
  /// restart. Throws InputError when the file is not a readable Doppler checkpoint.
  void load_weights(const std::filesystem::path& checkpoint);
  /// Scores episodes with `f` instead of the simulator (called from one thread; the simulator
  /// is called from several). The next start_stage() re-scores the best assignment with it.
  void set_cost(CostFunction f);
  /// Starts a new stage on the current networks (e.g. Stage II after Stage I): the stage's
  /// hyper-parameters from `next` (its policy architecture is ignored), fresh optimisers, update
  /// counter, baseline and time budget; the counts of cost calls and time carry over. The best
  /// assignment carries over only when it was scored by the current cost function; otherwise it
  /// is scored again with it (one call) so that a stage never compares makespans of two cost
  /// functions (e.g. Stage III's measured times with Stage II's simulated ones).
  void start_stage(TrainConfig next);
  /// Writes checkpoints (ckpt.pt), the episode log (log.jsonl) and the best assignment
  /// (best.json) into `dir` (created when missing), starting a fresh run: an existing log.jsonl
  /// there is emptied (resume() keeps the log of the run it continues).
  void set_run_dir(const std::filesystem::path& dir);
  /// Restores the complete state of `dir/ckpt.pt` (weights, optimisers, RNG, baseline, best,
  /// episode counter, configuration) so that training continues exactly as if it had not been
  /// interrupted; the log is cut back to the checkpoint. Throws InputError on a missing or
  /// corrupt checkpoint or one made for another graph.
  void resume(const std::filesystem::path& dir);
  /// Trains the remaining episodes, calling `on_episode` after each; then rolls out the final
  /// policy greedily.
  TrainResult train(const std::function<void(const EpisodeStats&)>& on_episode = {});
  /// The current policy's greedy rollout (no exploration).
  Assignment greedy();
  /// The best of o.samples rollouts of the current policy, each simulated (counted in
  /// cost_calls()).
  SampledPlacement sample(const SampleOptions& o);
  /// Cost-function and simulator calls made so far (all stages).
  std::int64_t cost_calls() const;
  /// Writes a checkpoint of the current state to `path` (atomically).
  void save_checkpoint(const std::filesystem::path& path) const;
  /// The effective configuration (stage defaults filled in).
  const TrainConfig& config() const;
  /// Episodes done so far.
  int episodes_done() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace doppler
