#pragma once
// Internal: the last good state of both networks and their optimisers, to roll a diverged update
// back (a non-finite cost, loss, gradient or weight).
#include <vector>

#include "policy/nn/agent.hpp"
#include "train/fused_adam.hpp"

namespace doppler::detail {

/// A copy of the weights and optimiser states of a DualAgent.
class Snapshot {
public:
  /// Copies the current state.
  void take(nn::DualAgent& agent, FusedAdam& opt_sel, FusedAdam& opt_plc);
  /// Puts the copied state back.
  void restore(nn::DualAgent& agent, FusedAdam& opt_sel, FusedAdam& opt_plc) const;

private:
  std::vector<torch::Tensor> sel_, plc_;
  FusedAdam::State opt_sel_, opt_plc_;
};

/// True when every weight of `m` is finite.
bool all_finite(torch::nn::Module& m);

}  // namespace doppler::detail
