#pragma once
// Internal: the GDP policy (Zhou et al. 2019): GraphSAGE node embeddings of the whole graph, a
// Transformer-XL placer over the decided ops in topological order, and a linear output layer
// over max_devices devices (those beyond the device count masked). All ops are placed at once.
#include <vector>

#include <torch/torch.h>

#include "policy/nn/gdp_encoder.hpp"
#include "policy/nn/gdp_placer.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler::nn {

/// Architecture.
struct GdpNetConfig {
  int hidden = 64;       ///< embedding and model size
  int sage_layers = 3;   ///< GraphSAGE layers
  int heads = 4;         ///< attention heads (divides hidden)
  int layers = 2;        ///< Transformer-XL layers
  int segment = 128;     ///< segment length
  int max_devices = 64;  ///< output layer size
};

/// GDP's per-graph tensors.
struct GdpGraph {
  torch::Tensor x;         ///< [N, 5] static node features (doppler/policy/features.hpp)
  torch::Tensor src, dst;  ///< [2E] long: neighbour messages in both directions
  torch::Tensor tokens;    ///< [T] long: the decided ops, topological order
};

/// Builds the tensors; `tokens` are the ops to place, in sequence order.
GdpGraph make_gdp_graph(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                        const std::vector<NodeId>& tokens);

/// The policy network.
class GdpNetImpl : public torch::nn::Module {
public:
  explicit GdpNetImpl(const GdpNetConfig& c);
  /// Logits [T, max_devices] of every token; columns >= `devices` are -inf.
  torch::Tensor forward(const GdpGraph& g, int devices);
  const GdpNetConfig& config() const { return c_; }

private:
  GdpNetConfig c_;
  GdpEncoder encoder_{nullptr};
  torch::nn::Linear proj_{nullptr}, head_{nullptr};
  GdpPlacer placer_{nullptr};
};
TORCH_MODULE(GdpNet);

}  // namespace doppler::nn
