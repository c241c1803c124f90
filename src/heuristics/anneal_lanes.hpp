#pragma once
// Speculative evaluation lanes of one annealing chain (private to src/heuristics): the chain
// proposes several moves from its current assignment, the lanes simulate them side by side (lane
// 0 on the calling thread, the others on threads of their own), and the chain takes the first
// one it accepts in proposal order. Where most moves are rejected (as late in annealing and in
// descent), k lanes advance the chain almost k times as fast per second.
#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <span>
#include <thread>
#include <utility>
#include <vector>

#include "doppler/sim/incremental.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler::detail {

/// One proposed move: the (op, new device) pairs it changes, and the makespan above which the
/// chain rejects it whatever the simulation (an early-abort cutoff; infinity: none).
struct LaneMove {
  std::vector<std::pair<NodeId, DeviceId>> changes;
  double cutoff = 0;
};

/// k lanes that evaluate moves from a shared current assignment. Each lane keeps a copy of the
/// current assignment and, with incremental simulation, an IncrementalSim whose base is the
/// current assignment but for the ops of the moves accepted from other lanes since (their ops
/// are passed as changed, so results are exact; past kRebaseAfter such ops the lane catches its
/// base up, not charged to the chain). The lanes do not count calls: the chain charges its
/// budget. Not thread-safe: one chain drives it.
class Lanes {
public:
  /// `k` >= 2 lanes on `sim` (which must outlive this object); `incremental` and `early_abort`
  /// as in AnnealSettings.
  Lanes(const Simulator& sim, int k, bool incremental, bool early_abort);
  ~Lanes();
  Lanes(const Lanes&) = delete;
  Lanes& operator=(const Lanes&) = delete;

  /// Number of lanes.
  int size() const { return static_cast<int>(lanes_.size()); }
  /// Makes `current` every lane's current assignment (and base), simulating it on every lane at
  /// once (uncounted); returns its makespan.
  double reset(std::span<const DeviceId> current);
  /// Simulates moves[i] on lane i (at most size() moves), each from the current assignment:
  /// out[i] is its makespan when <= its cutoff, else a value above the cutoff.
  void evaluate(std::span<const LaneMove> moves, std::span<double> out);
  /// Move `i` of the last evaluate() (whose makespan was within its cutoff) is accepted: it
  /// becomes every lane's current assignment.
  void accept(int i, const LaneMove& move);

private:
  struct Lane;
  // Runs job_ on every lane (lane 0 here, the others on their threads) and waits for all;
  // rethrows a lane's exception.
  void run_all();
  // Tells the lane threads to end (they are joined with threads_).
  void stop();
  // A lane thread: waits for a job, does its part, until Job::stop.
  void lane_loop(std::size_t l);
  // Lane l's part of job_ (its exception kept in errors_).
  void lane_loop_step(std::size_t l);
  void reset_lane(Lane& lane, bool first);
  double evaluate_lane(Lane& lane, const LaneMove& move);

  const Simulator& sim_;
  bool incremental_, early_abort_;
  std::vector<std::unique_ptr<Lane>> lanes_;
  enum class Job { none, reset, evaluate, stop } job_ = Job::none;
  std::span<const DeviceId> reset_to_;
  std::span<const LaneMove> moves_;
  std::span<double> out_;
  std::vector<std::exception_ptr> errors_;
  // The handshake of a job: go_ counts the jobs started; pending_ the lanes still at work. A
  // lane spins briefly before it sleeps (a job of the chain takes well under a millisecond).
  std::atomic<std::uint64_t> go_{0};
  std::atomic<int> pending_{0};
  std::vector<std::jthread> threads_;
};

}  // namespace doppler::detail
