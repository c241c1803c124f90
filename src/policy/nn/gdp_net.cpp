#include "policy/nn/gdp_net.hpp"

#include <limits>

#include "doppler/policy/features.hpp"

namespace doppler::nn {

namespace {
torch::Tensor long_tensor(const std::vector<std::int64_t>& v) {
  return torch::from_blob(const_cast<std::int64_t*>(v.data()),
                          {static_cast<std::int64_t>(v.size())}, torch::kLong)
      .clone();
}
}  // namespace

GdpGraph make_gdp_graph(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                        const std::vector<NodeId>& tokens) {
  const GraphFeatures f = graph_features(g, cost, an);
  GdpGraph out;
  out.x = torch::from_blob(const_cast<float*>(f.node.data()), {f.num_nodes, kNodeFeatures},
                           torch::kFloat)
              .clone();
  out.src = long_tensor(std::vector<std::int64_t>(f.edge_src.begin(), f.edge_src.end()));
  out.dst = long_tensor(std::vector<std::int64_t>(f.edge_dst.begin(), f.edge_dst.end()));
  out.tokens = long_tensor(std::vector<std::int64_t>(tokens.begin(), tokens.end()));
  return out;
}

GdpNetImpl::GdpNetImpl(const GdpNetConfig& c) : c_(c) {
  encoder_ = register_module("encoder", GdpEncoder(kNodeFeatures, c.hidden, c.sage_layers));
  proj_ = register_module("proj", torch::nn::Linear(c.hidden, c.hidden));
  placer_ = register_module("placer", GdpPlacer(c.hidden, c.heads, c.layers, c.segment));
  head_ = register_module("head", torch::nn::Linear(c.hidden, c.max_devices));
}

torch::Tensor GdpNetImpl::forward(const GdpGraph& g, int devices) {
  const auto h = encoder_(g.x, g.src, g.dst);
  const auto y = placer_(proj_(h.index_select(0, g.tokens)));
  auto logits = head_(y);
  if (devices < c_.max_devices) {
    const auto masked = torch::arange(c_.max_devices, torch::kLong) >= devices;
    logits = logits.masked_fill(masked.unsqueeze(0), -std::numeric_limits<float>::infinity());
  }
  return logits;
}

}  // namespace doppler::nn
