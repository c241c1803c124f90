#include "policy/nn/placeto_net.hpp"

#include <cmath>
#include <limits>
#include <string>

#include "doppler/util/number_text.hpp"

namespace doppler::nn {

namespace {

// Glorot-uniform weights and zero biases (Placeto's initialisation).
void glorot(torch::nn::Linear& l) {
  torch::NoGradGuard guard;
  torch::nn::init::xavier_uniform_(l->weight);
  l->bias.zero_();
}

}  // namespace

PlacetoMlpImpl::PlacetoMlpImpl(const std::vector<int64_t>& sizes) {
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) {
    layers_.push_back(register_module(numbered("l", static_cast<long long>(i)),
                                      torch::nn::Linear(sizes[i], sizes[i + 1])));
    glorot(layers_.back());
  }
}

torch::Tensor PlacetoMlpImpl::forward(torch::Tensor x) {
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    x = layers_[i](x);
    if (i + 1 < layers_.size()) x = torch::relu(x);
  }
  return x;
}

PlacetoNetImpl::PlacetoNetImpl(const PlacetoNetConfig& c) : c_(c) {
  const int64_t d = c.hidden, d2 = 2 * c.hidden, in = kPlacetoStatic + 2 + c.max_devices;
  input_ = register_module("input", torch::nn::Linear(kPlacetoStatic + 2, d));
  device_weight_ = register_parameter("device_weight", torch::empty({c.max_devices, d}));
  {  // Glorot over the whole input layer (static features, flags and one-hot together).
    torch::NoGradGuard guard;
    const double r = std::sqrt(6.0 / static_cast<double>(in + d));
    input_->weight.uniform_(-r, r);
    input_->bias.zero_();
    device_weight_.uniform_(-r, r);
  }
  node_ = register_module("node", PlacetoMlp(std::vector<int64_t>{d, d, d}));
  fwd_f_ = register_module("fwd_f", PlacetoMlp(std::vector<int64_t>{d, d, d}));
  fwd_g_ = register_module("fwd_g", PlacetoMlp(std::vector<int64_t>{d, d, d}));
  bwd_f_ = register_module("bwd_f", PlacetoMlp(std::vector<int64_t>{d, d, d}));
  bwd_g_ = register_module("bwd_g", PlacetoMlp(std::vector<int64_t>{d, d, d}));
  const char* names[3] = {"parent", "child", "parallel"};
  for (int k = 0; k < 3; ++k) {
    pool_f_[k] =
        register_module(std::string(names[k]) + "_f", PlacetoMlp(std::vector<int64_t>{d2, d2, d2}));
    pool_g_[k] =
        register_module(std::string(names[k]) + "_g", PlacetoMlp(std::vector<int64_t>{d2, d2, d2}));
  }
  const int64_t z = 4 * d2;
  classifier_ =
      register_module("classifier", PlacetoMlp(std::vector<int64_t>{z, 2 * z, z, c.max_devices}));
}

torch::Tensor PlacetoNetImpl::pass(const torch::Tensor& self, const torch::Tensor& src,
                                   const torch::Tensor& dst, const torch::Tensor& has,
                                   PlacetoMlp& f, PlacetoMlp& g) {
  auto x = self;
  for (int s = 0; s < c_.steps; ++s) {
    const auto msg = torch::relu(f->forward(x)).index_select(1, src);  // [B, E, d]
    const auto sum = torch::zeros_like(x).index_add(1, dst, msg);
    x = self + has * torch::relu(g->forward(sum));
  }
  return x;
}

torch::Tensor PlacetoNetImpl::forward(const PlacetoGraph& g, const PlacetoStates& s, int devices) {
  const int64_t b = s.device.size(0), n = g.num_nodes, d = c_.hidden;
  const auto in = torch::cat({g.x.unsqueeze(0).expand({b, n, kPlacetoStatic}), s.flags}, 2);
  const auto h0 =
      input_(in) + device_weight_.index_select(0, s.device.reshape({-1})).view({b, n, d});
  const auto self = node_->forward(torch::relu(h0));
  const auto fwd = pass(self, g.edge_src, g.edge_dst, g.has_parent, fwd_f_, fwd_g_);
  const auto bwd = pass(self, g.edge_dst, g.edge_src, g.has_child, bwd_f_, bwd_g_);
  const auto e = torch::cat({fwd, bwd}, 2);  // [B, N, 2d]
  std::vector<torch::Tensor> parts;
  for (int k = 0; k < 3; ++k) {
    const auto pooled = s.masks.narrow(1, k, 1).bmm(torch::relu(pool_f_[k]->forward(e)));
    parts.push_back(torch::relu(pool_g_[k]->forward(pooled.squeeze(1))));
  }
  parts.push_back(e.gather(1, s.current.view({b, 1, 1}).expand({b, 1, 2 * d})).squeeze(1));
  auto logits = classifier_->forward(torch::cat(parts, 1));  // [B, max_devices]
  if (devices < c_.max_devices) {
    const auto masked = torch::arange(c_.max_devices, torch::kLong) >= devices;
    logits = logits.masked_fill(masked.unsqueeze(0), -std::numeric_limits<float>::infinity());
  }
  return logits;
}

torch::Tensor placeto_probs(const torch::Tensor& logits) {
  return torch::softmax(logits, 1);
}

}  // namespace doppler::nn
