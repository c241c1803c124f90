#pragma once
// Tensor-op groups of a graph (the blocks that belong to one tensor operation), and its repeat
// classes (one role in every repeated layer) with the helpers of a search that ties them.
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// The groups of `g` as lists of op ids (ascending), ordered by the topological rank of their
/// first op. Uses Node::group when any node has one (ops without a group form singletons).
/// Otherwise, when `infer` is true, infers groups the way einsummable emits blocks: maximal runs
/// of consecutive ids with identical kind, compute_cost and transfer_cost and no edge between
/// them (never on graphs with per-edge transfer costs); else every op is its own group.
std::vector<std::vector<NodeId>> tensor_groups(const Graph& g, bool infer);

/// Repeated ops of `g`: classes of ops that play one role in repeated layers, found from names.
/// A name's layer index is its first run of digits with a separator ('.', '/' or '_') on both
/// sides, before any '[' (`layers.3.wq[0,1]`, `/3/attn/MatMul_1`); the ops whose names agree
/// once it is replaced by '#', with the same kind, FLOPs, output bytes and compute cost, form a
/// class (the block index after '[' is kept, so a class holds one block of one role per layer).
/// Only classes of two ops or more, each in ascending ids, in the order of their first op.
/// O(N log N) in the ops.
std::vector<std::vector<NodeId>> repeat_classes(const Graph& g);

/// The layer index of a name as repeat_classes reads it (`layers.3.wq[0,1]`: 3); -1 when the
/// name has none (or one of more than 9 digits).
int repeat_layer(const std::string& name);

/// The units a tied search moves: every class of `classes`, then every op of [0, num_nodes) in
/// none of them alone (ascending).
std::vector<std::vector<NodeId>> repeat_units(int num_nodes,
                                              const std::vector<std::vector<NodeId>>& classes);

/// `device_of` with every class's ops on one device: the one most of them have (the lowest on
/// ties). Devices in [0, devices).
std::vector<DeviceId> tie_repeats(std::vector<DeviceId> device_of,
                                  const std::vector<std::vector<NodeId>>& classes, int devices);

}  // namespace doppler
