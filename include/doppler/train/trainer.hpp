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
#include "doppler/train/train_config.hpp"

namespace doppler {

/// Statistics of one finished episode (one line of a run's log.jsonl).
struct EpisodeStats {
  int episode = 0;      ///< 0-based
  double makespan = 0;  ///< makespan of the episode's assignment (cost-function units)
  double reward = 0;    ///< (baseline - makespan) / baseline (RL); 0 for imitation
  double baseline = 0;  ///< mean makespan of the previous episodes (RL)
  double loss_sel = 0, loss_plc = 0;        ///< losses minimised
  double entropy_sel = 0, entropy_plc = 0;  ///< mean per-step policy entropies
  double match_sel = 0,
         match_plc = 0;        ///< fraction of steps whose greedy action is a teacher action
  double lr = 0, epsilon = 0;  ///< schedule values used
  double seconds = 0;          ///< wall-clock time of the episode
  double best = 0;             ///< best makespan so far
  bool diverged = false;       ///< the update was non-finite and rolled back (learning rate halved)
};

/// Result of a training run.
struct TrainResult {
  Assignment best;  ///< best assignment seen (episodes and final greedy rollout)
  double best_makespan = 0;
  Assignment greedy;  ///< the final policy's greedy rollout
  double greedy_makespan = 0;
  int episodes = 0;             ///< episodes run in total (including before a resume)
  std::int64_t cost_calls = 0;  ///< calls of the cost function (simulations or engine runs)
  double seconds = 0;           ///< training wall-clock time (including before a resume)
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
  /// Scores episodes with `f` instead of the simulator.
  void set_cost(CostFunction f);
  /// Starts a new stage on the current networks (e.g. Stage II after Stage I): the stage's
  /// hyper-parameters from `next` (its policy architecture is ignored), fresh optimisers, episode
  /// counter and baseline; the best assignment and the counts of cost calls and time carry over.
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

/// A trained policy loaded for placement (greedy rollouts).
class DopplerPolicy {
public:
  /// Loads the networks of a checkpoint. Throws InputError when unreadable.
  static DopplerPolicy load(const std::filesystem::path& checkpoint);
  DopplerPolicy(DopplerPolicy&&) noexcept;
  DopplerPolicy& operator=(DopplerPolicy&&) noexcept;
  ~DopplerPolicy();

  /// The greedy placement of `problem` (any graph, any device count).
  Assignment place(const Problem& problem);
  /// The architecture.
  const PolicyConfig& config() const;

private:
  DopplerPolicy();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Sets torch (intra- and inter-op) and OpenBLAS to one thread; call once before training.
void use_single_threaded_math();

}  // namespace doppler
