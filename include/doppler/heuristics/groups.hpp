#pragma once
// Tensor-op groups of a graph: the blocks that belong to one tensor operation.
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// The groups of `g` as lists of op ids (ascending), ordered by the topological rank of their
/// first op. Uses Node::group when any node has one (ops without a group form singletons).
/// Otherwise, when `infer` is true, infers groups the way einsummable emits blocks: maximal runs
/// of consecutive ids with identical kind, compute_cost and transfer_cost and no edge between
/// them (never on graphs with per-edge transfer costs); else every op is its own group.
std::vector<std::vector<NodeId>> tensor_groups(const Graph& g, bool infer);

}  // namespace doppler
