#pragma once
// Static analyses of a graph under a cost model: b-level, t-level, critical path, total work and
// the makespan lower bound. Computed once, in the constructor, then read many times.
#include <vector>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// Levels and bounds of one (graph, cost model) pair, using the model's nominal costs:
///
/// - b-level(v) = cost(v) + max over children c of (edge cost(v,c) + b-level(c)); for a sink,
///   b-level = cost(v). It is the length of the longest path from v (included) to an exit.
/// - t-level(v) = max over parents p of (t-level(p) + cost(p) + edge cost(p,v)); for a source,
///   0. It is the earliest time v can start with unlimited devices.
/// - critical path: the path of maximum length (including transfer costs), i.e. max over v of
///   t-level(v) + b-level(v); as a node list from an entry to an exit (ties: lowest id).
/// - lower bound for P devices: max(longest path with zero transfer costs and each op at its
///   fastest device, total of each op's fastest compute time / total compute slots of P
///   devices). Every schedule on P devices (any dispatch rule) is at least this long.
class GraphAnalysis {
public:
  /// Runs every analysis (O(N + E)). Keeps pointers to `g` and `cost` (lower_bound() reads
  /// them), so both must outlive the analysis: temporaries are refused at compile time.
  GraphAnalysis(const Graph& g, const CostModel& cost);
  GraphAnalysis(const Graph& g, const CostModel&& cost) = delete;
  GraphAnalysis(const Graph&& g, const CostModel& cost) = delete;
  GraphAnalysis(const Graph&& g, const CostModel&& cost) = delete;

  /// b-level of every node (cost-model units).
  const std::vector<double>& b_level() const { return b_level_; }
  /// t-level of every node.
  const std::vector<double>& t_level() const { return t_level_; }
  /// Nodes of the critical path, entry first.
  const std::vector<NodeId>& critical_path() const { return critical_path_; }
  /// Length of the critical path (with transfer costs).
  double critical_path_length() const { return cp_length_; }
  /// Longest path with zero transfer costs (nominal compute times).
  double critical_path_no_transfer() const { return cp_zero_; }
  /// Sum over ops of the nominal compute time.
  double total_work() const { return total_work_; }
  /// Makespan lower bound for `p` devices (see class comment; O(1) for a uniform model,
  /// O(N p + E) otherwise). Throws InputError for a device count the model cannot model.
  double lower_bound(int p) const;

private:
  const CostModel* cost_;
  std::vector<double> b_level_, t_level_;
  std::vector<NodeId> critical_path_;
  double cp_length_ = 0, cp_zero_ = 0, total_work_ = 0;
  const Graph* graph_;
};

/// The level of every node: the longest path to it from a source, in edges (sources 0). O(N + E).
std::vector<int> hop_levels(const Graph& g);

}  // namespace doppler
