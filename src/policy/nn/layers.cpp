#include "policy/nn/layers.hpp"

namespace doppler::nn {

namespace F = torch::nn::functional;

torch::Tensor zscore(const torch::Tensor& x, int64_t dim) {
  const auto mean = x.mean(dim, true);
  const auto sd = x.std(dim, /*unbiased=*/false, /*keepdim=*/true);
  return (x - mean) / (sd + 1e-6);
}

void init_linear_layers(torch::nn::Module& m) {
  torch::NoGradGuard guard;
  for (auto& child : m.modules(/*include_self=*/false)) {
    if (auto* lin = child->as<torch::nn::Linear>()) {
      torch::nn::init::orthogonal_(lin->weight);
      if (lin->bias.defined()) lin->bias.zero_();
    }
  }
}

MpnnEncoderImpl::MpnnEncoderImpl(const NetConfig& c) : c_(c) {
  project_ = register_module("project", torch::nn::Linear(c.node_features, c.hidden));
  edge1_ = register_module("edge1", torch::nn::Linear(1, c.edge_hidden));
  edge2_ = register_module("edge2", torch::nn::Linear(c.edge_hidden, c.hidden * c.hidden));
  conv_bias_ = register_parameter("conv_bias", torch::zeros({c.hidden}));
  gru_ = register_module("gru", torch::nn::GRUCell(c.hidden, c.hidden));
}

torch::Tensor MpnnEncoderImpl::forward(const GraphTensors& g) {
  const int64_t hdim = c_.hidden;
  auto h = torch::relu(project_(g.x));
  // One H x H matrix per edge-feature level; edges are sorted by level, so each level's
  // messages are one matrix product (split/unbind keep the backward to one cat/stack).
  const auto mats = edge2_(torch::relu(edge1_(g.level_values))).view({-1, hdim, hdim}).unbind(0);
  std::vector<int64_t> sizes;
  for (std::size_t k = 0; k + 1 < g.level_begin.size(); ++k)
    sizes.push_back(g.level_begin[k + 1] - g.level_begin[k]);
  if (!torch::GradMode::is_enabled()) {
    // Inference: the same operations into buffers reused across the steps (no 2E x H
    // allocation per step; the same products and sums, so bit-identical results).
    const int64_t e = g.edge_src.size(0);
    auto gathered = torch::empty({e, hdim}), msgs = torch::empty({e, hdim});
    auto m = torch::empty_like(h);
    for (int s = 0; s < c_.steps; ++s) {
      torch::index_select_out(gathered, h, 0, g.edge_src);
      for (std::size_t k = 0; k < sizes.size(); ++k) {
        const int64_t b = g.level_begin[k];
        auto out = msgs.narrow(0, b, sizes[k]);
        torch::mm_out(out, gathered.narrow(0, b, sizes[k]), mats[k]);
      }
      m.zero_();
      if (e > 0) m.index_add_(0, g.edge_dst, msgs);
      h = gru_(torch::relu(m + conv_bias_), h);
    }
    return F::leaky_relu(h, F::LeakyReLUFuncOptions().negative_slope(0.1));
  }
  for (int s = 0; s < c_.steps; ++s) {
    const auto parts = h.index_select(0, g.edge_src).split_with_sizes(sizes, 0);
    std::vector<torch::Tensor> msgs;
    msgs.reserve(parts.size());
    for (std::size_t k = 0; k < parts.size(); ++k) msgs.push_back(parts[k].matmul(mats[k]));
    auto m = torch::zeros_like(h);
    if (!msgs.empty()) m = m.index_add(0, g.edge_dst, torch::cat(msgs, 0));
    m = torch::relu(m + conv_bias_);
    h = gru_(m, h);
  }
  return F::leaky_relu(h, F::LeakyReLUFuncOptions().negative_slope(0.1));
}

SelNetImpl::SelNetImpl(const NetConfig& c) {
  encoder_ = register_module("encoder", MpnnEncoder(c));
  proj_ = register_module("proj", torch::nn::Linear(c.node_features, c.hidden));
  fc1_ = register_module("fc1", torch::nn::Linear(4 * c.hidden, c.mlp_hidden));
  fc2_ = register_module("fc2", torch::nn::Linear(c.mlp_hidden, 1));
  init_linear_layers(*this);
}

torch::Tensor SelNetImpl::forward(const GraphTensors& g) {
  const auto leaky = F::LeakyReLUFuncOptions().negative_slope(0.1);
  const auto h = encoder_(g);
  const auto b = path_sums(h, g.b_tour);
  const auto t = path_sums(h, g.t_tour);
  const auto px = F::leaky_relu(proj_(g.x), leaky);
  const auto z = torch::cat({px, h, zscore(b), zscore(t)}, 1);
  return fc2_(F::leaky_relu(fc1_(z), leaky)).squeeze(1);
}

PlcNetImpl::PlcNetImpl(const NetConfig& c, bool with_paths) : c_(c), with_paths_(with_paths) {
  encoder_ = register_module("encoder", MpnnEncoder(c));
  proj_x_ = register_module("proj_x", torch::nn::Linear(c.node_features, c.hidden));
  proj_y = register_module("proj_y", torch::nn::Linear(c.device_features, c.hidden));
  fc1 = register_module("fc1", torch::nn::Linear((with_paths ? 6 : 4) * c.hidden, c.mlp_hidden));
  fc2 = register_module("fc2", torch::nn::Linear(c.mlp_hidden, 1));
  init_linear_layers(*this);
}

PlcStatic PlcNetImpl::prepare(const GraphTensors& g) {
  const auto leaky = F::LeakyReLUFuncOptions().negative_slope(0.1);
  PlcStatic st;
  st.h = encoder_(g);
  const auto px = F::leaky_relu(proj_x_(g.x), leaky);
  const int64_t hd = c_.hidden;
  const auto w = fc1->weight;  // [mlp_hidden, 4H or 6H]: y | x | H | [b | t] | S
  st.node =
      px.matmul(w.narrow(1, hd, hd).t()) + st.h.matmul(w.narrow(1, 2 * hd, hd).t()) + fc1->bias;
  if (with_paths_) {
    const auto& h = st.h;
    const auto b = path_sums(h, g.b_tour);
    const auto t = path_sums(h, g.t_tour);
    st.node = st.node + zscore(b).matmul(w.narrow(1, 3 * hd, hd).t()) +
              zscore(t).matmul(w.narrow(1, 4 * hd, hd).t());
  }
  return st;
}

torch::Tensor PlcNetImpl::score(const PlcStatic& st, const torch::Tensor& y,
                                const torch::Tensor& ops, const torch::Tensor& s) {
  return score_normalised(st, y, ops, zscore(s, 1));  // sums z-scored over devices
}

torch::Tensor PlcNetImpl::score_normalised(const PlcStatic& st, const torch::Tensor& y,
                                           const torch::Tensor& ops, const torch::Tensor& ns) {
  const auto leaky = F::LeakyReLUFuncOptions().negative_slope(0.1);
  const int64_t hd = c_.hidden;
  const auto w = fc1->weight;
  const auto py = F::leaky_relu(proj_y(y), leaky);  // [T, P, H]
  auto pre = py.matmul(w.narrow(1, 0, hd).t()) +
             ns.matmul(w.narrow(1, sum_offset(), hd).t());  // [T, P, M]
  pre = pre + st.node.index_select(0, ops).unsqueeze(1);
  return fc2(F::leaky_relu(pre, leaky)).squeeze(2);  // [T, P]
}

}  // namespace doppler::nn
