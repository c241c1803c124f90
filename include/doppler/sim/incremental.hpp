#pragma once
// Incremental move evaluation for local search: resume a candidate's simulation from a saved
// state of its base's simulation, taken before the first instant the move can change.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>

#include "doppler/sim/simulator.hpp"

namespace doppler {

/// Exact makespans of assignments that differ from a *base* assignment in a few ops (fifo rule,
/// complete assignments). The base's simulation keeps checkpoints, every N / checkpoints
/// finished ops. A candidate's simulation resumes from the latest checkpoint taken before the
/// first instant its change can affect: the earliest finish, in the base's schedule, of a
/// predecessor of a changed op (time 0 when a changed op has none). Until then the two runs are
/// identical: a changed op cannot be ready, nor can data reach it. Every result equals
/// Simulator::makespan() / makespan_below() of the candidate bit for bit (tested).
///
/// Once every moved op has finished, the candidate's run compares its state with the base's
/// checkpoints of the same instants (events, queues, inputs pending, links, free slots, copy and
/// contention state); on the first equal one it stops: from there its run is the base's, so its
/// makespan is the base's and its finish-time sum the base's remainder plus its own prefix. A
/// move whose delay the schedule's slack absorbs costs only the events until then.
///
/// Cost: a resumed run copies O(N) state and simulates only the events after the checkpoint
/// (until it meets the base); memory is O(checkpoints x N). Each evaluate() counts as one call of
/// the simulator; reset() counts one when asked to.
class IncrementalSim {
public:
  /// Evaluates against `sim` (which must outlive this object), keeping up to `checkpoints`
  /// (>= 1) saved states of the base's run.
  explicit IncrementalSim(const Simulator& sim, int checkpoints = 16);
  ~IncrementalSim();
  IncrementalSim(const IncrementalSim&) = delete;
  IncrementalSim& operator=(const IncrementalSim&) = delete;

  /// Simulates `base` from time 0 and makes it the base; returns its makespan. Throws
  /// InputError for a wrong size or a device outside 0..P-1 (-1 included). `count`: whether
  /// the run counts as a simulator call.
  double reset(std::span<const DeviceId> base, bool count = true);

  /// The makespan of `candidate`, equal to the base except on the ops in `changed` (repeats and
  /// unchanged ops allowed), when it is <= cutoff; otherwise a value above the cutoff, possibly
  /// after an early stop (see Simulator::makespan_below). Requires a base (reset()).
  double evaluate(std::span<const DeviceId> candidate, std::span<const NodeId> changed,
                  double cutoff = std::numeric_limits<double>::infinity());

  /// Makes the candidate of the last evaluate() the base, with its checkpoints. Requires that
  /// evaluation to have returned a value <= its cutoff (a complete run); throws otherwise.
  void accept();

  /// Makespan of the base.
  double base_makespan() const;
  /// Sum of the base's op finish times (seconds; a secondary objective that breaks ties of the
  /// makespan: lower means the ops finish earlier on the whole).
  double base_finish_sum() const;
  /// The same sum for the last evaluate()'s candidate when that run was complete (returned a
  /// value <= its cutoff); unspecified otherwise.
  double finish_sum() const;
  /// Ops started by the evaluations so far over the ops a full re-simulation would have
  /// started: the share of simulation work done (1 = no saving).
  double work_share() const;
  /// Share of the runs so far (reset() and evaluate()) that stopped on meeting the base's state.
  double met_share() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace doppler
