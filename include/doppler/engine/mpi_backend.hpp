#pragma once
// The engine across several processes and hosts (library doppler_mpi; docs/engine.md). Start
// every rank with the same graph, options and assignments (`mpirun -np R doppler execute ...
// --backend mpi`): devices are spread over the ranks in contiguous blocks (device d on rank
// floor(d R / P)); each rank runs the compute and copy workers of its own devices, and outputs
// needed on another rank's device travel as non-blocking MPI point-to-point messages, overlapped
// with compute. Semantics and outputs are those of Engine; schedules are merged on rank 0.
#include <memory>
#include <optional>
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

/// One rank's part of a distributed engine. Every member function is collective: all ranks must
/// call it with the same arguments, in the same order.
class MpiEngine : public EngineRunner {
public:
  /// Initializes MPI when needed (MPI_THREAD_SERIALIZED: the compute workers talk to MPI during
  /// a run, one at a time; the calling thread before and after it; EngineError without it),
  /// compiles the graph and starts the workers of this rank's devices. InputError when there
  /// are fewer devices than ranks or the options are invalid.
  MpiEngine(const Graph& g, EngineOptions options);
  /// Stops the workers; finalizes MPI when the constructor initialized it.
  ~MpiEngine() override;
  MpiEngine(const MpiEngine&) = delete;
  MpiEngine& operator=(const MpiEngine&) = delete;

  /// This process's rank (0 = the one that reports).
  int rank() const;
  /// Number of ranks R.
  int ranks() const;
  /// Rank that runs device d.
  int owner(DeviceId d) const;

  /// Runs `a` once on every rank. Rank 0 returns the merged schedule of all ranks; the other
  /// ranks return their own ops and received copies, with the global makespan. A failing run
  /// on any rank prints the error and ends the whole job (MPI_Abort, exit code 1): no rank hangs.
  EngineResult run(const Assignment& a, DispatchRule rule = DispatchRule::fifo) override;
  /// `warmup` unmeasured runs, then `repeat` measured ones (makespans are global).
  Measurement measure(const Assignment& a, DispatchRule rule, int repeat, int warmup = 1);
  /// Node v's output after the last run, on rank 0 (empty on the other ranks).
  std::vector<float> gather_output(NodeId v);
  /// Hands work from rank 0 to every rank: rank 0 passes the next assignment (or nullopt to
  /// stop), every rank returns it. Used by Stage III, where rank 0 trains and all ranks run.
  std::optional<Assignment> share(const std::optional<Assignment>& work);

  /// The kernel mode in effect (never automatic).
  KernelMode kernel_mode() const;
  /// Total FLOPs of one run.
  double total_flops() const;
  /// One line describing the engine (as Engine::describe, plus the rank layout).
  std::string describe() const;
  /// Notes for the user (e.g. workers sharing cores), this rank's.
  const std::vector<std::string>& warnings() const;

  struct Impl;  ///< implementation (src/engine/mpi)

  /// A factory of MpiEngines (calibrate --backend mpi): every rank must build the same graphs
  /// in the same order.
  static EngineFactory factory();

private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace doppler
