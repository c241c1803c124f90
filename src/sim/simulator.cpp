#include "doppler/sim/simulator.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "sim_run.hpp"

#include "doppler/util/error.hpp"
#include "doppler/util/parallel_for.hpp"

namespace doppler {

double Schedule::utilization(DeviceId d) const {
  if (makespan <= 0) return 0;
  const auto i = static_cast<std::size_t>(d);
  return busy[i] / (makespan * (i < slots.size() ? slots[i] : 1));
}

DispatchRule parse_dispatch_rule(const std::string& name) {
  if (name == "fifo") return DispatchRule::fifo;
  if (name == "priority") return DispatchRule::priority;
  throw InputError("unknown dispatch order '" + name + "' (expected fifo or priority)");
}

Simulator::Simulator(const Graph& g, const Platform& platform)
    : graph_(&g), platform_(platform), reference_(platform.is_reference()) {
  n_ = g.num_nodes();
  p_ = platform.devices();
  const auto n = static_cast<std::size_t>(n_), p = static_cast<std::size_t>(p_);
  succ_begin_.resize(n + 1);
  for (NodeId v = 0; v <= n_; ++v)
    succ_begin_[static_cast<std::size_t>(v)] = v < n_ ? g.out_edge_begin(v) : g.num_edges();
  succ_.resize(static_cast<std::size_t>(g.num_edges()));
  edge_bytes_.resize(succ_.size());
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    succ_[static_cast<std::size_t>(e)] = g.edge(e).dst;
    edge_bytes_[static_cast<std::size_t>(e)] = g.edge_bytes(e);
  }
  indeg_.resize(n);
  for (NodeId v = 0; v < n_; ++v)
    indeg_[static_cast<std::size_t>(v)] = static_cast<int>(g.predecessors(v).size());

  const CostModel cost = platform.cost_model(g);
  slots_.resize(p);
  for (int d = 0; d < p_; ++d) slots_[static_cast<std::size_t>(d)] = cost.slots(d);
  if (reference_) {
    compute_.resize(n);
    ref_transfer_.resize(n);
    for (NodeId v = 0; v < n_; ++v) {
      compute_[static_cast<std::size_t>(v)] = *g.node(v).compute_cost;
      ref_transfer_[static_cast<std::size_t>(v)] = g.node(v).transfer_cost.value_or(0.0);
    }
    if (g.has_edge_transfer_costs()) {  // classic model: every edge its own cost
      ref_edge_transfer_.resize(succ_.size());
      for (EdgeId e = 0; e < g.num_edges(); ++e)
        ref_edge_transfer_[static_cast<std::size_t>(e)] = g.edge_transfer_cost(e);
    }
    compute_tails(g);
    return;
  }
  for (int d = 1; d < p_; ++d)
    for (NodeId v = 0; v < n_ && homogeneous_; ++v)
      homogeneous_ = cost.compute(v, d) == cost.compute(v, 0);
  compute_.resize(homogeneous_ ? n : n * p);
  for (NodeId v = 0; v < n_; ++v)
    for (int d = 0; d < (homogeneous_ ? 1 : p_); ++d)
      compute_[static_cast<std::size_t>(v) * (homogeneous_ ? 1 : p) + static_cast<std::size_t>(d)] =
          cost.compute(v, d);
  const DeviceCosts& dc = cost.device_costs();
  route_lat_ = dc.latency;
  route_delay_ = dc.delay.empty() ? std::vector<double>(dc.latency.size(), 0.0) : dc.delay;
  for (std::size_t k = 0; k < route_lat_.size(); ++k) route_lat_[k] -= route_delay_[k];
  route_inv_bw_ = dc.time_per_size;
  copy_share_ = dc.copy_share.empty() ? std::vector<double>(p, 0.0) : dc.copy_share;
  for (double x : copy_share_) copies_charged_ = copies_charged_ || x > 0;
  contention_ = dc.contention.empty() ? std::vector<double>(p, 0.0) : dc.contention;
  for (double x : contention_) contended_ = contended_ || (x > 0 && p_ > 1);
  const HardwareProfile& hw = platform.profile();
  num_links_ = static_cast<int>(hw.links.size());
  route_begin_.assign(p * p + 1, 0);
  for (int s = 0; s < p_; ++s)
    for (int d = 0; d < p_; ++d) {
      const auto k = static_cast<std::size_t>(s) * p + static_cast<std::size_t>(d);
      if (s != d)
        for (int l : hw.route(s, d)) route_links_.push_back(l);
      route_begin_[k + 1] = static_cast<int>(route_links_.size());
    }
  compute_tails(g);
}

void Simulator::compute_tails(const Graph& g) {
  const auto p = static_cast<std::size_t>(homogeneous_ || reference_ ? 1 : p_);
  std::vector<double> fastest(static_cast<std::size_t>(n_));
  for (std::size_t v = 0; v < fastest.size(); ++v)
    fastest[v] = *std::min_element(compute_.begin() + static_cast<std::ptrdiff_t>(v * p),
                                   compute_.begin() + static_cast<std::ptrdiff_t>((v + 1) * p));
  tail_.assign(static_cast<std::size_t>(n_), 0.0);
  const auto& topo = g.topo_order();
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    for (NodeId w : g.successors(*it))
      tail_[v] = std::max(
          tail_[v], fastest[static_cast<std::size_t>(w)] + tail_[static_cast<std::size_t>(w)]);
  }
}

void Simulator::check(std::span<const DeviceId> device_of, DispatchRule rule,
                      std::span<const NodeId> order) const {
  if (static_cast<int>(device_of.size()) != n_)
    throw InputError(
        fmt::format("assignment has {} entries, the graph has {} nodes", device_of.size(), n_));
  for (std::size_t v = 0; v < device_of.size(); ++v)
    if (device_of[v] < -1 || device_of[v] >= p_)
      throw InputError(
          fmt::format("node {} is on device {}, outside 0..{}", v, device_of[v], p_ - 1));
  if (rule == DispatchRule::priority && static_cast<int>(order.size()) != n_)
    throw InputError(fmt::format("dispatch order 'priority' needs an order of all {} ops, got {}",
                                 n_, order.size()));
}

double Simulator::makespan(std::span<const DeviceId> device_of, SimWorkspace& ws, DispatchRule rule,
                           std::span<const NodeId> order) const {
  check(device_of, rule, order);
  return run(device_of, ws, rule, order, nullptr);
}

double Simulator::makespan_below(std::span<const DeviceId> device_of, SimWorkspace& ws,
                                 double cutoff) const {
  check(device_of, DispatchRule::fifo, {});
  calls_.n.fetch_add(1, std::memory_order_relaxed);
  return detail::SimRun<false, false>(*this, device_of, ws, {}, nullptr, cutoff).run();
}

double Simulator::makespan(const Assignment& a, DispatchRule rule) const {
  if (a.devices != p_)
    throw InputError(
        fmt::format("assignment is for {} devices, the simulator models {}", a.devices, p_));
  return makespan(a.device_of, own_, rule, a.order);
}

Schedule Simulator::simulate(const Assignment& a, DispatchRule rule) const {
  if (a.devices != p_)
    throw InputError(
        fmt::format("assignment is for {} devices, the simulator models {}", a.devices, p_));
  check(a.device_of, rule, a.order);
  Schedule s;
  SimWorkspace ws;
  run(a.device_of, ws, rule, a.order, &s);
  std::stable_sort(
      s.transfers.begin(), s.transfers.end(),
      [](const TransferRecord& x, const TransferRecord& y) { return x.start < y.start; });
  if (!reference_)
    for (const LinkSpec& l : platform_.profile().links) s.link_names.push_back(l.name);
  return s;
}

std::vector<double> Simulator::makespans(const std::vector<std::vector<DeviceId>>& batch,
                                         int threads, DispatchRule rule) const {
  for (const auto& a : batch) check(a, rule, {});
  std::vector<double> out(batch.size());
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(batch.size()));
  // One task per thread, each with its own workspace, drawing assignments from a shared counter.
  std::atomic<std::size_t> next{0};
  parallel_for(threads, threads, [&](int) {
    SimWorkspace ws;
    for (std::size_t i; (i = next.fetch_add(1)) < batch.size();)
      out[i] = run(batch[i], ws, rule, {}, nullptr);
  });
  return out;
}

double Simulator::run(std::span<const DeviceId> dev, SimWorkspace& ws, DispatchRule rule,
                      std::span<const NodeId> order, Schedule* out) const {
  calls_.n.fetch_add(1, std::memory_order_relaxed);
  const bool priority = rule == DispatchRule::priority;
  if (out)
    return priority ? detail::SimRun<true, true>(*this, dev, ws, order, out).run()
                    : detail::SimRun<true, false>(*this, dev, ws, order, out).run();
  return priority ? detail::SimRun<false, true>(*this, dev, ws, order, out).run()
                  : detail::SimRun<false, false>(*this, dev, ws, order, out).run();
}

}  // namespace doppler
