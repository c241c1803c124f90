#pragma once
// The work-conserving discrete-event simulator: the reward of Stage II training and the judge of
// every placement. Semantics in docs/simulator.md; in short:
//  - an op is ready on its device when all its inputs have arrived there; an input from a
//    producer on the same device arrives when the producer finishes; from another device, after
//    its transfer (reference model: the edge's transfer cost, by default its producer's
//    transfer_cost and then one transfer per producer, links never contend; hardware
//    model: one transfer per (producer, destination device), occupying every link of its route
//    for latency + bytes / bandwidth, links serving transfers FIFO, arriving after the route's
//    pipelined delay on top; a device with copy_share s > 0 loses s x each incoming transfer's
//    link occupancy from the ops running on it when the transfer is sent: they finish later);
//  - a device with contention k > 0 loses k x the time its op runs while other devices compute,
//    weighted by the share of the other devices computing: its ops finish later (an op alone
//    takes its price; one beside devices that always compute takes price / (1 - k));
//  - a device with a free slot never idles while one of its ops is ready; it starts the op that
//    became ready earliest (rule fifo; ties: lower op id) or the one earliest in a priority order
//    (rule priority);
//  - all events of one instant are applied before devices choose, so the result does not depend
//    on event order; the makespan is the finish time of the last op.
#include <atomic>
#include <span>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/sim/event_heap.hpp"
#include "doppler/sim/schedule.hpp"

namespace doppler {

class IncrementalSim;
namespace detail {
template <bool kRecord, bool kPriority, bool kResume = false>
class SimRun;
}

/// How a free device chooses among its ready ops.
enum class DispatchRule {
  fifo,      ///< the op that became ready earliest (ties: lower id); the reference's rule
  priority,  ///< the op earliest in the assignment's `order` (ties cannot happen)
};

/// Per-thread scratch memory of a Simulator. Reusing one across calls makes makespan()
/// allocation-free.
class SimWorkspace {
public:
  SimWorkspace() = default;

  /// A pending event (implementation detail of Simulator); its time is the heap key.
  struct Event {
    NodeId op;
    std::int32_t aux;  // -1: op finished; -2: output reached every other device; >= 0: reached
                       // device aux; <= -3: crossed out-edge number -3 - aux of op
  };
  /// A ready op in a device queue (implementation detail of Simulator).
  struct Ready {
    double key;  // ready time (fifo) or rank (priority)
    NodeId op;
  };
  /// Contention state of a run (implementation detail of Simulator; DeviceSpec::contention > 0
  /// only): devices computing now, the integral of that count over time up to instant `at`, and
  /// per op the integral and the time when it started and the contention time already added.
  struct Contention {
    int busy = 0;
    double integral = 0, at = 0;
    std::vector<double> start_integral, start_time, charged;
    /// Equal states, field by field (IncrementalSim's meeting test).
    bool operator==(const Contention&) const = default;
  };

private:
  friend class Simulator;
  friend class IncrementalSim;
  template <bool kRecord, bool kPriority, bool kResume>
  friend class detail::SimRun;
  std::vector<int> pending;
  std::vector<double> ready_time;
  detail::EventHeap<Event> events;
  std::vector<Event> batch;
  std::vector<Ready> queue;  // per-device heaps, device d at [q_begin[d], q_begin[d] + q_size[d])
  std::vector<int> q_begin, q_size, q_head;
  std::vector<int> free_slots;
  std::vector<DeviceId> touched;
  std::vector<char> is_touched;
  std::vector<double> link_free;
  std::vector<int> dev_stamp;
  std::vector<double> dev_bytes;
  std::vector<DeviceId> dev_list;
  std::vector<int> rank;
  std::vector<double> dev_work;     // unstarted compute per device (early abort only)
  std::vector<double> dev_started;  // compute started so far per device (IncrementalSim only)
  // Copies charged to the ops running on their destination (DeviceSpec::copy_share > 0 only):
  // per device, the charged copy time sent so far, its value before the instant copy_at, and
  // that instant; per op, the charged copy time already added to its run.
  std::vector<double> copy_sent, copy_prior, copy_at, copy_charged;
  Contention contention;
  const DeviceId* dev = nullptr;  // assignment being simulated
  int stamp = 0;
};

/// A simulator for one (graph, platform). Build it once, then evaluate many assignments;
/// makespan() performs no heap allocation once its workspace has grown to size. The simulator
/// is immutable after construction: one instance can serve several threads, each with its own
/// SimWorkspace.
class Simulator {
public:
  /// Precomputes per-op compute times, CSR adjacency and transfer sizes. Throws InputError when
  /// the platform cannot model the graph (e.g. the reference model without reference costs).
  Simulator(const Graph& g, const Platform& platform);

  /// Makespan of `device_of` (one device per op, in 0..P-1; -1 excludes an op and its edges,
  /// e.g. to score a partial placement). Throws InputError on a wrong size or device.
  double makespan(std::span<const DeviceId> device_of, SimWorkspace& ws,
                  DispatchRule rule = DispatchRule::fifo, std::span<const NodeId> order = {}) const;
  /// Early-abort evaluation (fifo rule) for searches that only need to know whether a makespan
  /// is at most `cutoff`: returns the exact makespan when it is <= cutoff; otherwise a value
  /// > cutoff (a lower bound of the makespan), possibly after stopping the simulation as soon as
  /// a bound on the partial schedule exceeds the cutoff (an op's finish plus the longest
  /// compute-only path after it, or the time plus a device's unstarted work over its slots).
  /// The decision `result <= cutoff` always equals `makespan() <= cutoff`. Counts as one call.
  double makespan_below(std::span<const DeviceId> device_of, SimWorkspace& ws, double cutoff) const;
  /// Same, with the simulator's own workspace (not thread-safe).
  double makespan(std::span<const DeviceId> device_of) const { return makespan(device_of, own_); }
  /// Makespan of an assignment (its order is used with DispatchRule::priority).
  double makespan(const Assignment& a, DispatchRule rule = DispatchRule::fifo) const;

  /// The full schedule of an assignment.
  Schedule simulate(const Assignment& a, DispatchRule rule = DispatchRule::fifo) const;

  /// Makespans of many assignments using `threads` threads (0 = hardware concurrency), each with
  /// its own workspace. Results are in input order and identical to sequential calls.
  std::vector<double> makespans(const std::vector<std::vector<DeviceId>>& batch, int threads = 0,
                                DispatchRule rule = DispatchRule::fifo) const;

  /// The graph simulated.
  const Graph& graph() const { return *graph_; }
  /// The platform simulated.
  const Platform& platform() const { return platform_; }
  /// Device count P.
  int devices() const { return platform_.devices(); }
  /// Simulations run so far by this simulator (every makespan(), makespans() element and
  /// simulate() call, from any thread): the budget counter of the search and learned methods.
  std::int64_t calls() const { return calls_.n.load(std::memory_order_relaxed); }

private:
  double run(std::span<const DeviceId> device_of, SimWorkspace& ws, DispatchRule rule,
             std::span<const NodeId> order, Schedule* out) const;
  template <bool kRecord, bool kPriority, bool kResume>
  friend class detail::SimRun;  // the event loop (src/sim/sim_run.hpp)
  friend class IncrementalSim;  // resumable runs (src/sim/incremental.cpp)
  void check(std::span<const DeviceId> device_of, DispatchRule rule,
             std::span<const NodeId> order) const;
  void compute_tails(const Graph& g);

  const Graph* graph_;
  Platform platform_;
  bool reference_ = true;
  bool homogeneous_ = true;
  int n_ = 0, p_ = 0;
  std::vector<EdgeId> succ_begin_;         // N + 1
  std::vector<NodeId> succ_;               // E
  std::vector<double> edge_bytes_;         // E (hardware)
  std::vector<int> indeg_;                 // N
  std::vector<double> compute_;            // N (homogeneous) or N x P
  std::vector<double> ref_transfer_;       // N (reference model)
  std::vector<double> ref_edge_transfer_;  // E (reference model with per-edge costs)
  std::vector<double> tail_;               // N: longest path of fastest compute times after each op
  std::vector<int> slots_;                 // P
  std::vector<double> route_lat_, route_inv_bw_;  // P x P (hardware): occupying latency, 1 / bw
  std::vector<double> route_delay_;               // P x P (hardware): pipelined delay
  std::vector<double> copy_share_;                // P (hardware): DeviceSpec::copy_share
  bool copies_charged_ = false;                   // some copy_share > 0
  std::vector<double> contention_;                // P (hardware): DeviceSpec::contention
  bool contended_ = false;                        // some contention > 0
  std::vector<int> route_begin_;                  // P x P + 1 offsets into route_links_
  std::vector<int> route_links_;
  int num_links_ = 0;
  mutable SimWorkspace own_;
  // A relaxed atomic counter that copies by value (the simulator stays copyable).
  struct CallCounter {
    mutable std::atomic<std::int64_t> n{0};
    CallCounter() = default;
    CallCounter(const CallCounter& o) : n(o.n.load()) {}
    CallCounter& operator=(const CallCounter& o) {
      n = o.n.load();
      return *this;
    }
  };
  CallCounter calls_;
};

/// Parses "fifo" or "priority"; InputError otherwise.
DispatchRule parse_dispatch_rule(const std::string& name);

}  // namespace doppler
