// The measured schedule is a valid dataflow execution: every op starts after it became ready
// and ready after each input was resident on its device (produced there, or copied there by
// that device's copy worker); a device and a copy worker do one thing at a time; one copy per
// (producer, destination device) that needs it; the makespan is the last finish.
#include <algorithm>
#include <random>
#include <set>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "support/support.hpp"

#include "doppler/engine/engine.hpp"

namespace doppler {
namespace {

TEST(EngineSchedule, RealKernelRunsAreValidDataflowExecutions) {
  std::mt19937_64 rng(3);
  const auto w = test::small_workloads(4);
  for (const auto& x : {w[1], w[5]}) {  // ffnn, llama-layer
    EngineOptions o;
    o.devices = 4;
    Engine e(x.graph, o);
    for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
      const Assignment a = test::random_assignment(x.graph, 4, rng);
      test::expect_valid_execution(x.graph, a, e.run(a, rule));
    }
  }
}

// --copies producer: the same dataflow guarantees, with each copy made by the producing op's
// worker right after the op (so a device's ops and outgoing copies do not overlap), and the
// outputs equal the single-device run's bit for bit.
TEST(EngineSchedule, ProducerCopiesAreValidAndGiveTheSameOutputs) {
  std::mt19937_64 rng(11);
  const auto w = test::small_workloads(3);
  for (const auto& x : {w[0], w[1], w[5]}) {  // chainmm, ffnn, llama-layer
    SCOPED_TRACE(x.label);
    EngineOptions o;
    o.devices = 3;
    o.copies = CopyMode::producer;
    Engine e(x.graph, o);
    e.run(test::single_device(x.graph, 1));
    const auto want = test::all_outputs(e);
    for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
      const Assignment a = test::random_assignment(x.graph, 3, rng);
      const EngineResult r = e.run(a, rule);
      ASSERT_GT(r.copies, 0);
      test::expect_valid_execution(x.graph, a, r, CopyMode::producer);
      const auto got = test::all_outputs(e);
      for (NodeId v = 0; v < x.graph.num_nodes(); ++v)
        EXPECT_EQ(got[static_cast<std::size_t>(v)], want[static_cast<std::size_t>(v)])
            << "node " << x.graph.label(v);
    }
  }
}

TEST(EngineSchedule, CopiedBytesAreTheProducersF32Blocks) {
  std::mt19937_64 rng(4);
  const Graph g = test::small_workloads(2)[0].graph;  // chainmm
  EngineOptions o;
  o.devices = 2;
  Engine e(g, o);
  const EngineResult r = e.run(test::random_assignment(g, 2, rng));
  ASSERT_GT(r.copies, 0);
  for (const auto& t : r.schedule.transfers)
    EXPECT_EQ(t.bytes, 4.0 * static_cast<double>(g.node(t.src).exec->numel()));
}

TEST(EngineSchedule, SyntheticRandomDagRunsAreValid) {
  std::mt19937_64 rng(5);
  const Graph g = test::random_dag(rng, {60, 0.1, 10, 10, true});
  EngineOptions o;
  o.devices = 3;
  o.synthetic_scale = 1e4;
  Engine e(g, o);
  EXPECT_EQ(e.kernel_mode(), KernelMode::synthetic);
  for (int i = 0; i < 3; ++i) {
    const Assignment a = test::random_assignment(g, 3, rng);
    test::expect_valid_execution(g, a,
                                 e.run(a, i % 2 ? DispatchRule::priority : DispatchRule::fifo));
  }
}

// A root whose finish makes K ops ready at once on its device: the worker must then run them
// in the dispatch rule's order (fifo: the order they became ready, i.e. successor id order;
// priority: the assignment's order).
TEST(EngineSchedule, DispatchRuleOrdersReadyOps) {
  std::mt19937_64 rng(9);
  const test::FanOut f = test::fan_out(12, 2, rng);
  EngineOptions o;
  o.devices = 2;
  o.synthetic_scale = 1e4;
  Engine e(f.graph, o);
  for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority})
    test::expect_rule_order(f, e.run(f.assignment, rule).schedule, rule);
}

}  // namespace
}  // namespace doppler
