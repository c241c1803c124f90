#pragma once
// Acyclic coarsening of a graph for the multilevel placer: heavy-edge matching between ops one
// topological level apart, a cluster-weight cap for balance, and a strongly-connected-component
// repair that guarantees the coarse graph is acyclic.
#include <cstdint>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler {

/// Costs of the graph being coarsened, in one unit (reference units or seconds).
struct CoarsenCosts {
  std::vector<double> compute;   ///< per node: compute time (>= 0)
  std::vector<double> transfer;  ///< per edge (Graph edge ids): cross-device transfer time (>= 0)
};

/// One coarsening step: `cluster_of[v]` is the coarse node of fine node v (0..clusters-1,
/// numbered by the first member's id), and `graph` the quotient graph with reference costs:
/// compute_cost = the members' summed compute, one edge per pair of clusters joined by a fine
/// edge with transfer_cost = the largest of those edges' transfer times. The quotient is acyclic.
struct Coarsening {
  Graph graph;                     ///< coarse graph (reference costs, per-edge transfer costs)
  std::vector<NodeId> cluster_of;  ///< size: fine node count
  CoarsenCosts costs;              ///< the coarse graph's costs (what graph holds, as vectors)
};

/// Settings of one coarsening step.
struct CoarsenSettings {
  double max_cluster = 0;  ///< largest summed compute of a coarse node (0: no cap)
  std::uint64_t seed = 0;  ///< breaks ties between edges of equal weight
  /// Per node, a part (e.g. the device of a placement): only nodes of the same part merge, so
  /// that the part is well defined on the coarse graph. Empty: no restriction.
  std::vector<int> part;
};

/// Merges pairs of nodes joined by an edge whose ends are one topological level apart (longest
/// path from a source, in edges), heaviest transfer first, never both ends already matched and
/// never above `max_cluster`, never across parts (`settings.part`); pairs that would close a cycle
/// in the quotient are split again. O((N + E) log E). Deterministic in `settings.seed`.
Coarsening coarsen_once(const Graph& g, const CoarsenCosts& costs, const CoarsenSettings& settings);

/// The quotient graph of `g` under `cluster_of` (clusters 0..k-1, every one non-empty) with the
/// costs described at Coarsening. Throws InputError when the quotient has a cycle.
Coarsening quotient_graph(const Graph& g, const CoarsenCosts& costs,
                          std::vector<NodeId> cluster_of);

/// Costs of `g` read from the nominal (device-averaged) compute and transfer times of its
/// cost model.
CoarsenCosts nominal_costs(const Graph& g, const class CostModel& cost);

}  // namespace doppler
