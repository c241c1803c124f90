#pragma once
// Internal: the networks of the Doppler policies (libtorch modules).
#include <torch/torch.h>

#include "policy/nn/graph_tensors.hpp"

namespace doppler::nn {

/// Sizes of the networks (paper defaults).
struct NetConfig {
  int hidden = 128;         ///< node embedding size H
  int edge_hidden = 128;    ///< hidden size of the edge network
  int steps = 6;            ///< message-passing steps (shared weights)
  int mlp_hidden = 64;      ///< hidden size of the scoring MLPs (4H -> mlp_hidden -> 1)
  int max_levels = 64;      ///< distinct edge-feature levels before quantisation
  int node_features = 5;    ///< columns of the node features (node_feature_count())
  int device_features = 5;  ///< columns of the device features (device_feature_count())
};

/// z-scores each column over dim 0 ((x - mean) / (std + 1e-6), population std).
torch::Tensor zscore(const torch::Tensor& x, int64_t dim = 0);

/// Edge-conditioned message passing (MPNN, Gilmer et al.; the NNConv + GRU of dgllife's
/// MPNNGNN): h0 = relu(W x); an edge network maps each edge feature to an H x H matrix A(e);
/// for `steps` steps, m_v = relu(sum_{u->v} h_u A(e) + b), h = GRU(m, h); output LeakyReLU(h).
class MpnnEncoderImpl : public torch::nn::Module {
public:
  explicit MpnnEncoderImpl(const NetConfig& c);
  /// Node embeddings [N, H].
  torch::Tensor forward(const GraphTensors& g);

private:
  NetConfig c_;
  torch::nn::Linear project_{nullptr};
  torch::nn::Linear edge1_{nullptr}, edge2_{nullptr};
  torch::Tensor conv_bias_;
  torch::nn::GRUCell gru_{nullptr};
};
TORCH_MODULE(MpnnEncoder);

/// SEL: scores every node from [proj(x_v), H_v, b-path sum, t-path sum] (path sums z-scored
/// over the nodes) with a 4H -> mlp_hidden -> 1 MLP. Scores are static within an episode.
class SelNetImpl : public torch::nn::Module {
public:
  explicit SelNetImpl(const NetConfig& c);
  /// Scores [N].
  torch::Tensor forward(const GraphTensors& g);

private:
  MpnnEncoder encoder_{nullptr};
  torch::nn::Linear proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(SelNet);

/// The per-episode part of PLC: node embeddings and the static part of the first layer.
struct PlcStatic {
  torch::Tensor h;     ///< [N, H] node embeddings
  torch::Tensor node;  ///< [N, mlp_hidden]: fc1 applied to [proj(x_v), H_v] plus bias
};

/// PLC: scores each device d for the chosen op v from [proj(y_d), proj(x_v), H_v, S_d], where
/// y_d are the 5 device features (z-scored over devices) and S_d the sum of H over the ops
/// already on d (z-scored over devices), with a 4H -> mlp_hidden -> 1 MLP.
/// With `with_paths` it is the joint single-policy network, scoring (op, device) pairs from
/// [proj(y_d), proj(x_v), H_v, b-path sum, t-path sum, S_d] (6H -> mlp_hidden -> 1).
class PlcNetImpl : public torch::nn::Module {
public:
  explicit PlcNetImpl(const NetConfig& c, bool with_paths = false);
  /// The per-episode static part.
  PlcStatic prepare(const GraphTensors& g);
  /// Scores [T, P] for T steps: y [T, P, 5] (already z-scored over P), ops [T] (long),
  /// device sums s [T, P, H] (raw; z-scored here).
  torch::Tensor score(const PlcStatic& st, const torch::Tensor& y, const torch::Tensor& ops,
                      const torch::Tensor& s);

  /// The same with the device sums already z-scored (ns [T, P, H], a constant state).
  torch::Tensor score_normalised(const PlcStatic& st, const torch::Tensor& y,
                                 const torch::Tensor& ops, const torch::Tensor& ns);

  /// Column offset of the S_d block in fc1 (3H, or 5H with paths).
  int64_t sum_offset() const { return (with_paths_ ? 5 : 3) * c_.hidden; }

  torch::nn::Linear proj_y{nullptr};  ///< 5 -> H
  torch::nn::Linear fc1{nullptr};     ///< 4H (6H) -> mlp_hidden (columns: y | x | H | [b | t] | S)
  torch::nn::Linear fc2{nullptr};     ///< mlp_hidden -> 1

private:
  NetConfig c_;
  bool with_paths_;
  MpnnEncoder encoder_{nullptr};
  torch::nn::Linear proj_x_{nullptr};
};
TORCH_MODULE(PlcNet);

/// Orthogonal weights and zero biases for every Linear of `m` (the reference's init).
void init_linear_layers(torch::nn::Module& m);

}  // namespace doppler::nn
