#pragma once
// What calibration and sim-to-real validation need of an engine backend (local threads, MPI
// ranks, later GPUs): build it for a graph, run assignments, read the makespan and the schedule.
#include <functional>
#include <memory>

#include "doppler/engine/options.hpp"
#include "doppler/engine/result.hpp"
#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {

/// An engine built for one graph. MPI: every rank calls run() with the same arguments in the
/// same order, and only rank 0's schedule covers every op.
class EngineRunner {
public:
  virtual ~EngineRunner() = default;
  /// Runs every op of `a` once; the measured schedule and makespan (seconds).
  virtual EngineResult run(const Assignment& a, DispatchRule rule) = 0;
};

/// Builds a runner for graph `g` (which must outlive it) with `options`.
using EngineFactory =
    std::function<std::unique_ptr<EngineRunner>(const Graph& g, const EngineOptions& options)>;

/// The local backend (class Engine: one compute and one copy thread per device).
EngineFactory local_engine_factory();

}  // namespace doppler
