#pragma once
// Internal: Adam (Kingma & Ba) with the update of each parameter tensor done in one pass over
// memory (libtorch 1.13's Adam runs a dozen tensor operations per parameter, which dominates an
// episode for the 2M-parameter edge networks). Same formula as torch::optim::Adam without weight
// decay: m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2,
// p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
#include <vector>

#include <torch/torch.h>

namespace doppler::detail {

class FusedAdam {
public:
  /// Optimises `params` (float32, contiguous).
  explicit FusedAdam(std::vector<torch::Tensor> params, double lr, double beta1 = 0.9,
                     double beta2 = 0.999, double eps = 1e-8);
  /// Sets the learning rate of the next steps.
  void set_lr(double lr) { lr_ = lr; }
  /// Zeroes the gradients.
  void zero_grad();
  /// One update from the current gradients (parameters without a gradient are skipped).
  void step();
  /// A deep copy of the optimiser state (both moments and the step count).
  struct State {
    std::vector<torch::Tensor> m, v;
    std::int64_t t = 0;
  };
  /// Copies the state out / back (for rolling back a diverged update).
  State state() const;
  void set_state(const State& s);
  /// Writes / reads the state (step count and both moments).
  void save(torch::serialize::OutputArchive& a) const;
  void load(torch::serialize::InputArchive& a);

private:
  std::vector<torch::Tensor> params_, m_, v_;
  double lr_, b1_, b2_, eps_;
  std::int64_t t_ = 0;
};

}  // namespace doppler::detail
