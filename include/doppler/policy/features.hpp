#pragma once
// Inputs of the SEL and PLC policies, computed without torch: static node features, edge
// features, the longest-path node sets used for the path sums, and the per-step device features.
#include <vector>

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/policy/policy_config.hpp"

namespace doppler {

/// Number of raw static node features (the zscore mode's columns).
inline constexpr int kNodeFeatures = 5;
/// Number of raw device features (the zscore mode's columns).
inline constexpr int kDeviceFeatures = 5;
/// Clamp of the logarithmic global features (|x| <= this).
inline constexpr double kGlobalClamp = 5.0;

/// Per-graph policy inputs (FeatureMode says how they are normalised).
struct GraphFeatures {
  int num_nodes = 0;
  /// Columns of `node` (node_feature_count(mode)).
  int cols = kNodeFeatures;
  FeatureMode mode = FeatureMode::zscore;
  /// The problem's time unit of the scaled mode (feature_unit()); 1 in zscore mode.
  double unit = 1;
  /// N x cols row-major. zscore: compute cost, b-level, t-level, total incoming transfer cost,
  /// total outgoing transfer cost (nominal costs of the cost model), z-scored per column.
  /// scaled: log1p(compute / u), log1p(in / u), log1p(out / u), b-level / CP, t-level / CP, and
  /// the global features of global_features() on every row (u = feature_unit(), CP = critical
  /// path length).
  std::vector<float> node;
  /// Directed message-passing edges in both directions: (src, dst) pairs, 2E of them; edge k
  /// and k + E are the two directions of graph edge k.
  std::vector<int> edge_src, edge_dst;
  /// Edge feature per message-passing edge: the transfer cost of the graph edge, z-scored
  /// (zscore) or log1p(transfer / u) (scaled).
  std::vector<float> edge;
  /// b_next[v]: the node after v on v's longest path to an exit, the child that realises v's
  /// b-level (ties: lowest id); -1 at an exit. v's b-path is v, b_next[v], b_next[b_next[v]]...
  std::vector<int> b_next;
  /// t_prev[v]: the node before v on the longest path from an entry to v, the parent that
  /// realises v's t-level (ties: lowest id); -1 at an entry. Both are O(N), the paths O(N x depth).
  std::vector<int> t_prev;
};

/// v's b-path listed from b_next (v first, an exit last).
std::vector<int> path_to_exit(const GraphFeatures& f, int v);
/// v's t-path listed from t_prev (an entry first, v last).
std::vector<int> path_from_entry(const GraphFeatures& f, int v);

/// Computes the features of `g` under `cost` with its analysis `an` for `devices` devices
/// (used by the scaled mode's global features only).
GraphFeatures graph_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                             int devices = 1, FeatureMode mode = FeatureMode::zscore);

/// The scaled mode's time unit: the mean nominal compute cost per op (falls back to the mean
/// transfer cost per edge, then 1, when that is 0). Same unit as the cost model.
double feature_unit(const Graph& g, const CostModel& cost);

/// The 4 global features of a problem: log(mean transfer per edge / mean compute per op),
/// log2(P) / 4, log(critical path / (total work / P)), log10(N) / 4; logarithms clamped to
/// [-kGlobalClamp, kGlobalClamp]. Unchanged when every cost is multiplied by a constant.
std::vector<float> global_features(const Graph& g, const CostModel& cost, const GraphAnalysis& an,
                                   int devices);

/// Normalises raw device features (P x 5, from device_features()) for the policy, in place:
/// zscore: each column z-scored over the devices (P x 5); scaled: the columns of y / unit
/// z-scored over the devices, followed by log1p((x - min over devices) / unit) of each raw
/// column (P x 10).
void normalise_device_features(std::vector<float>& y, int p, FeatureMode mode, double unit);

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
