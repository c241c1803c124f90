#pragma once
// Helpers of the engine tests: small instances of every workload, random assignments and
// orders, and output comparison.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "doppler/engine/engine.hpp"
#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/sim/schedule.hpp"

namespace doppler::test {

/// A named small workload (CPU-cheap sizes where f32 results stay within 1e-5).
struct SmallWorkload {
  std::string label;
  Graph graph;
};

/// Every workload at small sizes: chainmm, ffnn, llama-block, llama-layer, and the training
/// graphs of ffnn and llama-block; blocked for `devices` devices.
std::vector<SmallWorkload> small_workloads(int devices);

/// Every node on device 0 of `devices`.
Assignment single_device(const Graph& g, int devices);

/// A uniformly random assignment to `devices` devices with a random priority order.
Assignment random_assignment(const Graph& g, int devices, std::mt19937_64& rng);

/// Output of every node after the engine's last run.
std::vector<std::vector<float>> all_outputs(const Engine& e);

/// The InputError of compiling `g` for the engine (its message), or "no error".
std::string compile_error(const Graph& g);

/// Checks (gtest expectations) that `r` is a valid dataflow execution of `a`: every op starts
/// after it became ready and ready after each input was resident on its device (produced there,
/// or copied there), a device and a copy worker do one thing at a time (with producer copies:
/// a device's ops and outgoing copies), one copy per (producer, destination device) that needs
/// it, the makespan is the last finish, bytes and busy times add up.
void expect_valid_execution(const Graph& g, const Assignment& a, const EngineResult& r,
                            CopyMode mode = CopyMode::worker);

/// The dispatch-rule check's graph: a root with `k` successors (unit reference costs), all
/// on one device, so that the root's finish makes k ops ready at once; its order puts the root
/// first and shuffles the successors (seeded).
struct FanOut {
  Graph graph;
  Assignment assignment;  ///< every op on device 0 of `devices`, the shuffled order
};
FanOut fan_out(int k, int devices, std::mt19937_64& rng);

/// Checks that the fan-out's successors started in the rule's order: fifo, the order they
/// became ready (successor id order); priority, the assignment's order.
void expect_rule_order(const FanOut& f, const Schedule& s, DispatchRule rule);

/// Number of threads of this process (/proc/self/task).
int thread_count();

/// Thread count once it falls to `want` or after `patience_seconds`, whichever comes first.
/// A joined thread has ended but the kernel may list it in /proc/self/task a moment longer
/// (it clears the joiner's wait before it reaps the task), more so on a loaded machine.
int thread_count_settled(int want, double patience_seconds = 2.0);

}  // namespace doppler::test
