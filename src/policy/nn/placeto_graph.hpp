#pragma once
// Internal: the static inputs of Placeto for one graph (Addanki et al., NeurIPS 2019): the two
// static node features, the edges for forward (parent -> child) and backward message passing,
// and the ancestor / descendant sets of every node as bitsets, from which the parent, child and
// parallel pooling masks of the current node are made at every step.
#include <cstdint>
#include <vector>

#include <torch/torch.h>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler::nn {

/// Number of static Placeto node features (compute cost, output transfer time).
inline constexpr int kPlacetoStatic = 2;

/// Placeto's per-graph tensors and reachability sets.
struct PlacetoGraph {
  int num_nodes = 0;
  torch::Tensor x;         ///< [N, 2] compute(v) and max over out-edges of transfer(e), z-scored
  torch::Tensor edge_src;  ///< [E] long: parent of each edge
  torch::Tensor edge_dst;  ///< [E] long: child of each edge
  torch::Tensor has_parent, has_child;  ///< [N, 1] float: 1 when v has a parent / child
  int words = 0;                        ///< 64-bit words per bitset row
  std::vector<std::uint64_t> anc;       ///< N rows: ancestors of v (v excluded)
  std::vector<std::uint64_t> desc;      ///< N rows: descendants of v (v excluded)
};

/// Builds Placeto's inputs of `g` under the nominal costs of `cost` (O(E N / 64) for the sets).
PlacetoGraph make_placeto_graph(const Graph& g, const CostModel& cost);

/// Pooling masks of current node v, written to out[0..3N): ancestors ("parents" in Placeto),
/// descendants ("children") and parallel nodes (neither, v excluded). With `mean` each row is
/// divided by its size (empty rows stay zero); otherwise rows are 0/1 (sum pooling).
void placeto_masks(const PlacetoGraph& g, NodeId v, bool mean, float* out);

}  // namespace doppler::nn
