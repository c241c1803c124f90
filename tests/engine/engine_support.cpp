#include "engine_support.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <numeric>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler::test {

namespace {

Graph make(const std::string& name, std::map<std::string, std::string> params, int devices,
           bool training) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.dtype = "f32";
  s.devices = devices;
  s.training = training;
  return workloads::generate_workload(s);
}

}  // namespace

std::vector<SmallWorkload> small_workloads(int devices) {
  const std::map<std::string, std::string> llama = {
      {"dim", "64"}, {"heads", "4"}, {"ffn", "96"}, {"seq", "32"}};
  auto layer = llama;
  layer["vocab"] = "100";
  const std::map<std::string, std::string> ffnn = {
      {"batch", "64"}, {"dim", "16"}, {"hidden", "64"}};
  std::vector<SmallWorkload> w;
  w.push_back({"chainmm", make("chainmm", {{"n", "64"}}, devices, false)});
  w.push_back({"ffnn", make("ffnn", ffnn, devices, false)});
  w.push_back({"ffnn-training", make("ffnn", ffnn, devices, true)});
  w.push_back({"llama-block", make("llama-block", llama, devices, false)});
  w.push_back({"llama-block-training", make("llama-block", llama, devices, true)});
  w.push_back({"llama-layer", make("llama-layer", layer, devices, false)});
  return w;
}

Assignment single_device(const Graph& g, int devices) {
  Assignment a;
  a.devices = devices;
  a.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  return a;
}

Assignment random_assignment(const Graph& g, int devices, std::mt19937_64& rng) {
  Assignment a;
  a.devices = devices;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    a.device_of.push_back(static_cast<DeviceId>(rng() % static_cast<unsigned>(devices)));
  a.order.resize(static_cast<std::size_t>(g.num_nodes()));
  std::iota(a.order.begin(), a.order.end(), 0);
  std::shuffle(a.order.begin(), a.order.end(), rng);
  return a;
}

std::string compile_error(const Graph& g) {
  try {
    Engine e(g, {});
  } catch (const InputError& err) {
    return err.what();
  }
  return "no error";
}

std::vector<std::vector<float>> all_outputs(const Engine& e) {
  std::vector<std::vector<float>> out;
  for (NodeId v = 0; v < e.graph().num_nodes(); ++v) {
    const auto s = e.output(v);
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

int thread_count_settled(int want, double patience_seconds) {
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(patience_seconds));
  int n = thread_count();
  while (n > want && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    n = thread_count();
  }
  return n;
}

namespace {

void expect_disjoint(std::vector<std::pair<double, double>> iv, const std::string& what) {
  std::sort(iv.begin(), iv.end());
  for (std::size_t k = 1; k < iv.size(); ++k)
    EXPECT_LE(iv[k - 1].second, iv[k].first) << what << " runs two things at once";
}

}  // namespace

void expect_valid_execution(const Graph& g, const Assignment& a, const EngineResult& r,
                            CopyMode mode) {
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

FanOut fan_out(int k, int devices, std::mt19937_64& rng) {
  GraphBuilder b;
  for (int i = 0; i <= k; ++i) {
    Node n;
    n.compute_cost = 1;
    n.transfer_cost = 1;
    b.add_node(n);
  }
  for (int i = 1; i <= k; ++i) b.add_edge(0, i);
  FanOut f{b.build(), {}};
  f.assignment = random_assignment(f.graph, 1, rng);
  f.assignment.devices = devices;
  std::vector<NodeId> order = {0};
  for (NodeId v = 1; v <= k; ++v) order.push_back(v);
  std::shuffle(order.begin() + 1, order.end(), rng);
  f.assignment.order = order;
  return f;
}

void expect_rule_order(const FanOut& f, const Schedule& s, DispatchRule rule) {
  const std::vector<NodeId>& order = f.assignment.order;
  std::vector<NodeId> by_start(order.begin() + 1, order.end());
  std::sort(by_start.begin(), by_start.end(), [&](NodeId x, NodeId y) {
    return s.start[static_cast<std::size_t>(x)] < s.start[static_cast<std::size_t>(y)];
  });
  std::vector<NodeId> want(order.begin() + 1, order.end());
  if (rule == DispatchRule::fifo) std::sort(want.begin(), want.end());
  EXPECT_EQ(by_start, want) << (rule == DispatchRule::fifo ? "fifo" : "priority");
}

}  // namespace doppler::test
