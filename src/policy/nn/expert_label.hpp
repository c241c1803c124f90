#pragma once
// Internal: the expert's actions along the policy's own rollout (DAgger-style distillation of a
// search's best assignment, docs/pretraining.md "Distillation"). SEL's label among the current
// candidates is the op that starts first in the label's simulated schedule; PLC's label is the
// label's device of the chosen op, mapped through the device relabelling that best matches the
// label's device groups to the devices the rollout has used so far (devices interchangeable), or
// the label's device itself (heterogeneous platforms).
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler::nn {

/// A best-known assignment prepared for labelling rollouts.
struct ExpertLabel {
  std::vector<DeviceId> device_of;  ///< [N] the label's device of every op
  std::vector<double> start;        ///< [N] start times in the label's simulated schedule (FIFO)
  bool relabel = true;              ///< devices interchangeable: match label groups to devices
};

/// Simulates `device_of` on `problem` (one simulator call) for its start times; `relabel` is
/// devices_interchangeable(problem).
ExpertLabel make_expert_label(const Problem& problem, std::vector<DeviceId> device_of);

/// True when relabelling the devices cannot change any makespan: the reference model, or a
/// profile whose first P devices have equal specifications and whose routes between distinct
/// devices all have the same link count and uncontended transfer times.
bool devices_interchangeable(const Problem& problem);

/// The candidates (ascending ids) that start first in the label's schedule (ties within
/// kTieTolerance relative).
std::vector<NodeId> expert_selections(const ExpertLabel& label,
                                      const std::vector<NodeId>& candidates);

/// The matching of label devices to policy devices along one rollout: counts how many ops of
/// each label device the rollout put on each of its devices, and maps label devices to policy
/// devices by a maximum-weight one-to-one matching of those counts.
class Relabelling {
public:
  /// P devices on both sides.
  explicit Relabelling(int devices);
  /// Records that the rollout put an op whose label device is `label` on `device`.
  void record(DeviceId label, DeviceId device);
  /// The policy devices PLC's label may be for an op with label device `label` (ascending,
  /// non-empty): the matched device when the label device has ops already; otherwise every device
  /// the rollout has not used yet and the matching does not give to another label device (all of
  /// them are equivalent), or the matched device when none is left.
  std::vector<DeviceId> targets(DeviceId label) const;

private:
  int p_;
  std::vector<int> count_;  // [label * P + device]
  std::vector<int> row_total_, col_total_;
};

}  // namespace doppler::nn
