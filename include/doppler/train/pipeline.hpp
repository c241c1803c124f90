#pragma once
// The Stage I -> II -> III pipeline of Doppler, written once for `doppler compare`, `doppler
// demo` and the learned placers, and the engine-measured cost of Stage III.
#include <string>

#include "doppler/engine/engine.hpp"
#include "doppler/train/trainer.hpp"

namespace doppler {

/// What to run: rollouts per stage (0 skips a stage) on top of shared hyper-parameters.
struct PipelineSpec {
  TrainConfig base;  ///< preset, variant, architecture, learning rates...; stage/episodes ignored
  int il = 300;      ///< Stage I rollouts (no simulator call)
  int sim = 0;       ///< Stage II rollouts (one simulator call each)
  int real = 0;      ///< Stage III rollouts (one engine measurement each)
  int repeat = 3;    ///< Stage III: engine runs per measurement (their median)
  std::string init;  ///< checkpoint or run directory to start from (empty: fresh networks)
  /// Seconds the stages share (0: none): each stage's time budget is what is left of them over
  /// the stages still to run (within base.time_budget when that is set too), so the time an early
  /// stage leaves unused goes to the later ones.
  double seconds = 0;
};

/// Runs the stages of `spec` in order on `trainer` (created with spec.base). Stage III needs
/// `measured` (set as the trainer's cost function for it). Returns the last stage's result
/// (only the greedy rollout, unscored, when every stage is empty).
TrainResult run_pipeline(DopplerTrainer& trainer, const PipelineSpec& spec,
                         const CostFunction& measured = {});

/// The engine's measured makespan as a cost (seconds): the median of `repeat` runs, the first
/// call preceded by one warm-up run. The engine must outlive the function.
CostFunction engine_cost(Engine& engine, int repeat);

/// A fresh measurement of `a` for reporting: the median of 2 x repeat runs (no warm-up).
double remeasure(Engine& engine, const Assignment& a, int repeat);

}  // namespace doppler
