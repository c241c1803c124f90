#pragma once
// One pretraining update (private to src/train): the networks and their optimisers, rollouts of
// a batch of pool problems, one loss over the batch (imitation, policy gradient or distillation),
// gradients averaged over the data-parallel ranks, one optimiser step.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "policy/nn/agent.hpp"
#include "policy/nn/checkpoint.hpp"
#include "policy/nn/expert_label.hpp"
#include "train/fused_adam.hpp"
#include "train/pretrain_pool.hpp"
#include "train/rollback.hpp"

#include "doppler/train/pretrain.hpp"

namespace doppler::detail {

/// The two networks being pretrained, their optimisers, and the last good state (taken at each
/// checkpoint; a diverged update returns to it).
struct PretrainNets {
  std::unique_ptr<nn::DualAgent> agent;
  std::unique_ptr<FusedAdam> opt_sel, opt_plc;
  Snapshot good;

  /// Networks of `policy` initialised from torch's RNG seeded with `seed`, then loaded from
  /// `init` (read from `init_path`) when given; Adam at `lr`; the good state taken.
  void build(const PolicyConfig& policy, std::uint64_t seed, double lr, const Checkpoint* init,
             const std::filesystem::path& init_path);
  /// Both networks' parameters, SEL's first.
  std::vector<torch::Tensor> parameters() const;
  /// A checksum of the weights (the sum of parameter k's sum x k, in double): equal on
  /// replicas whose weights are equal.
  double weight_checksum() const;
  /// Takes the current state as the good one.
  void keep_good() { good.take(*agent, *opt_sel, *opt_plc); }
  /// Returns to the good state.
  void roll_back() { good.restore(*agent, *opt_sel, *opt_plc); }
};

/// Which update to run, as the orchestrator's schedule has it.
struct UpdatePlan {
  int update = 0;          ///< 0-based over Stage I and II
  bool imitation = false;  ///< a Stage I update
  bool distill = false;    ///< a distillation update (imitation of `experts`)
  double lr = 0;           ///< learning rate of the step
  /// Distillation: the labels' expert form, one per pool problem; else unused.
  const std::vector<nn::ExpertLabel>* experts = nullptr;
};

/// What an update did.
struct UpdateOutcome {
  PretrainStats stats;           ///< all but `calls` and `seconds`
  bool stepped = true;           ///< false: diverged (the caller rolls back)
  std::int64_t simulations = 0;  ///< simulator calls of its rollouts
};

/// One update of `nets` on cfg.batch pool problems drawn from (cfg.seed, plan.update, dp.rank):
/// cfg.rollouts rollouts each on cfg.threads threads (simulated in Stage II and with
/// distillation's policy gradient), one loss, one backward pass, gradients averaged over the
/// ranks, per-network clipping at cfg.grad_clip, one step at plan.lr.
UpdateOutcome run_update(PretrainNets& nets, const PretrainPool& pool, const PretrainConfig& cfg,
                         const DataParallel& dp, const UpdatePlan& plan);

}  // namespace doppler::detail
