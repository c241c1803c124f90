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
#include "doppler/graph/graph_builder.hpp"

namespace doppler {
namespace {

void expect_disjoint(std::vector<std::pair<double, double>> iv, const std::string& what) {
  std::sort(iv.begin(), iv.end());
  for (std::size_t k = 1; k < iv.size(); ++k)
    EXPECT_LE(iv[k - 1].second, iv[k].first) << what << " runs two things at once";
}

void check(const Graph& g, const Assignment& a, const EngineResult& r,
           CopyMode mode = CopyMode::worker) {
  const Schedule& s = r.schedule;
  const int n = g.num_nodes();
  ASSERT_EQ(s.unit, CostUnit::seconds);
  ASSERT_EQ(static_cast<int>(s.start.size()), n);
  double last = 0;
  std::set<std::pair<NodeId, DeviceId>> needed;
  for (NodeId v = 0; v < n; ++v) {
    const auto i = static_cast<std::size_t>(v);
    EXPECT_EQ(s.device[i], a.device_of[i]);
    EXPECT_GE(s.ready[i], 0);
    EXPECT_GE(s.start[i], s.ready[i]);
    EXPECT_GE(s.finish[i], s.start[i]);
    last = std::max(last, s.finish[i]);
    for (NodeId u : g.predecessors(v)) {
      const auto ui = static_cast<std::size_t>(u);
      if (s.device[ui] == s.device[i]) {
        EXPECT_GE(s.ready[i], s.finish[ui]) << "op " << v << " ready before local input " << u;
        continue;
      }
      needed.insert({u, s.device[i]});
      const auto t = std::find_if(s.transfers.begin(), s.transfers.end(),
                                  [&](const auto& x) { return x.src == u && x.to == s.device[i]; });
      ASSERT_NE(t, s.transfers.end()) << "no copy of " << u << " to device " << s.device[i];
      EXPECT_EQ(t->from, s.device[ui]);
      EXPECT_GE(t->start, s.finish[ui]);
      EXPECT_LE(t->finish, s.ready[i]) << "op " << v << " ready before its copy arrived";
    }
  }
  EXPECT_DOUBLE_EQ(s.makespan, last);
  EXPECT_DOUBLE_EQ(r.makespan_seconds, last);
  EXPECT_EQ(s.transfers.size(), needed.size()) << "one copy per (producer, destination)";
  EXPECT_EQ(r.copies, static_cast<int>(needed.size()));
  double bytes = 0;
  for (const auto& t : s.transfers) {
    bytes += t.bytes;
    ASSERT_EQ(t.links.size(), 1u);
    EXPECT_EQ(t.links[0], t.to);
  }
  EXPECT_DOUBLE_EQ(r.bytes_copied, bytes);
  for (DeviceId d = 0; d < s.devices; ++d) {
    std::vector<std::pair<double, double>> ops, copies;
    double busy = 0;
    for (NodeId v = 0; v < n; ++v)
      if (s.device[static_cast<std::size_t>(v)] == d) {
        ops.push_back(
            {s.start[static_cast<std::size_t>(v)], s.finish[static_cast<std::size_t>(v)]});
        busy += ops.back().second - ops.back().first;
      }
    if (mode == CopyMode::producer) {
      // The producer's compute worker copies right after the op: its ops and its outgoing
      // copies never overlap.
      for (const auto& t : s.transfers)
        if (t.from == d) ops.push_back({t.start, t.finish});
    } else {
      for (const auto& t : s.transfers)
        if (t.to == d) copies.push_back({t.start, t.finish});
    }
    expect_disjoint(ops, "device " + std::to_string(d));
    expect_disjoint(copies, "copy worker " + std::to_string(d));
    EXPECT_NEAR(s.busy[static_cast<std::size_t>(d)], busy, 1e-12);
  }
}

TEST(EngineSchedule, RealKernelRunsAreValidDataflowExecutions) {
  std::mt19937_64 rng(3);
  const auto w = test::small_workloads(4);
  for (const auto& x : {w[1], w[5]}) {  // ffnn, llama-layer
    EngineOptions o;
    o.devices = 4;
    Engine e(x.graph, o);
    for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
      const Assignment a = test::random_assignment(x.graph, 4, rng);
      check(x.graph, a, e.run(a, rule));
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
      check(x.graph, a, r, CopyMode::producer);
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
    check(g, a, e.run(a, i % 2 ? DispatchRule::priority : DispatchRule::fifo));
  }
}

// A root whose finish makes K ops ready at once on its device: the worker must then run them
// in the dispatch rule's order (fifo: the order they became ready, i.e. successor id order;
// priority: the assignment's order).
TEST(EngineSchedule, DispatchRuleOrdersReadyOps) {
  GraphBuilder b;
  const int k = 12;
  for (int i = 0; i <= k; ++i) {
    Node n;
    n.compute_cost = 1;
    n.transfer_cost = 1;
    b.add_node(n);
  }
  for (int i = 1; i <= k; ++i) b.add_edge(0, i);
  const Graph g = b.build();
  EngineOptions o;
  o.devices = 2;
  o.synthetic_scale = 1e4;
  Engine e(g, o);
  std::mt19937_64 rng(9);
  Assignment a = test::random_assignment(g, 1, rng);
  std::vector<NodeId> order = {0};
  for (NodeId v = 1; v <= k; ++v) order.push_back(v);
  std::shuffle(order.begin() + 1, order.end(), rng);
  a.order = order;
  for (DispatchRule rule : {DispatchRule::fifo, DispatchRule::priority}) {
    const Schedule s = e.run(a, rule).schedule;
    std::vector<NodeId> by_start(order.begin() + 1, order.end());
    std::sort(by_start.begin(), by_start.end(), [&](NodeId x, NodeId y) {
      return s.start[static_cast<std::size_t>(x)] < s.start[static_cast<std::size_t>(y)];
    });
    std::vector<NodeId> want(order.begin() + 1, order.end());
    if (rule == DispatchRule::fifo) std::sort(want.begin(), want.end());
    EXPECT_EQ(by_start, want) << (rule == DispatchRule::fifo ? "fifo" : "priority");
  }
}

}  // namespace
}  // namespace doppler
