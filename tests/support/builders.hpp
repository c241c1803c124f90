#pragma once
// Tiny graph builders for hand-computed tests.
#include <initializer_list>
#include <utility>
#include <vector>

#include "doppler/graph/graph_builder.hpp"

namespace doppler::test {

/// A node spec for ref_graph(): compute cost C and transfer cost M (reference units).
struct RefNode {
  double c = 0, m = 0;
};

/// A graph with reference costs: nodes 0..N-1 with the given (C, M) and the given edges.
inline Graph ref_graph(const std::vector<RefNode>& nodes,
                       const std::vector<std::pair<int, int>>& edges) {
  GraphBuilder b;
  for (const RefNode& r : nodes) {
    Node n;
    n.compute_cost = r.c;
    n.transfer_cost = r.m;
    b.add_node(n);
  }
  for (const auto& [u, v] : edges) b.add_edge(u, v);
  return b.build();
}

/// An edge with its own reference transfer cost (the classic task-graph model).
struct CostEdge {
  int src = 0, dst = 0;
  double cost = 0;
};

/// A graph with compute costs `c` (node transfer_cost 0) and per-edge transfer costs.
inline Graph edge_cost_graph(const std::vector<double>& c, const std::vector<CostEdge>& edges) {
  GraphBuilder b;
  for (const double x : c) {
    Node n;
    n.compute_cost = x;
    n.transfer_cost = 0;
    b.add_node(n);
  }
  for (const CostEdge& e : edges) b.add_edge(e.src, e.dst, std::nullopt, e.cost);
  return b.build();
}

/// A node spec for phys_graph(): FLOPs and output bytes.
struct PhysNode {
  double flops = 0, bytes = 0;
};

/// A graph with physical costs (flops, out_bytes).
inline Graph phys_graph(const std::vector<PhysNode>& nodes,
                        const std::vector<std::pair<int, int>>& edges) {
  GraphBuilder b;
  for (const PhysNode& r : nodes) {
    Node n;
    n.flops = r.flops;
    n.out_bytes = r.bytes;
    b.add_node(n);
  }
  for (const auto& [u, v] : edges) b.add_edge(u, v);
  return b.build();
}

}  // namespace doppler::test
