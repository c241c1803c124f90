#pragma once
// The real work-conserving engine (CPU backend, docs/engine.md): P logical devices, each with
// its own buffers, one compute worker thread and one incoming-copy worker thread. It executes
// the graph's block kernels for real (OpenBLAS for einsums, one BLAS thread per worker) with no
// barriers and measures the wall-clock makespan of any assignment.
//
// Dataflow: an op is ready when all its inputs are resident on its device; when an op finishes,
// one copy per destination device that needs its output is queued to that device's copy worker;
// a free compute worker immediately takes a ready op, chosen by the dispatch rule (fifo: the op
// that became ready first; priority: the op earliest in the assignment's order).
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "doppler/engine/options.hpp"
#include "doppler/engine/result.hpp"
#include "doppler/engine/runner.hpp"
#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {

/// A failed engine run (a kernel threw, a fault was injected, the timeout expired). The engine
/// stays usable: the next run starts from a clean state.
class EngineError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// An engine for one graph. Construction compiles every kernel (operand regions, GEMM plans,
/// input values) and starts 2P threads; runs reuse them and every buffer, so repeated runs of one
/// Engine only pay for the work itself. The graph must outlive the engine. run() calls are
/// serialized (one run at a time); the destructor stops and joins every thread.
class Engine : public EngineRunner {
public:
  /// Compiles `g` and starts the workers. InputError when the options are invalid or a node's
  /// exec description cannot be executed (real kernels).
  Engine(const Graph& g, EngineOptions options);
  ~Engine() override;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  /// Runs every op of `a` once and returns the measured schedule. `a` must be valid for the
  /// graph with a.devices <= devices(); DispatchRule::priority needs a.order. InputError on a
  /// bad assignment, EngineError when the run fails.
  EngineResult run(const Assignment& a, DispatchRule rule = DispatchRule::fifo) override;

  /// Replaces the fault injected into later runs (test hook; Kind::none removes it).
  void inject_fault(const FaultInjection& fault);

  /// `warmup` unmeasured runs, then `repeat` (>= 1) measured runs of `a`.
  Measurement measure(const Assignment& a, DispatchRule rule, int repeat, int warmup = 1);
  /// The same with the number of measured runs chosen by `policy`.
  Measurement measure(const Assignment& a, DispatchRule rule, const RepeatPolicy& policy,
                      int warmup = 1);

  /// Output block of node v from the last run (on the device that computed it), row-major f32.
  /// Real kernels: the block's values; synthetic kernels: element 0 is a checksum of the inputs'
  /// element 0. Empty before the first run.
  std::span<const float> output(NodeId v) const;
  /// Shape of node v's output block (synthetic and empty modes: one dimension).
  const std::vector<std::int64_t>& output_shape(NodeId v) const;

  /// The graph executed.
  const Graph& graph() const;
  /// Device count P.
  int devices() const;
  /// The kernel mode in effect (never automatic).
  KernelMode kernel_mode() const;
  /// FLOPs per unit of cost of synthetic kernels (0 unless synthetic).
  double synthetic_scale() const;
  /// Total FLOPs of one run (exec FLOPs for real kernels, synthetic FLOPs otherwise).
  double total_flops() const;
  /// Whether the compute workers are pinned to cores.
  bool pinned() const;
  /// Notes for the user (e.g. "4 devices on 2 cores: workers share cores, not pinned").
  const std::vector<std::string>& warnings() const;
  /// One line describing the engine: backend, devices, kernels, pinning, link emulation.
  std::string describe() const;

  struct Impl;  ///< implementation (src/engine)

private:
  std::unique_ptr<Impl> impl_;
};

/// Measures `a` on a fresh or existing engine: `warmup` runs, then the median of `repeat`.
double median_makespan(Engine& engine, const Assignment& a, DispatchRule rule, int repeat,
                       int warmup = 1);

}  // namespace doppler
