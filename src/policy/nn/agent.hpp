#pragma once
// Internal: the dual-policy agent (SEL + PLC networks) and the batched log-probabilities of a
// recorded episode.
#include <torch/torch.h>

#include "policy/nn/graph_tensors.hpp"
#include "policy/nn/layers.hpp"
#include "policy/nn/rollout.hpp"

#include "doppler/policy/policy_config.hpp"

namespace doppler::nn {

/// Network outputs of one episode: tensors kept for the loss, and their plain copies for the
/// rollout.
struct Prepared {
  torch::Tensor sel_scores;  ///< [N] (undefined when SEL is not learned)
  PlcStatic plc;             ///< (undefined members when PLC is not learned)
  EpisodeNets nets;          ///< plain copies for the rollout
};

/// Per-step terms of one policy for a recorded episode.
struct StepTerms {
  torch::Tensor logp;     ///< [T] log-probability of the recorded action
  torch::Tensor entropy;  ///< [T] entropy of the policy's distribution
  torch::Tensor teacher;  ///< [T] log of the probability mass on the teacher's tied actions
};

/// The SEL and PLC networks of one policy configuration.
class DualAgent {
public:
  /// Fresh networks (orthogonal init) from torch's current RNG state.
  explicit DualAgent(const PolicyConfig& config);

  /// Runs the encoders (with autograd when `grad`), SEL and PLC in parallel on two threads when
  /// `parallel`, and extracts the plain arrays for the rollout.
  Prepared prepare(const GraphTensors& g, bool grad, bool parallel);
  /// SEL terms of a recorded episode (uses p.sel_scores) under softmax(scores / temperature).
  StepTerms sel_terms(const Prepared& p, const Episode& ep, int num_nodes,
                      double temperature = 1.0);
  /// PLC terms of a recorded episode (uses p.plc) under softmax(scores / temperature).
  StepTerms plc_terms(const Prepared& p, const Episode& ep, int devices, double temperature = 1.0);
  /// The same over the steps of several episodes, concatenated in order (one tensor each).
  StepTerms sel_terms(const Prepared& p, const std::vector<const Episode*>& eps, int num_nodes,
                      double temperature = 1.0);
  StepTerms plc_terms(const Prepared& p, const std::vector<const Episode*>& eps, int devices,
                      double temperature = 1.0);
  /// Joint-variant terms (one distribution over (candidate, device) pairs per step).
  StepTerms joint_terms(const Prepared& p, const Episode& ep, int devices,
                        double temperature = 1.0);

  /// True when the SEL network is learned (dual, sel).
  bool learns_sel() const {
    return config_.variant == PolicyVariant::dual || config_.variant == PolicyVariant::sel_only;
  }
  /// True when the PLC network is learned (dual, plc, and joint, whose network is `plc`).
  bool learns_plc() const { return config_.variant != PolicyVariant::sel_only; }
  /// True for the joint single-policy variant.
  bool joint() const { return config_.variant == PolicyVariant::joint; }
  const PolicyConfig& config() const { return config_; }

  SelNet sel{nullptr};
  PlcNet plc{nullptr};
  /// PLC terms differentiate through the device sums S_d into the encoder (the exact gradient,
  /// slower: O(T x P x H) elementwise work per rollout); false uses the sums recorded in the
  /// steps as an observed state.
  bool exact_sum_gradient = false;

private:
  PolicyConfig config_;
};

/// NetConfig of a PolicyConfig.
NetConfig net_config(const PolicyConfig& c);

}  // namespace doppler::nn
