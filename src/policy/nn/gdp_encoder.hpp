#pragma once
// Internal: GDP's graph encoder (Zhou et al. 2019), GraphSAGE (Hamilton et al. 2017) with the
// max-pooling aggregator over the neighbours in both directions:
//   a_v = max_{u in N(v)} relu(W_pool h_u + b),  h_v = relu(W [h_v, a_v]),  h_v = h_v / |h_v|_2.
#include <vector>

#include <torch/torch.h>

namespace doppler::nn {

/// One GraphSAGE layer (max-pooling aggregator, concatenation with self, L2 normalisation).
class GdpSageLayerImpl : public torch::nn::Module {
public:
  GdpSageLayerImpl(int64_t in, int64_t out);
  /// h [N, in] -> [N, out]; messages go from src[k] to dst[k] (both directions listed).
  torch::Tensor forward(const torch::Tensor& h, const torch::Tensor& src, const torch::Tensor& dst);

private:
  torch::nn::Linear pool_{nullptr}, combine_{nullptr};
};
TORCH_MODULE(GdpSageLayer);

/// k GraphSAGE layers: input features -> node embeddings [N, hidden].
class GdpEncoderImpl : public torch::nn::Module {
public:
  GdpEncoderImpl(int64_t in, int64_t hidden, int layers);
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& src, const torch::Tensor& dst);

private:
  std::vector<GdpSageLayer> layers_;
};
TORCH_MODULE(GdpEncoder);

}  // namespace doppler::nn
