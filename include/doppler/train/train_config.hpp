#pragma once
// Configuration of Doppler training (Stage I imitation, Stage II simulator RL, Stage III engine
// RL). Torch-free.
#include <cstdint>
#include <functional>
#include <string>

#include "doppler/policy/policy_config.hpp"
#include "doppler/train/policy_gradient.hpp"

namespace doppler {

/// Training stage.
enum class TrainStage {
  imitation,   ///< Stage I: imitate the critical-path placer on the learner's own states
  simulation,  ///< Stage II: REINFORCE with the simulated makespan as reward
  real,        ///< Stage III: REINFORCE with the engine's measured makespan as reward
};

/// "il", "sim" or "real".
std::string train_stage_name(TrainStage s);
/// Parses "il", "sim" or "real"; InputError otherwise.
TrainStage parse_train_stage(const std::string& name);

/// How the episode reward (given at the last step) reaches earlier steps.
enum class ReturnMode {
  episode,     ///< every step gets the episode's reward (undiscounted; the paper's)
  discounted,  ///< step t gets gamma^(T-1-t) x reward (the reference's)
};

/// A named set of defaults for the hyper-parameters left unset.
enum class TrainPreset {
  standard,  ///< the settings that win on the benchmark (docs/training.md)
  paper,     ///< the paper's: one rollout per update, running-mean baseline, epsilon 0.2, ...
};

/// "standard" or "paper".
std::string train_preset_name(TrainPreset p);
/// Parses "standard" or "paper"; InputError otherwise.
TrainPreset parse_train_preset(const std::string& name);

/// How SEL is treated in the RL stages.
enum class SelMode {
  rl,      ///< SEL samples and is trained by the policy gradient (the paper's)
  frozen,  ///< SEL keeps its Stage I weights and takes its most probable op
};

/// Training hyper-parameters. Negative values (and empty strings) mean "the stage's and the
/// preset's default" (filled by with_stage_defaults()).
struct TrainConfig {
  TrainStage stage = TrainStage::simulation;
  TrainPreset preset = TrainPreset::standard;
  /// Rollouts in all (each one simulation in the RL stages; none in Stage I): il 300, sim 2000,
  /// real 100.
  int episodes = -1;
  int rollouts = -1;   ///< rollouts per update K (il: 1; sim/real: standard 16, paper 1)
  double lr = -1;      ///< Adam learning rate after warm-up (il: 1e-3; standard 3e-4; paper 1e-4)
  double lr_end = -1;  ///< learning rate at the last update (cosine/linear; il: = lr; else 1e-6)
  std::string lr_schedule;  ///< constant, cosine or linear (standard: constant; paper: linear)
  int warmup = -1;          ///< warm-up updates (linear from lr / warmup; standard 5, paper 0)
  double epsilon = -1;  ///< uniform-exploration rate at the start (il: 1.0; standard 0; paper 0.2)
  double epsilon_end = 0;   ///< exploration rate at the last update (linear decay)
  double temperature = -1;  ///< RL rollouts sample from softmax(scores / T) (standard 2, paper 1)
  double entropy_weight = -1;  ///< entropy bonus per step (il: 1e-3; standard 1e-3; paper 1e-2)
  /// Baseline of the policy gradient: loo (leave-one-out over the K rollouts of an update,
  /// advantages normalised) or mean (running mean of earlier makespans, relative reward; the
  /// paper's). Default: standard loo, paper mean.
  std::string baseline;
  int ppo_epochs = 1;     ///< passes over each batch with the clipped objective (1: plain PG)
  double ppo_clip = 0.2;  ///< PPO ratio clip
  /// Self-imitation (expert iteration): weight of the log-likelihood of the `elite` best
  /// assignments found so far, added to the policy-gradient loss (standard 0.1, paper 0).
  double self_imitation = -1;
  int elite = 4;                          ///< assignments kept as self-imitation targets
  std::string teacher = "critical-path";  ///< Stage I teacher: critical-path, etf or heft
  SelMode sel = SelMode::rl;              ///< SEL in the RL stages
  double grad_clip = 1.0;                 ///< global gradient-norm clip per network (0: none)
  /// Differentiate PLC's loss through the device sums into the encoder (exact, slower); false
  /// treats the sums each step saw as an observed state.
  bool exact_gradient = false;
  int grad_norm_every =
      10;  ///< log the norms of the loss terms' gradients every N updates (0: never)
  ReturnMode returns = ReturnMode::episode;
  double gamma = 0.99;        ///< discount of ReturnMode::discounted
  std::string action = "";    ///< "sample" or "greedy" ("" = il: greedy, sim/real: sample)
  std::uint64_t seed = 0;     ///< seeds torch's initialisation and every random choice
  int checkpoint_every = 50;  ///< updates between checkpoints (0: only at the end)
  /// Seconds of training in this stage (0: none): no update starts that would end past them at
  /// the pace of the last one, and an update's rollouts (then in waves of 2 x threads) stop after
  /// the wave that ends past them, and a learning step that would end past them (at the last
  /// one's pace relative to its rollouts; the first at 8x) is skipped: the cut batch's best is
  /// kept, nothing is learnt from it.
  double time_budget = 0;
  /// Asked before every update with the best makespan so far (infinity before one): false ends
  /// the stage (the greedy rollout follows). Optional, not saved: how a caller stops a run.
  std::function<bool(double best)> on_update{};
  bool parallel = true;  ///< SEL and PLC updates, and the rollouts, on two threads
  PolicyConfig policy;   ///< architecture (ignored when starting from --init)

  /// A copy with every "default" field set for the stage and the preset.
  TrainConfig with_stage_defaults() const;
  /// Updates of the stage: ceil(episodes / rollouts).
  int updates() const;
};

}  // namespace doppler
