#pragma once
// Internal: a graph's policy inputs as tensors, built once per (graph, cost model).
#include <torch/torch.h>

#include "doppler/policy/features.hpp"

namespace doppler::nn {

/// Tensors of GraphFeatures. Message-passing edges are sorted by edge-feature level so that the
/// encoder can apply one edge matrix per level with one matrix product per level.
struct GraphTensors {
  torch::Tensor x;                        ///< [N, 5] node features
  torch::Tensor edge_src;                 ///< [2E] long, sorted by level
  torch::Tensor edge_dst;                 ///< [2E] long, same order
  torch::Tensor level_values;             ///< [U, 1] edge feature of each level
  std::vector<std::int64_t> level_begin;  ///< U + 1 offsets of each level's edges
  torch::Tensor path_row_b, path_col_b;   ///< b-path pairs: out[row] += H[col]
  torch::Tensor path_row_t, path_col_t;   ///< t-path pairs
  int num_nodes = 0;
  bool quantized = false;  ///< true when edge features were binned into `max_levels` levels
};

/// Builds the tensors. Distinct edge-feature values become levels; graphs with more than
/// `max_levels` distinct values have their edge features replaced by the mean of their
/// quantile bin (max_levels bins), which keeps the encoder's cost linear in the graph size.
GraphTensors make_graph_tensors(const GraphFeatures& f, int max_levels);

}  // namespace doppler::nn
