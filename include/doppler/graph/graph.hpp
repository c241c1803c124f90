#pragma once
// The dataflow graph: an immutable DAG of block operations with CSR adjacency and a cached
// topological order. Build one with GraphBuilder.
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "doppler/graph/constant_tensor.hpp"
#include "doppler/graph/exec_desc.hpp"
#include "doppler/graph/op_kind.hpp"
#include "doppler/graph/types.hpp"

namespace doppler {

/// One block operation.
struct Node {
  std::string name;                     ///< human-readable label (may be empty)
  OpKind kind = OpKind::other;          ///< what it does
  double flops = 0;                     ///< FLOPs of this block (>= 0)
  double out_bytes = 0;                 ///< bytes of this block's output (>= 0)
  std::int32_t group = -1;              ///< id of the tensor op this is a block of; -1 = none
  std::optional<double> compute_cost;   ///< reference-model compute time (abstract units, >= 0)
  std::optional<double> transfer_cost;  ///< reference-model transfer time of its output (>= 0)
  std::optional<ExecDesc> exec;         ///< how to execute it for real (workload generators)
};

/// A data dependency: `src` produces something `dst` reads.
struct Edge {
  NodeId src = 0;               ///< producer
  NodeId dst = 0;               ///< consumer
  std::optional<double> bytes;  ///< bytes `dst` reads from `src`; nullopt = src's out_bytes
  /// Reference-model time (abstract units, >= 0) for this edge's data to reach another device;
  /// nullopt = the producer's transfer_cost (the classic task-graph model sets one per edge).
  std::optional<double> transfer_cost;
};

/// Where the graph came from and what it models (free-form key/value pairs plus a name).
struct GraphMeta {
  std::string name;                           ///< e.g. "llama-layer" or the file's stem
  std::string origin;                         ///< "reference-text", "json", "generated", ...
  std::map<std::string, std::string> params;  ///< workload parameters (strings)
};

/// An immutable, validated DAG of block operations. Node ids are 0..N-1; edges are sorted by
/// (src, dst), unique, and never self-loops; the graph is acyclic.
class Graph {
public:
  Graph() = default;

  /// Number of nodes N.
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  /// Number of (distinct) edges E.
  int num_edges() const { return static_cast<int>(edges_.size()); }

  /// Node `v` (0 <= v < N).
  const Node& node(NodeId v) const { return nodes_[static_cast<std::size_t>(v)]; }
  /// All nodes, by id.
  const std::vector<Node>& nodes() const { return nodes_; }
  /// Edge `e` (0 <= e < E).
  const Edge& edge(EdgeId e) const { return edges_[static_cast<std::size_t>(e)]; }
  /// All edges, sorted by (src, dst).
  const std::vector<Edge>& edges() const { return edges_; }
  /// Bytes carried by edge `e`: its own bytes, or the producer's out_bytes.
  double edge_bytes(EdgeId e) const;
  /// Reference transfer cost of edge `e`: its own transfer_cost, or the producer's (0 when
  /// neither is set).
  double edge_transfer_cost(EdgeId e) const;
  /// Largest edge_transfer_cost() over the out-edges of `v` (0 for a sink).
  double max_out_transfer_cost(NodeId v) const;
  /// True when some edge carries its own transfer_cost.
  bool has_edge_transfer_costs() const { return has_edge_transfer_costs_; }

  /// Successors of `v`, ascending. Out-edge ids are out_edge_begin(v) .. out_edge_begin(v+1)-1
  /// in the same order (edges are sorted by source).
  std::span<const NodeId> successors(NodeId v) const;
  /// Predecessors of `v`, ascending.
  std::span<const NodeId> predecessors(NodeId v) const;
  /// Edge ids into `v`, in the same order as predecessors(v).
  std::span<const EdgeId> in_edges(NodeId v) const;
  /// First out-edge id of `v` (out-edges of v are contiguous).
  EdgeId out_edge_begin(NodeId v) const { return succ_offset_[static_cast<std::size_t>(v)]; }
  /// Id of edge (u, v), or -1 when there is none (binary search).
  EdgeId find_edge(NodeId u, NodeId v) const;

  /// Topological order (Kahn's algorithm, smallest ready id first: canonical).
  const std::vector<NodeId>& topo_order() const { return topo_; }
  /// Position of each node in topo_order().
  const std::vector<int>& topo_rank() const { return topo_rank_; }
  /// Nodes without predecessors, ascending.
  const std::vector<NodeId>& sources() const { return sources_; }
  /// Nodes without successors, ascending.
  const std::vector<NodeId>& sinks() const { return sinks_; }

  /// True when every node has a compute_cost and every edge a reference transfer cost (its own
  /// or its producer's transfer_cost).
  bool has_reference_costs() const { return has_reference_costs_; }
  /// Graph name, origin and parameters.
  const GraphMeta& meta() const { return meta_; }
  /// Replaces the metadata (it is not part of the graph's structure).
  void set_meta(GraphMeta meta) { meta_ = std::move(meta); }
  /// Display name of node v: its name, or "#v" when it has none.
  std::string label(NodeId v) const;

  /// Constant tensors read by `load` kernels (ExecDesc attr `tensor` indexes them); empty by
  /// default. Shared between copies of the graph.
  const std::vector<ConstantTensor>& constants() const;
  /// Replaces the constant tensors. Throws InputError naming the tensor when an extent is
  /// negative or values.size() differs from the product of its shape.
  void set_constants(std::vector<ConstantTensor> constants);

private:
  friend class GraphBuilder;
  std::vector<Node> nodes_;
  std::vector<Edge> edges_;
  std::vector<EdgeId> succ_offset_;  // N+1; successors are edges_[off[v]..off[v+1]).dst
  std::vector<NodeId> succ_;         // E
  std::vector<EdgeId> pred_offset_;  // N+1
  std::vector<NodeId> pred_;         // E
  std::vector<EdgeId> pred_edge_;    // E
  std::vector<NodeId> topo_;
  std::vector<int> topo_rank_;
  std::vector<NodeId> sources_, sinks_;
  bool has_reference_costs_ = false;
  bool has_edge_transfer_costs_ = false;
  GraphMeta meta_;
  std::shared_ptr<const std::vector<ConstantTensor>> constants_;  // null = none
};

}  // namespace doppler
