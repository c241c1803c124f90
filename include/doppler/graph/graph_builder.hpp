#pragma once
// Validating construction of a Graph.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

/// A structural or numeric problem found while building a graph. `node()` / `edge()` give the
/// offending node id or the index of the offending add_edge call (-1 when not applicable), so
/// that readers can translate them to file lines.
class GraphError : public InputError {
public:
  GraphError(const std::string& message, std::int64_t node, std::int64_t edge)
      : InputError(message), node_(node), edge_(edge) {}
  /// Offending node id, or -1.
  std::int64_t node() const { return node_; }
  /// Index (0-based, in call order) of the offending add_edge call, or -1.
  std::int64_t edge() const { return edge_; }

private:
  std::int64_t node_;
  std::int64_t edge_;
};

/// Collects nodes and edges, then validates them and builds an immutable Graph.
/// Validation (build() throws GraphError): every number finite and >= 0, edge ends in range,
/// no self-loops, no cycle (the message names the ops on one cycle). Duplicate edges collapse
/// into one (keeping the largest byte count and transfer cost); duplicates_collapsed() counts
/// them.
class GraphBuilder {
public:
  GraphBuilder() = default;

  /// Adds a node and returns its id (ids are consecutive from 0).
  NodeId add_node(Node node);
  /// Adds edge src -> dst; `bytes` unset means "the producer's out_bytes", `transfer_cost`
  /// unset means "the producer's transfer_cost" (reference units).
  void add_edge(std::int64_t src, std::int64_t dst, std::optional<double> bytes = std::nullopt,
                std::optional<double> transfer_cost = std::nullopt);
  /// Sets the graph's name, origin and parameters.
  void set_meta(GraphMeta meta) { meta_ = std::move(meta); }
  /// Number of nodes added so far.
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  /// Mutable access to an added node (e.g. to fill costs in a second pass).
  Node& node(NodeId v) { return nodes_[static_cast<std::size_t>(v)]; }

  /// Validates and builds. The builder is left empty.
  Graph build();
  /// Number of duplicate edges collapsed by the last build().
  int duplicates_collapsed() const { return duplicates_; }

private:
  struct RawEdge {
    std::int64_t src, dst;
    std::optional<double> bytes;
    std::optional<double> transfer_cost;
    std::int64_t index;
  };
  std::vector<Node> nodes_;
  std::vector<RawEdge> raw_edges_;
  GraphMeta meta_;
  int duplicates_ = 0;
};

}  // namespace doppler
