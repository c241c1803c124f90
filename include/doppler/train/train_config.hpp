#pragma once
// Configuration of Doppler training (Stage I imitation, Stage II simulator RL, Stage III engine
// RL). Torch-free.
#include <cstdint>
#include <string>

#include "doppler/policy/policy_config.hpp"

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

/// Training hyper-parameters. Negative values mean "the stage's default" (filled by
/// with_stage_defaults()).
struct TrainConfig {
  TrainStage stage = TrainStage::simulation;
  int episodes = -1;  ///< il: 300, sim: 2000, real: 100
  double lr = -1;     ///< il: 1e-3, sim/real: 1e-4 (Adam)
  double lr_end =
      -1;  ///< learning rate at the last episode (linear decay); il: = lr, sim/real: 1e-6
  double epsilon = -1;         ///< exploration at the first episode; il: 1.0, sim/real: 0.2
  double epsilon_end = 0;      ///< exploration at the last episode (linear decay)
  double entropy_weight = -1;  ///< il: 1e-3, sim/real: 1e-2
  double grad_clip = 1.0;      ///< global gradient-norm clip per network (0: none)
  ReturnMode returns = ReturnMode::episode;
  double gamma = 0.99;        ///< discount of ReturnMode::discounted
  std::string action = "";    ///< "sample" or "greedy" ("" = il: greedy, sim/real: sample)
  std::uint64_t seed = 0;     ///< seeds torch's initialisation and every random choice
  int checkpoint_every = 50;  ///< episodes between checkpoints (0: only at the end)
  double time_budget = 0;     ///< stop after this many seconds of training (0: no limit)
  bool parallel = true;       ///< run SEL and PLC on two threads
  PolicyConfig policy;        ///< architecture (ignored when starting from --init)

  /// A copy with every "default" field set for the stage.
  TrainConfig with_stage_defaults() const;
};

}  // namespace doppler
