#pragma once
// Internal: GDP's placer, a Transformer-XL (Dai et al. 2019) over the node embeddings in
// topological order. The sequence is cut into segments of `segment` tokens; every layer of a
// segment attends (multi-head, bidirectionally) over the previous segment's hidden states at that
// layer (the memory, without gradient) and the segment itself, with a learned relative-position
// bias per head (distance between absolute sequence positions). A sequence of at most `segment`
// tokens is one segment without memory: plain attention. Post-LayerNorm residual blocks.
#include <vector>

#include <torch/torch.h>

namespace doppler::nn {

/// One Transformer-XL layer: relative multi-head attention over [memory, segment] + feed-forward.
class GdpXlLayerImpl : public torch::nn::Module {
public:
  GdpXlLayerImpl(int64_t d, int64_t heads, int64_t ff, int64_t max_distance);
  /// x [S, d], mem [M, d] (M may be 0), rel [S, M + S] long indices into the bias table.
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& mem, const torch::Tensor& rel);

private:
  int64_t d_, heads_;
  torch::nn::Linear q_{nullptr}, k_{nullptr}, v_{nullptr}, o_{nullptr}, ff1_{nullptr},
      ff2_{nullptr};
  torch::nn::LayerNorm ln1_{nullptr}, ln2_{nullptr};
  torch::Tensor rel_bias_;  ///< [heads, 2 max_distance + 1]
};
TORCH_MODULE(GdpXlLayer);

/// The stack of layers with segment-level recurrence.
class GdpPlacerImpl : public torch::nn::Module {
public:
  GdpPlacerImpl(int64_t d, int64_t heads, int layers, int segment);
  /// Token states [T, d] -> [T, d].
  torch::Tensor forward(const torch::Tensor& tokens);

private:
  int segment_;
  std::vector<GdpXlLayer> layers_;
};
TORCH_MODULE(GdpPlacer);

}  // namespace doppler::nn
