#pragma once
// Internal: one update of the Doppler networks from a batch of recorded rollouts: the imitation
// loss (Stage I), or the policy gradient with advantages, behaviour correction, optional PPO
// clipping, entropy bonus and self-imitation of the elite assignments (Stages II and III).
#include <limits>
#include <vector>

#include "policy/nn/agent.hpp"
#include "policy/nn/sampling.hpp"
#include "train/fused_adam.hpp"

namespace doppler::detail {

/// How the batch is turned into losses.
struct UpdateSettings {
  bool imitation = false;     ///< Stage I: maximise the teacher's log-mass (no advantages)
  bool learn_sel = true;      ///< update SEL
  bool learn_plc = true;      ///< update PLC (the joint network for the joint variant)
  bool joint = false;         ///< the joint variant
  double entropy = 0;         ///< entropy bonus weight (per-step mean)
  double self_imitation = 0;  ///< weight of the elites' negative log-likelihood (per-step mean)
  double temperature = 1;     ///< the rollouts' temperature (the policy is softmax(s / T))
  int ppo_epochs = 1;         ///< passes over the batch (1: plain policy gradient)
  double ppo_clip = 0.2;      ///< ratio clip of the passes
  std::vector<double> step_weights;  ///< [T] per-step return weights (discounting); empty: 1
  double grad_clip = 1;              ///< per-network global norm clip (0: none)
  bool grad_norms = false;           ///< measure each loss term's gradient norm
  bool parallel = true;              ///< SEL and PLC on two threads
  int nodes = 0, devices = 0;        ///< problem size
};

/// What an update measured. Norms are NaN when not measured.
struct UpdateStats {
  bool ok = true;  ///< false: a non-finite loss, gradient or weight (the caller rolls back)
  double loss_sel = 0, loss_plc = 0;
  double entropy_sel = 0, entropy_plc = 0;  ///< mean per-step entropies of the batch
  double pg_norm_sel = std::numeric_limits<double>::quiet_NaN(), pg_norm_plc = pg_norm_sel;
  double entropy_norm_sel = pg_norm_sel, entropy_norm_plc = pg_norm_sel;
  double si_norm_sel = pg_norm_sel, si_norm_plc = pg_norm_sel;
};

/// Updates the networks of `agent` from `batch` (rolled out with the networks `prep` was
/// prepared from), `advantages` (one per rollout; ignored for imitation) and `elites`
/// (self-imitation targets, replayed episodes).
UpdateStats update_networks(nn::DualAgent& agent, const nn::GraphTensors& gt,
                            const nn::Prepared& prep, FusedAdam& opt_sel, FusedAdam& opt_plc,
                            const std::vector<nn::Sampled>& batch,
                            const std::vector<double>& advantages,
                            const std::vector<const nn::Episode*>& elites, const UpdateSettings& s);

/// The loss of one problem's batch for both learned networks (policy gradient with
/// `advantages`, minus the entropy bonus; the teacher's log-mass with s.imitation), without
/// backward or step: for accumulating the gradients of several problems in one update (one
/// pass, no PPO, no self-imitation). Fills the losses and entropies of `st`.
torch::Tensor batch_objective(nn::DualAgent& agent, const nn::Prepared& prep,
                              const std::vector<nn::Sampled>& batch,
                              const std::vector<double>& advantages, const UpdateSettings& s,
                              UpdateStats& st);

}  // namespace doppler::detail
