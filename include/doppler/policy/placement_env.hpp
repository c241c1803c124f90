#pragma once
// A step-by-step placement environment for reinforcement learning (the Python binding's
// doppler.env.PlacementEnv): one episode places every op of a problem, an op at a time, each after
// all its predecessors, as the SEL and PLC policies do; the terminal reward compares the simulated
// makespan with the critical-path placer's.
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/types.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {

/// Who chooses the next op.
enum class EnvMode {
  sel_plc,  ///< the agent selects a candidate op, then places it: two steps per op
  plc,      ///< the op comes in critical-path order (highest b-level first, ties lowest id)
};

/// "sel_plc" or "plc"; nullopt otherwise.
std::optional<EnvMode> parse_env_mode(const std::string& name);

/// One placement episode at a time on a problem (which must outlive the environment).
/// Invariants: every placed op's predecessors are placed (the ListSchedule's candidates); the
/// episode is done when every op is placed, and only then is the makespan simulated (FIFO rule).
class PlacementEnv {
public:
  /// With `defer_inputs`, input ops with consumers are never chosen: each follows its first
  /// consumer's device (as the Doppler policy places them), so an episode has fewer steps.
  /// Runs the critical-path placer once for the reference makespan.
  PlacementEnv(const Problem& problem, EnvMode mode, bool defer_inputs = false);

  /// Starts a new episode (nothing placed).
  void reset();
  /// The mode.
  EnvMode mode() const { return mode_; }
  /// True while the agent must select an op (sel_plc mode, between placements).
  bool selecting() const { return !done() && op_ < 0; }
  /// The op awaiting its device, or -1 (selecting or done).
  NodeId op() const { return op_; }
  /// True when every op is placed.
  bool done() const { return sched_.done(); }
  /// Ops that may be selected now (all their predecessors placed), unordered.
  const std::vector<NodeId>& candidates() const { return sched_.candidates(); }
  /// True when `v` may be selected now.
  bool is_candidate(NodeId v) const;

  /// Selects candidate `v` to be placed next (sel_plc mode). InputError when not selecting or
  /// when `v` is not a candidate.
  void select(NodeId v);
  /// Places op() on device `d`; the last placement ends the episode and simulates it. InputError
  /// when no op awaits a device or `d` is not in 0..P-1.
  void place(DeviceId d);

  /// Raw device features of placing op() (P x 5 row-major, device_features() of
  /// policy/features.hpp, problem units); empty when no op awaits a device.
  std::vector<float> device_features() const;
  /// Device of every op (-1 while unplaced).
  const std::vector<DeviceId>& device_of() const { return sched_.device_of(); }
  /// Ops in the order they were placed (deferred inputs right before their consumer).
  const std::vector<NodeId>& order() const { return sched_.order(); }
  /// Simulated makespan of the finished episode (problem units); 0 before the end.
  double makespan() const { return makespan_; }
  /// Makespan of the critical-path placer on the same problem (the reward's reference).
  double reference_makespan() const { return reference_; }
  /// The episode's reward so far: -makespan() / reference_makespan() once done, else 0.
  double reward() const;
  /// Actions taken in this episode (selections and placements).
  int steps() const { return steps_; }
  /// The problem.
  const Problem& problem() const { return *problem_; }

private:
  void push_new_candidates(NodeId placed);
  void next_op();
  bool comes_out_after(NodeId x, NodeId y) const;
  const Problem* problem_;
  EnvMode mode_;
  ListSchedule sched_;
  std::vector<NodeId> heap_;  // plc mode: candidates, highest b-level first
  std::vector<char> queued_;
  SimWorkspace ws_;
  NodeId op_ = -1;
  int steps_ = 0;
  double makespan_ = 0;
  double reference_ = 0;
};

}  // namespace doppler
