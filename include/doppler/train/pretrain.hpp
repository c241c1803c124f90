#pragma once
// Pretraining one Doppler policy (SEL + PLC) on a distribution of problems (docs/pretraining.md):
// Stage I imitation updates, then policy-gradient updates, each over a batch of problems drawn
// from the pool with K rollouts per problem (leave-one-out advantages within each problem, so
// every problem is its own baseline), rollouts of all problems on parallel threads, optionally
// data-parallel over MPI ranks (gradients averaged). The held-out problems are evaluated every
// eval_every updates and never trained on. Torch-free interface (libdoppler_learn).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "doppler/policy/policy_config.hpp"
#include "doppler/train/pretrain_spec.hpp"

namespace doppler {

/// The architecture of pretrained policies: scaled features, H = 64, edge network 32 wide,
/// 4 message-passing steps (about 0.35 M weights).
PolicyConfig pretrain_policy_defaults();

/// Hyper-parameters of a pretraining run.
struct PretrainConfig {
  int il_updates = 100;          ///< Stage I updates (teacher imitation; no simulator call)
  int updates = 2000;            ///< policy-gradient updates after Stage I
  int batch = 4;                 ///< problems per update (per rank)
  int rollouts = 8;              ///< rollouts per problem and update (K >= 2)
  double lr = 3e-4;              ///< Adam learning rate after warm-up (Stage I: 1e-3)
  double lr_end = 3e-5;          ///< learning rate at the last update (cosine)
  int warmup = 20;               ///< linear warm-up updates
  double temperature = 2;        ///< rollouts sample from softmax(scores / T)
  double entropy_weight = 1e-3;  ///< entropy bonus
  double grad_clip = 1;          ///< per-network gradient-norm clip (0: none)
  std::string teacher = "critical-path";  ///< Stage I teacher (critical-path, etf, heft)
  int eval_every = 100;             ///< held-out evaluation every N updates (0: only at the end)
  int checkpoint_every = 25;        ///< updates between checkpoints
  std::int64_t eval_budget = 1000;  ///< simulator calls of the held-out local-search reference
  std::uint64_t seed = 1;           ///< initialisation and every random choice
  int threads = 2;                  ///< rollout and encoder threads (results do not depend on it)
  double time_budget = 0;           ///< stop (resumably) after this many seconds of this process
  PolicyConfig policy = pretrain_policy_defaults();
  /// Start from this policy's weights (checkpoint or run directory; its architecture replaces
  /// `policy`); empty: fresh networks.
  std::string init;

  // Distillation from search / expert iteration (docs/pretraining.md "Distillation"): on when
  // `distill` is set. Stage II is then `rounds` rounds of: label search on every pool problem
  // (round 0: local-search; later rounds: `distill`, started from the label), then
  // `round_updates` DAgger updates imitating the labels on the policy's own rollouts (plus
  // `pg_weight` x the policy gradient); `updates` is rounds x round_updates.
  std::string distill;               ///< "", "local-search" or "doppler-search"
  std::int64_t label_budget = 4000;  ///< simulator calls of each label search
  int rounds = 3;                    ///< expert-iteration rounds
  int round_updates = 200;           ///< imitation updates per round
  double pg_weight = 0;              ///< weight of the policy-gradient term (0: imitation only)
  double expert_mix = 0.5;  ///< probability that a rollout step takes the label's action (DAgger)
  std::string distill_nets = "both";  ///< the networks that imitate the labels: both, sel or plc
  int eval_pool = 32;                 ///< pool problems evaluated after each round
  int eval_samples = 64;              ///< the best-of-K of the round evaluations
  /// True when distilling.
  bool distilling() const { return !distill.empty(); }

  /// InputError naming the first invalid value.
  void validate() const;
};

/// Data parallelism across processes (MPI ranks); the default is one process.
struct DataParallel {
  int rank = 0;   ///< this process (0 writes the run files)
  int ranks = 1;  ///< processes
  /// Replaces `v` by its element-wise mean over the ranks (collective; unset for one rank).
  std::function<void(std::vector<float>&)> average;
  /// True when `x` is the same on every rank (collective; unset for one rank).
  std::function<bool(double)> agree;
};

/// One update as logged (log.jsonl, "type": "update").
struct PretrainStats {
  int update = 0;                     ///< 0-based over Stage I and II
  bool imitation = false;             ///< a Stage I update
  bool distill = false;               ///< a distillation update (imitation of the search labels)
  std::vector<std::string> problems;  ///< the problems trained on (this rank)
  /// Mean over problems of mean rollout makespan / critical path's (list-schedule estimates when
  /// the rollouts are not simulated: Stage I, distillation without policy gradient).
  double ratio = 0;
  double best_ratio = 0;  ///< mean over problems of the best rollout / critical path's
  double loss = 0, entropy_sel = 0, entropy_plc = 0;
  double lr = 0;
  std::int64_t calls = 0;  ///< simulator calls so far (this rank)
  double seconds = 0;      ///< this update's wall-clock
};

/// A held-out evaluation (log.jsonl, "type": "held_out").
struct HeldOutResult {
  std::string name;
  double greedy = 0;         ///< the policy's greedy placement, simulated
  double critical_path = 0;  ///< critical-path list scheduling, simulated
  double local_search = 0;   ///< local-search with eval_budget calls
  double best_of = 0;        ///< the best of eval_samples rollouts (0 when not evaluated)
};

/// A pretraining run.
class Pretrainer {
public:
  /// Draws the pool (excluding graphs identical to held-out ones) and builds the networks.
  Pretrainer(PretrainSpec spec, PretrainConfig config, DataParallel dp = {});
  ~Pretrainer();
  Pretrainer(const Pretrainer&) = delete;
  Pretrainer& operator=(const Pretrainer&) = delete;

  /// Writes ckpt.pt, log.jsonl (truncated), spec.json and config.json to `dir` (rank 0).
  void set_run_dir(const std::filesystem::path& dir);
  /// Continues the run in `dir` from its checkpoint (its spec and configuration; `updates`
  /// > 0 replaces the Stage II length). InputError when missing or corrupt.
  static std::unique_ptr<Pretrainer> resume(const std::filesystem::path& dir, int updates,
                                            DataParallel dp = {});
  /// Runs to the end (or the time budget); `on_update` sees every update (rank 0 logs).
  void run(const std::function<void(const PretrainStats&)>& on_update = {});
  /// Evaluates the held-out problems with the current weights.
  std::vector<HeldOutResult> evaluate_held_out();
  /// Writes the weights alone (no optimiser state): the file to ship or to place with.
  void export_policy(const std::filesystem::path& path) const;

  /// Names of the training pool's problems.
  std::vector<std::string> pool_names() const;
  /// Names of the held-out problems.
  std::vector<std::string> held_out_names() const;
  /// Updates done (Stage I and II).
  int updates_done() const;
  /// True when every update of both stages is done.
  bool finished() const;

private:
  Pretrainer() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace doppler
