// Failures end a run with a clear error and no hang, the engine stays usable, and no thread
// outlives its engine. Bad input is an InputError.
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "support/support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// A node in the middle of the graph's topological order.
NodeId middle_op(const Graph& g) {
  return g.topo_order()[g.topo_order().size() / 2];
}

std::string error_of(Engine& e, const Assignment& a) {
  try {
    e.run(a);
  } catch (const EngineError& err) {
    return err.what();
  }
  return "";
}

// Thread count of the process once OpenBLAS is configured (the first engine sets it to one
// thread, which may change its own pool).
int baseline_threads(const Graph& g) {
  const int cold = test::thread_count();
  { Engine warm(g, {}); }
  return test::thread_count_settled(cold, 0.5);  // the warm engine's workers may linger a moment
}

TEST(EngineFaults, FailingKernelEndsTheRunWithAClearErrorAndNoLeakedThread) {
  const Graph g = test::small_workloads(3)[3].graph;  // llama-block
  const NodeId bad = middle_op(g);
  const int before = baseline_threads(g);
  {
    EngineOptions o;
    o.devices = 3;
    o.fault = {FaultInjection::Kind::fail, bad};
    Engine e(g, o);
    EXPECT_EQ(test::thread_count(), before + 6);  // a compute and a copy worker per device
    std::mt19937_64 rng(1);
    const Assignment a = test::random_assignment(g, 3, rng);
    const std::string err = error_of(e, a);
    EXPECT_NE(err.find("injected fault"), std::string::npos) << err;
    EXPECT_NE(err.find(g.label(bad)), std::string::npos) << err;
    EXPECT_NE(err.find(std::to_string(a.device_of[static_cast<std::size_t>(bad)])),
              std::string::npos)
        << err;
    EXPECT_TRUE(e.output(0).empty()) << "no outputs after a failed run";
  }
  EXPECT_EQ(test::thread_count_settled(before), before);
}

TEST(EngineFaults, HangingKernelIsEndedByTheTimeout) {
  const Graph g = test::small_workloads(2)[1].graph;  // ffnn
  const NodeId bad = middle_op(g);
  const int before = baseline_threads(g);
  {
    EngineOptions o;
    o.devices = 2;
    o.fault = {FaultInjection::Kind::hang, bad};
    o.timeout_seconds = 0.2;
    Engine e(g, o);
    std::mt19937_64 rng(2);
    const std::string err = error_of(e, test::random_assignment(g, 2, rng));
    EXPECT_NE(err.find("timed out"), std::string::npos) << err;
    EXPECT_NE(err.find("still running: op " + std::to_string(bad)), std::string::npos) << err;
  }
  EXPECT_EQ(test::thread_count_settled(before), before);
}

TEST(EngineFaults, EngineRecoversAfterAFailedRun) {
  const Graph g = test::small_workloads(4)[0].graph;  // chainmm
  EngineOptions o;
  o.devices = 4;
  Engine e(g, o);
  std::mt19937_64 rng(3);
  const Assignment a = test::random_assignment(g, 4, rng);
  e.run(a);
  const auto want = test::all_outputs(e);
  // each failed run leaves a clean state; a device fault (trap) fails on the CPU as a throw
  for (const auto kind :
       {FaultInjection::Kind::fail, FaultInjection::Kind::trap, FaultInjection::Kind::fail}) {
    e.inject_fault({kind, middle_op(g)});
    try {
      e.run(a);
      ADD_FAILURE() << "the injected fault did not fail the run";
    } catch (const EngineError& err) {
      const std::string want =
          kind == FaultInjection::Kind::trap ? "injected device fault" : "injected fault";
      EXPECT_NE(std::string(err.what()).find(want), std::string::npos) << err.what();
    }
  }
  e.inject_fault({});
  const EngineResult r = e.run(a);
  EXPECT_EQ(test::all_outputs(e), want);
  EXPECT_GT(r.makespan_seconds, 0);
}

TEST(EngineInput, BadInputIsAnInputError) {
  const Graph g = test::small_workloads(2)[1].graph;
  EngineOptions o;
  o.devices = 2;
  Engine e(g, o);
  Assignment a = test::single_device(g, 2);
  a.device_of.pop_back();
  EXPECT_THROW(e.run(a), InputError);  // wrong size
  a = test::single_device(g, 3);
  EXPECT_THROW(e.run(a), InputError);  // more devices than the engine
  a = test::single_device(g, 2);
  EXPECT_THROW(e.run(a, DispatchRule::priority), InputError);  // no order
  EngineOptions zero;
  zero.devices = 0;
  EXPECT_THROW(Engine(g, zero), InputError);
  std::mt19937_64 rng(4);
  const Graph plain = test::random_dag(rng, {10, 0.3, 10, 10, true});
  EngineOptions real;
  real.kernels = KernelMode::real;
  EXPECT_THROW(Engine(plain, real), InputError);  // no exec descriptions
  EXPECT_THROW(parse_kernel_mode("fast"), InputError);
  EXPECT_THROW(LinkEmulation::from(-1, 0, ""), InputError);
  EXPECT_THROW(LinkEmulation::from(1e9, 0, "p100"), InputError);
}

}  // namespace
}  // namespace doppler
