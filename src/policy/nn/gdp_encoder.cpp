#include "policy/nn/gdp_encoder.hpp"

#include <torch/version.h>

#include "doppler/util/number_text.hpp"

namespace doppler::nn {

namespace F = torch::nn::functional;

namespace {
// Drops libtorch 1.13's one-time "scatter_reduce() is in beta" notice (printed on stderr).
// (libtorch 2 changed the handler's signature and moved the guard.)
class SilentWarnings : public c10::WarningHandler {
public:
#if TORCH_VERSION_MAJOR < 2
  void process(const c10::SourceLocation&, const std::string&, const bool) override {}
#else
  void process(const c10::Warning&) override {}
#endif
};
#if TORCH_VERSION_MAJOR < 2
using QuietWarnings = c10::Warning::WarningHandlerGuard;
#else
using QuietWarnings = c10::WarningUtils::WarningHandlerGuard;
#endif
}  // namespace

GdpSageLayerImpl::GdpSageLayerImpl(int64_t in, int64_t out) {
  pool_ = register_module("pool", torch::nn::Linear(in, out));
  combine_ = register_module("combine", torch::nn::Linear(in + out, out));
}

torch::Tensor GdpSageLayerImpl::forward(const torch::Tensor& h, const torch::Tensor& src,
                                        const torch::Tensor& dst) {
  const auto pooled = torch::relu(pool_(h));  // >= 0, so a zero start is the max's identity
  auto agg = torch::zeros({h.size(0), pooled.size(1)}, pooled.options());
  if (src.numel() > 0) {
    static SilentWarnings silent;
    const QuietWarnings quiet(&silent);
    agg = agg.scatter_reduce(0, dst.unsqueeze(1).expand({dst.size(0), pooled.size(1)}),
                             pooled.index_select(0, src), "amax", /*include_self=*/true);
  }
  const auto out = torch::relu(combine_(torch::cat({h, agg}, 1)));
  return F::normalize(out, F::NormalizeFuncOptions().p(2).dim(1).eps(1e-6));
}

GdpEncoderImpl::GdpEncoderImpl(int64_t in, int64_t hidden, int layers) {
  for (int l = 0; l < layers; ++l)
    layers_.push_back(
        register_module(numbered("sage", l), GdpSageLayer(l == 0 ? in : hidden, hidden)));
}

torch::Tensor GdpEncoderImpl::forward(const torch::Tensor& x, const torch::Tensor& src,
                                      const torch::Tensor& dst) {
  auto h = x;
  for (auto& l : layers_) h = l->forward(h, src, dst);
  return h;
}

}  // namespace doppler::nn
