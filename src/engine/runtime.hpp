#pragma once
// Internal: the multi-threaded dataflow runtime behind Engine (and the MPI backend). Each local
// device owns a buffer per node it computes or receives (memory, kernels and local copies come
// from a DeviceBackend: device_backend.hpp), a compute worker and an incoming-copy worker; the
// calling thread only starts a run and waits for its end. With the MPI backend's transport, the
// compute workers make its progress between their ops and while they have none (no thread
// wakes up on a busy core to poll it).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "device_backend.hpp"
#include "plan.hpp"

#include "doppler/engine/options.hpp"
#include "doppler/engine/result.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/sim/schedule.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler::engine_detail {

class Runtime;

/// Floats after every buffer's data: the MPI backend sends the producer's finish time there.
inline constexpr std::int64_t kTrailer = 2;

/// Moves outputs to devices of other processes (MPI backend). send() is called by compute
/// workers and must only queue; begin_run() runs on the controller thread before the run's
/// polling starts; poll() and idle() run on one thread at a time (a compute worker between its
/// ops or while it has none, or the controller once the run's polling has ended).
class Transport {
public:
  virtual ~Transport() = default;
  /// A run begins: every local buffer exists; post receives and synchronise clocks.
  virtual void begin_run(Runtime& rt, std::span<const DeviceId> device_of) = 0;
  /// Node u's output (on local device `from`, finished at `t` seconds) is needed on remote
  /// device `to`.
  virtual void send(NodeId u, DeviceId from, DeviceId to, double t) = 0;
  /// Makes progress: posts queued sends, delivers completed receives (Runtime::deliver).
  virtual void poll(Runtime& rt) = 0;
  /// True when no send or receive of this run is outstanding.
  virtual bool idle() const = 0;
};

/// What the runtime was built with.
struct RuntimeConfig {
  int devices = 1;                     ///< P
  std::vector<char> local;             ///< per device: runs in this process (default: all)
  bool pin = true;                     ///< pin compute workers when local devices <= cores
  CopyMode copies = CopyMode::worker;  ///< who copies between local devices
  LinkEmulation link;                  ///< copy slow-down
  FaultInjection fault;                ///< test hook
  double timeout = 0;                  ///< seconds; 0 = none
};

/// Times recorded by one run (seconds from the run's start). Ops not run locally keep -1.
struct RunRecord {
  std::vector<double> ready, start, finish;  ///< per node
  std::vector<TransferRecord> transfers;     ///< copies received by local devices
  double makespan = 0;                       ///< latest local finish
};

/// Threads, buffers and dataflow state of one engine. Not copyable; one run at a time.
class Runtime {
public:
  /// `backend` provides memory, kernels and copies (nullptr: the CPU backend).
  Runtime(const Graph& g, const Plan& plan, RuntimeConfig cfg,
          std::unique_ptr<DeviceBackend> backend = nullptr);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// Runs the ops of `device_of` placed on local devices; throws EngineError on failure.
  void run(std::span<const DeviceId> device_of, DispatchRule rule, std::span<const NodeId> order,
           Transport* transport, RunRecord& rec);

  /// Device address of node v's buffer on device d (numel + kTrailer elements once a run has
  /// needed it).
  void* buffer(DeviceId d, NodeId v) { return backend_->buffer(d, v); }
  /// buffer() as the f32 host memory it is when host_buffers() (the CPU backend; the only one
  /// that runs with a Transport to other processes).
  float* host_floats(DeviceId d, NodeId v) { return static_cast<float*>(backend_->buffer(d, v)); }
  /// Copies the first out.size() elements of device d's buffer of v into host memory as f32
  /// (between runs).
  void read(DeviceId d, NodeId v, std::span<float> out) { backend_->read(d, v, out); }
  /// True when buffer() is f32 host memory (the CPU backend); else read() it.
  bool host_buffers() const { return backend_->host_memory(); }
  /// The backend's own description ("" for the CPU backend).
  std::string backend_label() const { return backend_->describe(); }
  /// True when device d's buffer of v has been allocated.
  bool has_buffer(DeviceId d, NodeId v) const { return backend_->has_buffer(d, v); }
  /// Seconds since the current run's start.
  double now() const;
  /// A remote copy of u from `from` arrived in the buffer of local device `to`; `t_send` is
  /// the producer's finish time (called from Transport::poll).
  void deliver(NodeId u, DeviceId from, DeviceId to, double t_send);
  /// Wakes the controller (the transport has work).
  void wake();
  /// Replaces the fault injected into later runs (between runs only).
  void set_fault(const FaultInjection& fault) { cfg_.fault = fault; }
  /// Whether compute workers are pinned.
  bool pinned() const { return pinned_; }
  /// Usable cores of this process.
  int cores() const { return static_cast<int>(cpus_.size()); }
  /// Device count P.
  int devices() const { return cfg_.devices; }
  /// True when device d runs in this process.
  bool is_local(DeviceId d) const { return cfg_.local[static_cast<std::size_t>(d)] != 0; }

private:
  struct CopyJob {
    NodeId u;
    DeviceId from;
    double t_send;  // remote: the producer's finish time; local: unused
    bool remote;
  };
  struct ReadyItem {
    double key;
    NodeId v;
  };
  struct Device {
    std::mutex mu;
    std::condition_variable cv;
    std::vector<ReadyItem> ready;  // min-heap on (key, v)
    std::mutex copy_mu;
    std::condition_variable copy_cv;
    std::deque<CopyJob> copies;
    std::vector<TransferRecord> transfers;  // copies received (written by the copy worker)
    std::vector<TransferRecord> sent;       // copies made by the compute worker (producer mode)
    std::vector<TransferRecord> received;   // remote copies its compute worker took delivery of
    std::vector<const void*> ins;
    std::atomic<NodeId> running{-1};  // op being computed, -1 when idle
    std::thread compute, copier;
  };

  void compute_loop(DeviceId d);
  // Next op of device d to run, or -1 when it has none and the run's transport wants polling;
  // blocks otherwise. Returns -2 on stop.
  NodeId next_op(Device& dv);
  // Makes transport progress unless another thread is doing so; wakes the controller when the
  // run is complete.
  void try_poll();
  void set_polling(bool on);
  // Incoming-copy worker of device d: runs its copies in request order; after each, gives its
  // core to the compute worker when an op of d is ready.
  void copy_loop(DeviceId d);
  bool has_ready(Device& dv);  // an op of dv is queued to run
  void execute(DeviceId d, NodeId v);
  void copy(DeviceId d, const CopyJob& job);
  // Producer mode: copies u to local device `to` now, from t_start (the op's finish or the end
  // of its previous copy); returns when the copy ended.
  double copy_now(DeviceId from, DeviceId to, NodeId u, double t_start);
  void arrived(NodeId u, DeviceId d);  // decrement consumers of u on d
  void make_ready(NodeId v);
  void push_copy(DeviceId to, const CopyJob& job);
  void fail(const std::string& message);
  void prepare(std::span<const DeviceId> device_of, DispatchRule rule,
               std::span<const NodeId> order);
  void abort_and_drain();

  const Graph* g_;
  const Plan* plan_;
  RuntimeConfig cfg_;
  int n_ = 0;
  std::vector<std::unique_ptr<Device>> dev_;
  std::vector<int> cpus_;
  bool pinned_ = false;
  std::unique_ptr<DeviceBackend> backend_;

  // State of the current run.
  const DeviceId* assign_ = nullptr;
  bool fifo_ = true;
  std::vector<double> rank_;
  std::unique_ptr<std::atomic<int>[]> pending_;
  std::vector<EdgeId> dest_begin_;  // CSR: destination devices of each node's output
  std::vector<DeviceId> dests_;
  std::vector<int> dev_stamp_;
  Transport* transport_ = nullptr;
  std::mutex poll_mu_;                       // one thread in transport_->poll()/idle() at a time
  std::atomic<bool> polling_{false};         // the run's workers poll transport_
  std::atomic<bool> transport_done_{false};  // set by a poller: nothing outstanding
  int local_total_ = 0;
  std::atomic<int> done_{0};
  std::atomic<int> in_flight_{0};
  std::atomic<std::uint64_t> seq_{0};
  std::atomic<bool> abort_{false};
  std::atomic<bool> stop_{false};
  std::chrono::steady_clock::time_point t0_;
  RunRecord* rec_ = nullptr;
  std::mutex ctl_mu_;
  std::condition_variable ctl_cv_;
  std::string error_;
};

/// Once per process: OpenBLAS at one thread (the engine's devices are its threads) and freed
/// memory kept for reuse (retain_freed_memory: an engine's buffers, allocated when it is made,
/// reuse the pages of an earlier engine's instead of page-faulting afresh).
void configure_process();

/// The EngineResult of a run record: `device_of` over `devices` devices; TransferRecord links are
/// destination devices (one copy worker each).
EngineResult to_result(const Graph& g, std::span<const DeviceId> device_of, int devices,
                       const RunRecord& rec);

}  // namespace doppler::engine_detail
