#pragma once
// The incremental list-scheduling estimate shared by the list-scheduling placers and the
// learned policies: ops are placed one at a time, each after all its predecessors, and start at
// their earliest start time on their device (no insertion into idle gaps).
#include <vector>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler {

/// A partial placement with estimated start/finish times under an uncontended cost model.
///
/// earliest_start(v, d) = max(arrival(v, d), free_at(d)), where arrival(v, d) is the latest
/// time an input of v reaches d (a producer's finish, plus the transfer when it is on another
/// device) and free_at(d) is when d's earliest slot frees. place(v, d) commits v there.
///
/// With `defer_inputs`, input ops (kind input) are never candidates: an input not yet placed
/// counts as already on whatever device its consumer is evaluated on (it arrives at time 0), and
/// placing its first consumer puts it on the same device. Inputs without consumers are ordinary
/// candidates.
class ListSchedule {
public:
  /// An empty schedule of `g` on `devices` devices under `cost` (which must outlive it).
  ListSchedule(const Graph& g, const CostModel& cost, int devices, bool defer_inputs = false);

  /// Forgets every placement.
  void reset();
  /// Ops not placed whose predecessors are all placed (unordered; see is_candidate()).
  const std::vector<NodeId>& candidates() const { return candidates_; }
  /// True when v is a candidate.
  bool is_candidate(NodeId v) const { return cand_pos_[static_cast<std::size_t>(v)] >= 0; }
  /// True when every op is placed.
  bool done() const { return placed_ == graph_->num_nodes(); }
  /// True when input ops are deferred to their first consumer.
  bool defers_inputs() const { return defer_inputs_; }
  /// Number of placed ops.
  int num_placed() const { return placed_; }

  /// Latest arrival of v's inputs on device d (0 for a source). Requires all preds placed.
  double arrival(NodeId v, DeviceId d) const;
  /// When device d's earliest slot frees.
  double free_at(DeviceId d) const;
  /// max(arrival(v, d), free_at(d)).
  double earliest_start(NodeId v, DeviceId d) const { return std::max(arrival(v, d), free_at(d)); }
  /// earliest_start(v, d) + compute(v, d).
  double earliest_finish(NodeId v, DeviceId d) const;

  /// Places candidate v on d at earliest_start(v, d) (after its deferred inputs, placed on d
  /// too); updates the candidates.
  void place(NodeId v, DeviceId d);

  /// Device of v (-1 when not placed).
  DeviceId device(NodeId v) const { return device_[static_cast<std::size_t>(v)]; }
  /// Estimated start / finish of a placed op.
  double start(NodeId v) const { return start_[static_cast<std::size_t>(v)]; }
  double finish(NodeId v) const { return finish_[static_cast<std::size_t>(v)]; }
  /// Total compute placed on device d so far.
  double load(DeviceId d) const { return load_[static_cast<std::size_t>(d)]; }
  /// Devices of all ops (-1 for unplaced).
  const std::vector<DeviceId>& device_of() const { return device_; }
  /// Placement order so far.
  const std::vector<NodeId>& order() const { return order_; }
  /// Latest estimated finish of the placed ops.
  double makespan() const { return makespan_; }
  /// Number of devices.
  int devices() const { return devices_; }
  /// The graph and the cost model.
  const Graph& graph() const { return *graph_; }
  const CostModel& cost() const { return *cost_; }

private:
  void commit(NodeId v, DeviceId d, double start);
  bool deferred(NodeId v) const {
    return defer_inputs_ && graph_->node(v).kind == OpKind::input && !graph_->successors(v).empty();
  }
  const Graph* graph_;
  const CostModel* cost_;
  int devices_;
  bool defer_inputs_;
  int placed_ = 0;
  double makespan_ = 0;
  std::vector<DeviceId> device_;
  std::vector<double> start_, finish_, load_;
  std::vector<std::vector<double>> slot_free_;  // per device, per slot
  std::vector<int> pending_;
  std::vector<NodeId> candidates_;
  std::vector<int> cand_pos_;
  std::vector<NodeId> order_;
};

}  // namespace doppler
