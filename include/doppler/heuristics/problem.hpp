#pragma once
// A placement problem: one graph on one platform, with its cost model, analyses and simulator
// built once and shared by every placer that runs on it.
#include <cstdint>
#include <memory>

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {

/// A graph to place on a platform. Holds the uncontended cost model, the static analyses
/// (b-level, t-level, bounds) and a simulator. Not copyable; the graph must outlive it.
class Problem {
public:
  /// Builds the cost model, analyses and simulator (InputError when the platform cannot model
  /// the graph).
  Problem(const Graph& g, Platform platform);
  /// A temporary graph would dangle: keep the graph in a variable that outlives the problem.
  Problem(Graph&& g, Platform platform) = delete;
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  /// The graph.
  const Graph& graph() const { return *graph_; }
  /// The platform (device count, reference or hardware model).
  const Platform& platform() const { return platform_; }
  /// Device count P.
  int devices() const { return platform_.devices(); }
  /// Uncontended compute/transfer estimates.
  const CostModel& cost() const { return cost_; }
  /// b-level, t-level, critical path, bounds under cost().
  const GraphAnalysis& analysis() const { return *analysis_; }
  /// The simulator (the judge of every placement).
  const Simulator& simulator() const { return *sim_; }
  /// Makespan lower bound for devices() devices: GraphAnalysis::lower_bound (critical path
  /// without transfers, work over compute slots).
  double lower_bound() const { return lower_bound_; }
  /// A tighter bound that also charges transfers: the larger of lower_bound() and
  /// communication_lower_bound() (graph/communication_bound.hpp).
  double transfer_lower_bound() const { return transfer_lower_bound_; }

private:
  const Graph* graph_;
  Platform platform_;
  CostModel cost_;
  std::unique_ptr<GraphAnalysis> analysis_;
  std::unique_ptr<Simulator> sim_;
  double lower_bound_ = 0;
  double transfer_lower_bound_ = 0;
};

}  // namespace doppler
