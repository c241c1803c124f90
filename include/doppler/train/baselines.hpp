#pragma once
// The learned baselines of the paper's comparison, trained on the same simulator as Doppler under
// a budget of simulator calls: Placeto (Addanki et al., NeurIPS 2019) and GDP (Zhou et al.,
// 2019). Neither has an imitation stage. Torch-free interface; the implementations
// (src/train/placeto_trainer.cpp, src/train/gdp_trainer.cpp) use libtorch. docs/baselines.md
// describes the architectures.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/train/policy_gradient.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

/// Which learned baseline.
enum class BaselineMethod {
  placeto,  ///< Placeto: step-by-step improvement of a placement, node by node (N calls/episode)
  gdp,      ///< GDP: GraphSAGE + Transformer-XL placer, one-shot placement (1 call/episode)
};

/// "placeto" or "gdp".
inline std::string baseline_method_name(BaselineMethod m) {
  return m == BaselineMethod::placeto ? "placeto" : "gdp";
}

/// Parses "placeto" or "gdp"; InputError otherwise.
inline BaselineMethod parse_baseline_method(const std::string& name) {
  if (name == "placeto") return BaselineMethod::placeto;
  if (name == "gdp") return BaselineMethod::gdp;
  throw InputError("unknown learned baseline '" + name + "' (expected placeto or gdp)");
}

/// Training budget and hyper-parameters. Fields marked "0: default" take the method's default.
/// Both methods learn from batches of rollouts of the current policy: advantages against the
/// leave-one-out baseline of the batch (policy_gradient.hpp), normalised, and the PPO clipped
/// objective over `ppo_epochs` passes of each batch.
struct BaselineConfig {
  /// Simulator calls allowed in total, the final greedy placement's evaluation included
  /// (Doppler-SIM with il=300, sim=1000 makes 1302). 0: no limit (then `episodes` must be > 0).
  std::int64_t calls = 1302;
  int episodes = 0;  ///< episode limit (0: none; training stops at whichever comes first)
  /// Seconds of the run, the greedy placement included (0: none): an update starts only when,
  /// at the last one's pace, it and the greedy placement end within them (the first always
  /// starts); a learning step that would end past them is skipped (estimated from its rollouts:
  /// the last step's ratio, the first at 8x), and from then on the run only samples, with the
  /// policy as it is, while batches fit; a greedy placement that would end past them is skipped
  /// too (estimated at one episode, placeto, or one forward pass, gdp), the best sample
  /// standing. With calls = episodes = 0 the time alone limits the run.
  double seconds = 0;
  /// Asked after every update (placeto: also every 8 steps of an episode) with the best
  /// makespan so far: false stops training (gdp then places greedily; placeto, whose greedy
  /// placement is another episode, returns its best so far). Optional; how a caller watches or
  /// stops a run. placeto also checks `seconds` every 8 steps and ends a cut batch unused.
  std::function<bool(double best)> on_update{};
  std::uint64_t seed = 0;  ///< seeds the initialisation (torch) and every sample (mt19937_64)
  double lr = 0;           ///< Adam learning rate at the start (0: 1e-3)
  double lr_end = -1;      ///< learning rate at the last update (negative: lr / 10)
  LrSchedule lr_schedule = LrSchedule::cosine;  ///< from lr to lr_end over the updates
  double entropy_weight = 1e-2;  ///< entropy bonus per decision (against unit-scale advantages)
  double grad_clip = 1.0;        ///< global gradient-norm clip (0: none)
  int batch = 0;                 ///< rollouts per update (0: placeto 4 episodes, gdp 8 placements)
  int ppo_epochs = 0;            ///< passes over each batch (0: placeto 1, gdp 10)
  double clip = 0.2;             ///< PPO clip of the probability ratio
  int hidden = 0;                ///< embedding size (0: placeto 32, gdp 64)
  int steps = 0;  ///< placeto: message-passing steps per direction (0: 3); gdp: SAGE layers (0: 3)
  int max_devices = 64;  ///< size of the device one-hot / output layer; P must not exceed it
  // Placeto only.
  double gamma = 1.0;     ///< discount of the per-step rewards
  bool mean_pool = true;  ///< parent/child/parallel pooling by mean (false: sum)
  // GDP only.
  int heads = 4;      ///< attention heads
  int layers = 2;     ///< Transformer-XL layers
  int segment = 128;  ///< segment length (tokens); the memory is the previous segment
  /// When not empty: config.json, log.jsonl (one line per episode), ckpt.pt, best.json and
  /// greedy.json are written here (created when missing).
  std::filesystem::path run_dir;
};

/// Statistics of one training episode.
struct BaselineEpisode {
  int episode = 0;      ///< 0-based
  int decisions = 0;    ///< policy decisions made (placeto: fewer when the budget ran out)
  double makespan = 0;  ///< makespan of the episode's final placement
  /// placeto: return of the first step; gdp: (baseline - makespan) / baseline
  double reward = 0;
  /// placeto: leave-one-out mean of the first step's return over the batch; gdp: leave-one-out
  /// mean of the batch's makespans
  double baseline = 0;
  double advantage = 0;    ///< normalised advantage (placeto: of the first step)
  double loss = 0;         ///< loss minimised by the update of the episode's batch
  double entropy = 0;      ///< mean per-decision policy entropy
  std::int64_t calls = 0;  ///< simulator calls so far
  double seconds = 0;      ///< wall-clock time of the episode (rollout + its share of the update)
  double best = 0;         ///< best makespan seen so far
};

/// Result of a training run.
struct BaselineResult {
  Assignment best;  ///< best placement simulated (every step's placement for placeto) or greedy
  double best_makespan = 0;
  Assignment greedy;  ///< the trained policy's greedy placement
  double greedy_makespan = 0;
  int episodes = 0;  ///< episodes run (placeto: the last ones may be truncated by the budget)
  int updates = 0;   ///< batches learned from
  std::int64_t decisions = 0;     ///< policy decisions made while training
  int decisions_per_episode = 0;  ///< ops decided per episode (input ops follow their consumer)
  std::int64_t cost_calls = 0;    ///< simulator calls, the greedy placement's evaluation included
  double seconds = 0;             ///< training wall-clock time (greedy placement excluded)
  double greedy_seconds = 0;      ///< wall-clock time of the greedy placement (inference)
};

/// Called after every training episode.
using BaselineCallback = std::function<void(const BaselineEpisode&)>;

/// Trains Placeto on `problem` until the budget is spent, then places greedily. InputError on an
/// invalid configuration (e.g. more devices than max_devices, no limit at all).
BaselineResult train_placeto(const Problem& problem, const BaselineConfig& config,
                             const BaselineCallback& on_episode = {});

/// Trains GDP on `problem` until the budget is spent, then places greedily.
BaselineResult train_gdp(const Problem& problem, const BaselineConfig& config,
                         const BaselineCallback& on_episode = {});

/// The greedy placement of `problem` by a Placeto checkpoint (RUN/ckpt.pt). InputError when the
/// file is not a Placeto checkpoint (e.g. a Doppler or GDP one).
Assignment place_placeto(const Problem& problem, const std::filesystem::path& checkpoint);

/// The greedy placement of `problem` by a GDP checkpoint. InputError unless a GDP checkpoint.
Assignment place_gdp(const Problem& problem, const std::filesystem::path& checkpoint);

/// train_placeto or train_gdp.
inline BaselineResult train_baseline(BaselineMethod m, const Problem& problem,
                                     const BaselineConfig& config,
                                     const BaselineCallback& on_episode = {}) {
  return m == BaselineMethod::placeto ? train_placeto(problem, config, on_episode)
                                      : train_gdp(problem, config, on_episode);
}

/// place_placeto or place_gdp.
inline Assignment place_baseline(BaselineMethod m, const Problem& problem,
                                 const std::filesystem::path& checkpoint) {
  return m == BaselineMethod::placeto ? place_placeto(problem, checkpoint)
                                      : place_gdp(problem, checkpoint);
}

}  // namespace doppler
