#pragma once
// Internal: a graph's policy inputs as tensors, built once per (graph, cost model).
#include <torch/torch.h>

#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/features.hpp"
#include "doppler/policy/policy_config.hpp"

namespace doppler::nn {

/// Path sums in O(N): the paths of GraphFeatures::b_next (or t_prev) form a forest (each node's
/// path continues with its next node's path), so the sum of H over v's path is the sum over
/// v's ancestors-or-self, read off an Euler tour: +H[u] where the tour enters u, -H[u] where it
/// leaves, and the prefix sum at v's entry (see path_sums()).
struct PathTour {
  torch::Tensor node;   ///< [2N] long, the node entered or left at each tour position
  torch::Tensor sign;   ///< [2N, 1] float, +1 on entry, -1 on exit
  torch::Tensor entry;  ///< [N] long, tour position of each node's entry
};

/// Sums of h [N, H] over every node's path (rows), exact up to rounding (accumulated in double).
torch::Tensor path_sums(const torch::Tensor& h, const PathTour& tour);

/// Tensors of GraphFeatures. Message-passing edges are sorted by edge-feature level so that the
/// encoder can apply one edge matrix per level with one matrix product per level.
struct GraphTensors {
  torch::Tensor x;                        ///< [N, 5] node features
  torch::Tensor edge_src;                 ///< [2E] long, sorted by level
  torch::Tensor edge_dst;                 ///< [2E] long, same order
  torch::Tensor level_values;             ///< [U, 1] edge feature of each level
  std::vector<std::int64_t> level_begin;  ///< U + 1 offsets of each level's edges
  PathTour b_tour;                        ///< the b-paths (v to an exit)
  PathTour t_tour;                        ///< the t-paths (an entry to v)
  int num_nodes = 0;
  double unit = 1;         ///< GraphFeatures::unit (the scaled mode's time unit)
  bool quantized = false;  ///< true when edge features were binned into `max_levels` levels
};

/// Builds the tensors. Distinct edge-feature values become levels; graphs with more than
/// `max_levels` distinct values have their edge features replaced by the mean of their
/// quantile bin (max_levels bins), which keeps the encoder's cost linear in the graph size.
GraphTensors make_graph_tensors(const GraphFeatures& f, int max_levels);

/// The tensors of a problem's features as policy `c` reads them (its feature mode and
/// max_levels; the problem's device count for the global features).
GraphTensors problem_tensors(const Problem& p, const PolicyConfig& c);

}  // namespace doppler::nn
