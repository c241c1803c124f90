#include "policy/nn/gdp_placer.hpp"

#include <cmath>
#include <string>

#include "doppler/util/number_text.hpp"

namespace doppler::nn {

GdpXlLayerImpl::GdpXlLayerImpl(int64_t d, int64_t heads, int64_t ff, int64_t max_distance)
    : d_(d), heads_(heads) {
  q_ = register_module("q", torch::nn::Linear(d, d));
  k_ = register_module("k", torch::nn::Linear(d, d));
  v_ = register_module("v", torch::nn::Linear(d, d));
  o_ = register_module("o", torch::nn::Linear(d, d));
  ff1_ = register_module("ff1", torch::nn::Linear(d, ff));
  ff2_ = register_module("ff2", torch::nn::Linear(ff, d));
  ln1_ = register_module("ln1", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  ln2_ = register_module("ln2", torch::nn::LayerNorm(torch::nn::LayerNormOptions({d})));
  rel_bias_ = register_parameter("rel_bias", torch::zeros({heads, 2 * max_distance + 1}));
}

torch::Tensor GdpXlLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& mem,
                                      const torch::Tensor& rel) {
  const int64_t s = x.size(0), dh = d_ / heads_;
  const auto ctx = mem.defined() && mem.size(0) > 0 ? torch::cat({mem, x}, 0) : x;
  const int64_t m = ctx.size(0);
  const auto q = q_(x).view({s, heads_, dh}).transpose(0, 1);    // [H, S, dh]
  const auto k = k_(ctx).view({m, heads_, dh}).transpose(0, 1);  // [H, M+S, dh]
  const auto v = v_(ctx).view({m, heads_, dh}).transpose(0, 1);
  const auto bias = rel_bias_.index_select(1, rel.reshape({-1})).view({heads_, s, m});
  const auto scores = q.matmul(k.transpose(1, 2)) / std::sqrt(static_cast<double>(dh)) + bias;
  const auto att = torch::softmax(scores, 2).matmul(v).transpose(0, 1).reshape({s, d_});
  const auto h = ln1_(x + o_(att));
  return ln2_(h + ff2_(torch::relu(ff1_(h))));
}

GdpPlacerImpl::GdpPlacerImpl(int64_t d, int64_t heads, int layers, int segment)
    : segment_(segment) {
  for (int l = 0; l < layers; ++l)
    layers_.push_back(
        register_module(numbered("layer", l), GdpXlLayer(d, heads, 2 * d, 2 * int64_t{segment})));
}

torch::Tensor GdpPlacerImpl::forward(const torch::Tensor& tokens) {
  const int64_t t = tokens.size(0), r = 2 * int64_t{segment_};
  std::vector<torch::Tensor> mems(layers_.size()), outs;
  for (int64_t start = 0; start < t; start += segment_) {
    const int64_t s = std::min<int64_t>(segment_, t - start);
    const int64_t m = mems[0].defined() ? mems[0].size(0) : 0;
    // Relative distance of query i (position start + i) to key j (position start - m + j).
    const auto qi = torch::arange(s, torch::kLong).unsqueeze(1);
    const auto kj = torch::arange(m + s, torch::kLong).unsqueeze(0);
    const auto rel = (qi + m - kj).clamp(-r, r) + r;
    auto x = tokens.narrow(0, start, s);
    for (std::size_t l = 0; l < layers_.size(); ++l) {
      const auto input = x;
      x = layers_[l]->forward(x, mems[l], rel);
      mems[l] = input.detach();  // Transformer-XL memory: this segment's input to layer l
    }
    outs.push_back(x);
  }
  return outs.empty() ? tokens : torch::cat(outs, 0);
}

}  // namespace doppler::nn
