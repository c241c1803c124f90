#include "doppler/sim/simulator.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "doppler/sim/ready_rule.hpp"
#include "doppler/util/error.hpp"

// Forces inlining of the simulator's hot lambdas (GCC and Clang).
#define DOPPLER_INLINE __attribute__((always_inline))

namespace doppler {

namespace {

using Event = SimWorkspace::Event;

// Order of the events of one instant: op, then aux (deterministic link FIFO order).
bool event_before(const Event& a, const Event& b) {
  return a.op != b.op ? a.op < b.op : a.aux < b.aux;
}

}  // namespace

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
      ref_transfer_[static_cast<std::size_t>(v)] = *g.node(v).transfer_cost;
    }
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
  route_inv_bw_ = dc.time_per_size;
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
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    SimWorkspace ws;
    for (std::size_t i; (i = next.fetch_add(1)) < batch.size();)
      out[i] = run(batch[i], ws, rule, {}, nullptr);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  return out;
}

double Simulator::run(std::span<const DeviceId> dev, SimWorkspace& ws, DispatchRule rule,
                      std::span<const NodeId> order, Schedule* out) const {
  calls_.n.fetch_add(1, std::memory_order_relaxed);
  const bool priority = rule == DispatchRule::priority;
  if (out)
    return priority ? run_impl<true, true>(dev, ws, order, out)
                    : run_impl<true, false>(dev, ws, order, out);
  return priority ? run_impl<false, true>(dev, ws, order, out)
                  : run_impl<false, false>(dev, ws, order, out);
}

template <bool kRecord, bool kPriority>
double Simulator::run_impl(std::span<const DeviceId> dev_span, SimWorkspace& ws,
                           std::span<const NodeId> order, Schedule* out) const {
  const auto n = static_cast<std::size_t>(n_), p = static_cast<std::size_t>(p_);
  if (ws.pending.size() != n || ws.q_begin.size() != p + 1 ||
      ws.link_free.size() != static_cast<std::size_t>(num_links_)) {
    ws.pending.assign(n, 0);
    ws.ready_time.assign(n, 0);
    ws.queue.assign(n, {});
    ws.q_begin.assign(p + 1, 0);
    ws.q_size.assign(p, 0);
    ws.q_head.assign(p, 0);
    ws.free_slots.assign(p, 0);
    ws.is_touched.assign(p, 0);
    ws.touched.assign(p, 0);
    ws.batch.reserve(n + succ_.size() + 1);
    ws.link_free.assign(static_cast<std::size_t>(num_links_), 0);
    ws.dev_stamp.assign(p, 0);
    ws.dev_bytes.assign(p, 0);
    ws.dev_list.reserve(p);
    ws.rank.assign(n, 0);
    ws.stamp = 0;
  }
  // Raw views of the hot arrays.
  const DeviceId* dev = dev_span.data();
  ws.dev = dev;
  const EdgeId* succ_begin = succ_begin_.data();
  const NodeId* succ = succ_.data();
  const double* comp = compute_.data();
  int* pending = ws.pending.data();
  double* ready_time = ws.ready_time.data();
  SimWorkspace::Ready* queue = ws.queue.data();
  int* q_begin = ws.q_begin.data();
  int* q_size = ws.q_size.data();
  int* q_head = ws.q_head.data();
  int* free_slots = ws.free_slots.data();
  char* is_touched = ws.is_touched.data();
  DeviceId* touched = ws.touched.data();
  int* rank = ws.rank.data();
  std::size_t n_touched = 0;
  auto& events = ws.events;

  if constexpr (kPriority) {  // the order must be a permutation of the ops (checked here: O(N))
    std::fill(rank, rank + n, -1);
    for (std::size_t i = 0; i < n; ++i) {
      const NodeId v = order[i];
      if (v < 0 || static_cast<std::size_t>(v) >= n || rank[static_cast<std::size_t>(v)] >= 0)
        throw InputError(fmt::format(
            "dispatch order 'priority': position {} holds {}, {} (the order must list every op "
            "0..{} once)",
            i, v, v < 0 || static_cast<std::size_t>(v) >= n ? "not an op" : "a repeated op",
            n - 1));
      rank[static_cast<std::size_t>(v)] = static_cast<int>(i);
    }
  }

  // Pending inputs per op (skipping excluded ops) and per-device queue segments.
  bool partial = false;
  std::fill(q_size, q_size + p, 0);
  std::fill(q_head, q_head + p, 0);
  std::fill(q_begin, q_begin + p + 1, 0);
  for (std::size_t v = 0; v < n; ++v) {
    if (dev[v] < 0) {
      partial = true;
      continue;
    }
    ++q_begin[static_cast<std::size_t>(dev[v]) + 1];
  }
  for (std::size_t d = 0; d < p; ++d) q_begin[d + 1] += q_begin[d];
  if (!partial) {
    std::copy(indeg_.begin(), indeg_.end(), pending);
  } else {
    std::fill(pending, pending + n, 0);
    for (std::size_t u = 0; u < n; ++u) {
      if (dev[u] < 0) continue;
      for (auto e = succ_begin[u]; e < succ_begin[u + 1]; ++e) ++pending[succ[e]];
    }
  }
  std::copy(slots_.begin(), slots_.end(), free_slots);
  std::fill(ws.link_free.begin(), ws.link_free.end(), 0.0);
  events.clear();

  if constexpr (kRecord) {
    out->unit = platform_.unit();
    out->devices = p_;
    out->device.assign(dev, dev + n);
    out->ready.assign(n, 0);
    out->start.assign(n, 0);
    out->finish.assign(n, 0);
    out->busy.assign(p, 0);
    out->slots = slots_;
    out->transfers.clear();
  }

  // Ready queues. FIFO: ops become ready in time order, so a device queue is an array appended
  // at the tail; ops made ready at the same instant are kept in id order by insertion.
  // Priority: a binary heap on (rank, id).
  const auto less = [](const SimWorkspace::Ready& a, const SimWorkspace::Ready& b) {
    return ready_before(a.key, a.op, b.key, b.op);
  };
  const auto make_ready = [&](NodeId w, double t) DOPPLER_INLINE {
    const auto d = static_cast<std::size_t>(dev[w]);
    ready_time[w] = t;
    const double key = kPriority ? rank[w] : t;
    SimWorkspace::Ready* q = queue + q_begin[d] + q_head[d];
    auto i = static_cast<std::size_t>(q_size[d]++);
    if constexpr (kPriority) {
      const SimWorkspace::Ready item{key, w};
      while (i > 0) {
        const std::size_t parent = (i - 1) / 2;
        if (!less(item, q[parent])) break;
        q[i] = q[parent];
        i = parent;
      }
    } else {
      // Keys arrive in time order: only ops made ready at the same instant move (by id).
      while (i > 0 && ready_before(key, w, q[i - 1].key, q[i - 1].op)) {
        q[i] = q[i - 1];
        --i;
      }
    }
    q[i] = {key, w};
    if (!is_touched[d]) {
      is_touched[d] = 1;
      touched[n_touched++] = static_cast<DeviceId>(d);
    }
  };
  const auto pop_ready = [&](std::size_t d) DOPPLER_INLINE {
    SimWorkspace::Ready* q = queue + q_begin[d] + q_head[d];
    const NodeId top = q[0].op;
    const auto size = static_cast<std::size_t>(--q_size[d]);
    if constexpr (!kPriority) {
      ++q_head[d];
      return top;
    }
    const SimWorkspace::Ready last = q[size];
    std::size_t i = 0;
    while (true) {
      std::size_t c = 2 * i + 1;
      if (c >= size) break;
      if (c + 1 < size && less(q[c + 1], q[c])) ++c;
      if (!less(q[c], last)) break;
      q[i] = q[c];
      i = c;
    }
    if (size > 0) q[i] = last;
    return top;
  };
  const auto touch = [&](std::size_t d) {
    if (!is_touched[d]) {
      is_touched[d] = 1;
      touched[n_touched++] = static_cast<DeviceId>(d);
    }
  };
  double makespan = 0;
  // Every touched device with a free slot starts its best ready ops at time t.
  const auto dispatch = [&](double t) DOPPLER_INLINE {
    for (std::size_t k = 0; k < n_touched; ++k) {
      const auto d = static_cast<std::size_t>(touched[k]);
      is_touched[d] = 0;
      while (free_slots[d] > 0 && q_size[d] > 0) {
        const NodeId v = pop_ready(d);
        const double c = homogeneous_ ? comp[v] : comp[static_cast<std::size_t>(v) * p + d];
        const double f = t + c;
        --free_slots[d];
        events.push(f, {v, -1});
        makespan = std::max(makespan, f);
        if constexpr (kRecord) {
          out->ready[static_cast<std::size_t>(v)] = ready_time[v];
          out->start[static_cast<std::size_t>(v)] = t;
          out->finish[static_cast<std::size_t>(v)] = f;
          out->busy[d] += c;
        }
      }
    }
    n_touched = 0;
  };
  // Applies one event at time t.
  const auto apply = [&](const Event& ev, double t) DOPPLER_INLINE {
    const auto v = static_cast<std::size_t>(ev.op);
    const DeviceId src = dev[v];
    const auto e0 = static_cast<std::size_t>(succ_begin[v]),
               e1 = static_cast<std::size_t>(succ_begin[v + 1]);
    if (ev.aux == -1) {  // op finished: free its slot, deliver locally, send remotely
      ++free_slots[src];
      touch(static_cast<std::size_t>(src));
      bool remote = false;
      for (std::size_t e = e0; e < e1; ++e) {
        const NodeId w = succ[e];
        const DeviceId dw = dev[w];
        if (dw == src) {
          if (--pending[w] == 0) make_ready(w, t);
        } else {
          remote |= dw >= 0;
        }
      }
      if (remote) send(ev.op, src, t, ws, out);
    } else if (ev.aux == -2) {  // reference model: output reached every other device
      for (std::size_t e = e0; e < e1; ++e) {
        const NodeId w = succ[e];
        const DeviceId dw = dev[w];
        if (dw >= 0 && dw != src && --pending[w] == 0) make_ready(w, t);
      }
    } else {  // hardware model: output reached device aux
      for (std::size_t e = e0; e < e1; ++e) {
        const NodeId w = succ[e];
        if (dev[w] == ev.aux && --pending[w] == 0) make_ready(w, t);
      }
    }
  };

  for (std::size_t v = 0; v < n; ++v)
    if (dev[v] >= 0 && pending[v] == 0) make_ready(static_cast<NodeId>(v), 0.0);
  dispatch(0.0);

  while (!events.empty()) {
    const double t = events.top_time();
    if (reference_) {
      // Order within an instant does not matter: every event of the instant is applied before
      // devices choose, and ready queues order same-instant ops by id.
      while (!events.empty() && events.top_time() == t) apply(events.pop(), t);
    } else {
      // Link requests are served in request order: apply an instant's events sorted by (op, aux).
      while (!events.empty() && events.top_time() == t) {
        ws.batch.clear();
        while (!events.empty() && events.top_time() == t) ws.batch.push_back(events.pop());
        std::sort(ws.batch.begin(), ws.batch.end(), event_before);
        for (const Event& ev : ws.batch) apply(ev, t);
      }
    }
    dispatch(t);
  }
  if constexpr (kRecord) out->makespan = makespan;
  return makespan;
}

void Simulator::send(NodeId u, DeviceId src, double t, SimWorkspace& ws, Schedule* out) const {
  const auto p = static_cast<std::size_t>(p_);
  const auto e0 = static_cast<std::size_t>(succ_begin_[static_cast<std::size_t>(u)]);
  const auto e1 = static_cast<std::size_t>(succ_begin_[static_cast<std::size_t>(u) + 1]);
  const DeviceId* dev = ws.dev;
  if (reference_) {
    const double f = t + ref_transfer_[static_cast<std::size_t>(u)];
    ws.events.push(f, {u, -2});
    if (out) {
      const int stamp = ++ws.stamp;
      for (std::size_t e = e0; e < e1; ++e) {
        const DeviceId dw = dev[succ_[e]];
        if (dw < 0 || dw == src || ws.dev_stamp[static_cast<std::size_t>(dw)] == stamp) continue;
        ws.dev_stamp[static_cast<std::size_t>(dw)] = stamp;
        out->transfers.push_back({u, src, dw, 0.0, t, f, {}});
        ++out->cross_transfers;
      }
    }
    return;
  }
  // Hardware model: one transfer per destination device, carrying the largest edge.
  const int stamp = ++ws.stamp;
  ws.dev_list.clear();
  for (std::size_t e = e0; e < e1; ++e) {
    const DeviceId dw = dev[succ_[e]];
    if (dw < 0 || dw == src) continue;
    const auto du = static_cast<std::size_t>(dw);
    if (ws.dev_stamp[du] != stamp) {
      ws.dev_stamp[du] = stamp;
      ws.dev_bytes[du] = edge_bytes_[e];
      ws.dev_list.push_back(dw);
    } else {
      ws.dev_bytes[du] = std::max(ws.dev_bytes[du], edge_bytes_[e]);
    }
  }
  std::sort(ws.dev_list.begin(), ws.dev_list.end());
  for (const DeviceId dd : ws.dev_list) {
    const auto k = static_cast<std::size_t>(src) * p + static_cast<std::size_t>(dd);
    const auto r0 = static_cast<std::size_t>(route_begin_[k]),
               r1 = static_cast<std::size_t>(route_begin_[k + 1]);
    double start = t;
    for (std::size_t i = r0; i < r1; ++i)
      start = std::max(start, ws.link_free[static_cast<std::size_t>(route_links_[i])]);
    const double bytes = ws.dev_bytes[static_cast<std::size_t>(dd)];
    const double f = start + route_lat_[k] + bytes * route_inv_bw_[k];
    for (std::size_t i = r0; i < r1; ++i)
      ws.link_free[static_cast<std::size_t>(route_links_[i])] = f;
    ws.events.push(f, {u, dd});
    if (out) {
      out->transfers.push_back(
          {u, src, dd, bytes, start, f,
           std::vector<int>(route_links_.begin() + static_cast<std::ptrdiff_t>(r0),
                            route_links_.begin() + static_cast<std::ptrdiff_t>(r1))});
      ++out->cross_transfers;
      out->cross_bytes += bytes;
    }
  }
}

}  // namespace doppler
