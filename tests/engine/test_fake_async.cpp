// The Runtime driving an asynchronous device backend (fake_async_backend.hpp: executor threads
// that run the CPU kernels after random delays, so completions arrive out of order, and report
// their own times): the outputs equal the CPU engine's, the run is a valid dataflow execution on
// the devices' times, ready ops are dispatched by the rule, and a failing kernel or copy ends the
// run with one line and leaves the runtime usable. What a GPU backend does on the host is tested
// here without a GPU.
#include <algorithm>
#include <random>

#include <gtest/gtest.h>

#include "engine/runtime.hpp"
#include "engine_support.hpp"
#include "fake_async_backend.hpp"

namespace doppler {
namespace {

using test::FakeAsyncBackend;

// A Runtime over a FakeAsyncBackend for graph g on P devices.
struct FakeRun {
  FakeRun(const Graph& graph, int devices, KernelMode mode, FakeAsyncBackend::Options o,
          CopyMode copies = CopyMode::worker)
      : g(&graph),
        plan(engine_detail::compile_plan(graph, mode, mode == KernelMode::synthetic ? 1e4 : 1.0)) {
    engine_detail::configure_process();
    engine_detail::RuntimeConfig cfg;
    cfg.devices = devices;
    cfg.copies = copies;
    cfg.timeout = 60;
    auto owned = std::make_unique<FakeAsyncBackend>(plan, devices, graph.num_nodes(), o);
    backend = owned.get();
    rt = std::make_unique<engine_detail::Runtime>(graph, plan, cfg, std::move(owned));
  }
  EngineResult run(const Assignment& a, DispatchRule rule) {
    rt->run(a.device_of, rule, a.order, nullptr, rec);
    return engine_detail::to_result(*g, a.device_of, a.devices, rec);
  }
  const Graph* g;
  engine_detail::Plan plan;
  FakeAsyncBackend* backend = nullptr;
  std::unique_ptr<engine_detail::Runtime> rt;
  engine_detail::RunRecord rec;
};

TEST(FakeAsyncBackend, OutputsEqualTheCpuEngineAndRunsAreValidExecutions) {
  std::mt19937_64 rng(21);
  const auto w = test::small_workloads(3);
  for (const auto& x : {w[0], w[1], w[3]}) {  // chainmm, ffnn, llama-layer
    SCOPED_TRACE(x.label);
    for (CopyMode copies : {CopyMode::worker, CopyMode::producer}) {
      FakeRun fake(x.graph, 3, KernelMode::real, {}, copies);
      for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
        const Assignment a = test::random_assignment(x.graph, 3, rng);
        EngineOptions eo;
        eo.devices = 3;
        Engine reference(x.graph, eo);
        reference.run(a, rule);
        const EngineResult r = fake.run(a, rule);
        test::expect_valid_execution(x.graph, a, r, copies);
        for (NodeId v = 0; v < x.graph.num_nodes(); ++v) {
          const auto want = reference.output(v);
          const float* got = fake.rt->host_floats(a.device_of[static_cast<std::size_t>(v)], v);
          for (std::size_t i = 0; i < want.size(); ++i)
            ASSERT_EQ(got[i], want[i]) << "node " << x.graph.label(v) << " element " << i;
        }
      }
    }
  }
}

// Every op's start and finish, and every copy's, are the device's own times.
TEST(FakeAsyncBackend, RecordedTimesAreTheDevicesOwn) {
  std::mt19937_64 rng(22);
  const Graph g = test::small_workloads(2)[1].graph;  // ffnn
  FakeRun fake(g, 2, KernelMode::real, {});
  const Assignment a = test::random_assignment(g, 2, rng);
  const EngineResult r = fake.run(a, DispatchRule::fifo);
  int kernels = 0, copies = 0;
  for (const test::FakeEvent& e : fake.backend->events()) {
    const auto vi = static_cast<std::size_t>(e.v);
    if (e.from < 0) {
      ++kernels;
      EXPECT_EQ(fake.rec.start[vi], e.ran.start) << g.label(e.v);
      EXPECT_EQ(fake.rec.finish[vi], e.ran.finish) << g.label(e.v);
      EXPECT_GE(e.ran.start, e.launched);  // queued first, then run
      continue;
    }
    ++copies;
    const auto t = std::find_if(r.schedule.transfers.begin(), r.schedule.transfers.end(),
                                [&](const auto& x) { return x.src == e.v && x.to == e.to; });
    ASSERT_NE(t, r.schedule.transfers.end());
    EXPECT_EQ(t->start, e.ran.start);
    EXPECT_EQ(t->finish, e.ran.finish);
  }
  EXPECT_EQ(kernels, g.num_nodes());
  EXPECT_EQ(copies, r.copies);
  EXPECT_GT(copies, 0);
}

// The fake really completes out of order: some job launched later finished earlier (on another
// device), so the tests above exercise asynchronous completion, not a lockstep.
TEST(FakeAsyncBackend, CompletionsArriveOutOfLaunchOrder) {
  std::mt19937_64 rng(23);
  const Graph g = test::small_workloads(4)[3].graph;  // llama-layer
  FakeRun fake(g, 4, KernelMode::real, {.seed = 3, .max_delay_seconds = 500e-6});
  fake.run(test::random_assignment(g, 4, rng), DispatchRule::fifo);
  const auto events = fake.backend->events();  // completion order
  int inversions = 0;
  for (std::size_t i = 1; i < events.size(); ++i)
    inversions += events[i].launched < events[i - 1].launched;
  EXPECT_GT(inversions, 0);
}

// One root makes K ops ready at once on its device: they run in the rule's order (fifo: the
// order they became ready, successor id order; priority: the assignment's order), whatever the
// devices' delays.
TEST(FakeAsyncBackend, ReadyOpsAreDispatchedByTheRule) {
  std::mt19937_64 rng(24);
  const test::FanOut f = test::fan_out(12, 2, rng);
  FakeRun fake(f.graph, 2, KernelMode::synthetic, {.seed = 5});
  for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority})
    test::expect_rule_order(f, fake.run(f.assignment, rule).schedule, rule);
}

// A device fault ends the run with one line naming the op and the device's message; the next
// run, without the fault, is complete and right.
TEST(FakeAsyncBackend, AFailingKernelOrCopyEndsTheRunAndTheNextRunWorks) {
  std::mt19937_64 rng(25);
  const Graph g = test::small_workloads(2)[0].graph;  // chainmm
  Assignment a = test::random_assignment(g, 2, rng);
  EngineOptions eo;
  eo.devices = 2;
  Engine reference(g, eo);
  reference.run(a);
  FakeRun fake(g, 2, KernelMode::real, {});
  // A node with a consumer on the other device, so that its output is copied.
  NodeId crossing = -1;
  for (NodeId u = 0; u < g.num_nodes() && crossing < 0; ++u)
    for (NodeId w : g.successors(u))
      if (a.device_of[static_cast<std::size_t>(u)] != a.device_of[static_cast<std::size_t>(w)])
        crossing = u;
  ASSERT_GE(crossing, 0);
  const NodeId last = g.num_nodes() - 1;
  struct Fault {
    FakeAsyncBackend::Options options;
    std::string expect;
  };
  for (const Fault& f :
       {Fault{{.failing_kernel = last}, "kernel of op " + std::to_string(last)},
        Fault{{.failing_copy = crossing}, "copy of op " + std::to_string(crossing)}}) {
    fake.backend->set_options(f.options);
    try {
      fake.run(a, DispatchRule::fifo);
      FAIL() << "the run did not fail: " << f.expect;
    } catch (const EngineError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(f.expect), std::string::npos) << what;
      EXPECT_NE(what.find("fake device fault"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
    fake.backend->set_options({});
    const EngineResult r = fake.run(a, DispatchRule::fifo);
    test::expect_valid_execution(g, a, r);
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto want = reference.output(v);
      const float* got = fake.rt->host_floats(a.device_of[static_cast<std::size_t>(v)], v);
      for (std::size_t i = 0; i < want.size(); ++i) ASSERT_EQ(got[i], want[i]) << g.label(v);
    }
  }
}

// Each device's two workers (compute, incoming copies) attach once, each on its own thread.
TEST(FakeAsyncBackend, EveryWorkerAttachesOnItsOwnThread) {
  const Graph g = test::small_workloads(3)[0].graph;
  FakeRun fake(g, 3, KernelMode::real, {});
  std::mt19937_64 rng(26);
  fake.run(test::random_assignment(g, 3, rng), DispatchRule::fifo);
  // A worker attaches when its thread starts, which may come after a short run's end.
  auto attached = fake.backend->attached();
  for (int i = 0; i < 2000 && attached.size() < 6; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    attached = fake.backend->attached();
  }
  ASSERT_EQ(attached.size(), 6u);
  std::set<std::thread::id> threads;
  for (const auto& [d, t] : attached) threads.insert(t);
  EXPECT_EQ(threads.size(), 6u);
  for (DeviceId d = 0; d < 3; ++d)
    EXPECT_EQ(std::count_if(attached.begin(), attached.end(),
                            [d](const auto& x) { return x.first == d; }),
              2);
}

}  // namespace
}  // namespace doppler
