// Real kernels are correct: every workload at small sizes, run by the engine on one device,
// equals the independent evaluator (tests/workloads/block_eval.cpp) block by block, and every
// multi-device run (random assignments, both dispatch rules, 1..4 devices) reproduces the
// single-device outputs bit for bit.
#include <cstring>
#include <random>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/engine/engine.hpp"

namespace doppler {
namespace {

TEST(EngineCorrectness, SingleDeviceMatchesIndependentEvaluator) {
  for (const auto& w : test::small_workloads(4)) {
    SCOPED_TRACE(w.label);
    Engine e(w.graph, {});
    ASSERT_EQ(e.kernel_mode(), KernelMode::real);
    e.run(test::single_device(w.graph, 1));
    const std::vector<test::Dense> want = test::evaluate_blocks(w.graph, true);
    for (NodeId v = 0; v < w.graph.num_nodes(); ++v) {
      test::Dense got(e.output_shape(v));
      const auto out = e.output(v);
      ASSERT_EQ(out.size(), got.data.size()) << w.graph.label(v);
      for (std::size_t i = 0; i < out.size(); ++i) got.data[i] = out[i];
      EXPECT_LT(test::relative_error(got, want[static_cast<std::size_t>(v)]), 1e-5)
          << "node " << v << " " << w.graph.label(v);
    }
  }
}

TEST(EngineCorrectness, AnyAssignmentAndOrderReproducesTheSingleDeviceRun) {
  std::mt19937_64 rng(7);
  for (const auto& w : test::small_workloads(4)) {
    SCOPED_TRACE(w.label);
    EngineOptions o;
    o.devices = 4;
    Engine e(w.graph, o);
    e.run(test::single_device(w.graph, 1));
    const auto want = test::all_outputs(e);
    for (int p = 1; p <= 4; ++p)
      for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
        const Assignment a = test::random_assignment(w.graph, p, rng);
        e.run(a, rule);
        const auto got = test::all_outputs(e);
        for (NodeId v = 0; v < w.graph.num_nodes(); ++v) {
          const auto& x = got[static_cast<std::size_t>(v)];
          const auto& y = want[static_cast<std::size_t>(v)];
          ASSERT_EQ(x.size(), y.size());
          EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(float)), 0)
              << "node " << w.graph.label(v) << " differs on " << p << " devices, rule "
              << (rule == DispatchRule::fifo ? "fifo" : "priority");
        }
      }
  }
}

}  // namespace
}  // namespace doppler
