#pragma once
// Internal: Placeto's policy network (Addanki et al., NeurIPS 2019, and its reference code):
//  - node input [compute, output transfer, device one-hot (max_devices), is-current, visited]
//    -> MLP (two hidden layers) = self_v;
//  - k forward steps over parents and k backward steps over children, each
//    x_v = self_v + [v has neighbours] relu(g(sum_{u in N(v)} relu(f(x_u)))), f and g two-layer
//    MLPs per direction; node embedding e_v = [x_fwd_v, x_bwd_v];
//  - for the current node v: separate aggregations relu(g_G(pool_{u in G} relu(f_G(e_u)))) over
//    its parents (ancestors), children (descendants) and parallel nodes, concatenated with e_v;
//  - classifier MLP (hidden 2 x input, input) -> logits over max_devices devices, those beyond
//    the device count masked.
// The whole embedding is recomputed for every state (every step of an episode).
#include <vector>

#include <torch/torch.h>

#include "policy/nn/placeto_graph.hpp"

namespace doppler::nn {

/// Architecture.
struct PlacetoNetConfig {
  int hidden = 32;        ///< node embedding size d (pooled embeddings are 2d)
  int steps = 3;          ///< message-passing steps per direction (k)
  int max_devices = 64;   ///< size of the device one-hot and of the output layer
  bool mean_pool = true;  ///< pooling masks are means (false: sums)
};

/// B states of episodes on one graph.
struct PlacetoStates {
  torch::Tensor device;   ///< [B, N] long: device of every node
  torch::Tensor flags;    ///< [B, N, 2] float: is-current, visited
  torch::Tensor current;  ///< [B] long: current node
  torch::Tensor masks;    ///< [B, 3, N] float: parent, child, parallel pooling masks
};

/// A multi-layer perceptron: Linear layers with ReLU between them (none after the last).
class PlacetoMlpImpl : public torch::nn::Module {
public:
  /// Layer sizes, input first.
  explicit PlacetoMlpImpl(const std::vector<int64_t>& sizes);
  torch::Tensor forward(torch::Tensor x);

private:
  std::vector<torch::nn::Linear> layers_;
};
TORCH_MODULE(PlacetoMlp);

/// The policy: logits over devices for a batch of states.
class PlacetoNetImpl : public torch::nn::Module {
public:
  explicit PlacetoNetImpl(const PlacetoNetConfig& c);
  /// Logits [B, max_devices]; columns >= `devices` are -inf.
  torch::Tensor forward(const PlacetoGraph& g, const PlacetoStates& s, int devices);
  const PlacetoNetConfig& config() const { return c_; }

private:
  torch::Tensor pass(const torch::Tensor& self, const torch::Tensor& src, const torch::Tensor& dst,
                     const torch::Tensor& has, PlacetoMlp& f, PlacetoMlp& g);

  PlacetoNetConfig c_;
  torch::nn::Linear input_{nullptr};  ///< static features and flags -> d
  torch::Tensor device_weight_;       ///< [max_devices, d]: the one-hot columns of the input layer
  PlacetoMlp node_{nullptr};          ///< d -> d -> d after the input layer
  PlacetoMlp fwd_f_{nullptr}, fwd_g_{nullptr}, bwd_f_{nullptr}, bwd_g_{nullptr};
  PlacetoMlp pool_f_[3] = {nullptr, nullptr, nullptr}, pool_g_[3] = {nullptr, nullptr, nullptr};
  PlacetoMlp classifier_{nullptr};
};
TORCH_MODULE(PlacetoNet);

/// Probabilities [B, max_devices] of logits with masked columns (exactly 0 beyond the devices).
torch::Tensor placeto_probs(const torch::Tensor& logits);

}  // namespace doppler::nn
