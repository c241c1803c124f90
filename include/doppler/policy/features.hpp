#pragma once
// Inputs of the SEL and PLC policies, computed without torch: static node features, edge
// features, the longest-path node sets used for the path sums, and the per-step device features.
#include <vector>

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/list_schedule.hpp"

namespace doppler {

/// Number of static node features.
inline constexpr int kNodeFeatures = 5;
/// Number of device features.
inline constexpr int kDeviceFeatures = 5;

/// Per-graph policy inputs, z-scored per graph (each column: (x - mean) / (std + 1e-6)).
struct GraphFeatures {
  int num_nodes = 0;
  /// N x 5 row-major: compute cost, b-level, t-level, total incoming transfer cost, total
  /// outgoing transfer cost (nominal costs of the cost model), z-scored per column.
  std::vector<float> node;
  /// Directed message-passing edges in both directions: (src, dst) pairs, 2E of them; edge k
  /// and k + E are the two directions of graph edge k.
  std::vector<int> edge_src, edge_dst;
  /// Edge feature per message-passing edge: the transfer cost of the graph edge, z-scored.
  std::vector<float> edge;
  /// b_path[v]: the nodes of v's longest path to an exit (v first), following at each step the
  /// child that realises the b-level (ties: lowest id).
  std::vector<std::vector<int>> b_path;
  /// t_path[v]: the nodes of the longest path from an entry to v (v last), following at each
  /// step the parent that realises the t-level (ties: lowest id).
  std::vector<std::vector<int>> t_path;
};

/// Computes the features of `g` under `cost` with its analysis `an`.
GraphFeatures graph_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an);

/// z-scores each column of a rows x cols row-major matrix in place ((x - mean) / (std + 1e-6),
/// population std); a single row becomes zeros.
void zscore_columns(std::vector<float>& m, int rows, int cols);

/// The 5 device features of placing v (all of whose predecessors are placed in `s`, except
/// deferred inputs, which are ignored), for every device d, row-major P x 5, raw (not
/// normalised): total compute already on d; compute of v's
/// parents on d; earliest start and latest finish of v's parents on d (0 when none); earliest
/// start time of v on d = max(latest arrival of v's inputs on d, d's current finish time).
std::vector<float> device_features(const ListSchedule& s, NodeId v);

}  // namespace doppler
