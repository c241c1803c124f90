// Lower bounds for the optimal placer. Every bound here relaxes the simulator to the classic
// scheduling model: an op runs on its device for its compute time, no earlier than each input's
// arrival (the producer's finish, plus the edge's uncontended transfer time when the devices
// differ), at most `slots` ops at a time per device. The simulator's schedule of any complete
// assignment is feasible in that model (work conservation, FIFO dispatch and link contention
// only add waiting; a hardware transfer carries at least the edge's bytes and lasts at least
// latency + bytes / bandwidth of its route), so a bound on every feasible schedule of every
// completion bounds the simulated makespan too. We never simulate a partial assignment as a
// bound: under a work-conserving FIFO rule, adding ops can make some op *earlier* (a delayed
// input reorders a device queue), so a prefix's simulated makespan can exceed the optimum.
//
// The assigned ops form a set closed under predecessors (a topological prefix), so an
// unassigned op has only unassigned successors. Bounds:
//  1. heads: head(v) / eft(v) bound v's start / finish. On a device d, v starts after every
//     remote input arrives (eft(u) + the transfer, exact when u is assigned, the least over
//     source devices otherwise) and after every input on d finished, and the inputs on d ran
//     one after another on d's slots (start_on). Inputs assigned to d are local, assigned
//     elsewhere remote, unassigned either: the least bound over the choices. Assigned v uses
//     its device; unassigned v takes the least over the devices it could use.
//  2. tails: tail(v) is a lower bound on the time from v's finish to the makespan, the mirror
//     of heads (tail_assigned): successors on v's device start after v finishes and run one
//     after another on its slots, each followed by its own tail (serial_tail); the others pay
//     the transfer first (transfer + compute(w) + tail(w)). Successors assigned to v's device
//     are local, assigned elsewhere remote, unassigned either: the least bound over the
//     choices. An unassigned op has its static tail: the same bound with every successor
//     unassigned, the least over the devices v could use. Critical path bound: max over v of
//     eft(v) + tail(v).
//  3. per device d (s slots): for every subset S of the ops assigned to d, the ops of S run
//     within [min head, makespan - min tail], so makespan >= min head(S) + work(S) / s +
//     min tail(S); we take the best S among {head >= h, tail >= q} for all thresholds h, q.
//  4. all devices: the same head + work + tail bound over every op, assigned or not, on the
//     total slot count (an unassigned op counts its minimum compute, its head is the earliest
//     start over its devices, its tail the static one). With h = q = 0 this is total work /
//     total slots. The search leaves it out (it costs half the time and never pruned in the
//     benchmark); optimal_lower_bound() keeps it.
// The forward pass is incremental (operator()): heads at positions before the first changed
// device of the branch order are kept, since they depend only on earlier positions.
#include "optimal_bounds.hpp"

#include <algorithm>
#include <limits>

namespace doppler::detail {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

PartialBound::PartialBound(const Problem& problem, std::span<const NodeId> order, bool all_devices)
    : cost_(&problem.cost()), all_devices_(all_devices) {
  const Graph& g = problem.graph();
  n_ = g.num_nodes();
  p_ = problem.devices();
  uniform_ = cost_->uniform();
  if (order.empty())
    topo_ = g.topo_order();
  else
    topo_.assign(order.begin(), order.end());
  const auto n = static_cast<std::size_t>(n_), p = static_cast<std::size_t>(p_);
  pred_begin_.assign(n + 1, 0);
  succ_begin_.assign(n + 1, 0);
  for (NodeId v = 0; v < n_; ++v) {
    for (EdgeId e : g.in_edges(v)) {
      pred_src_.push_back(g.edge(e).src);
      pred_edge_.push_back(e);
    }
    for (EdgeId e = g.out_edge_begin(v); e < (v + 1 < n_ ? g.out_edge_begin(v + 1) : g.num_edges());
         ++e) {
      succ_dst_.push_back(g.edge(e).dst);
      succ_edge_.push_back(e);
    }
    pred_begin_[static_cast<std::size_t>(v) + 1] = static_cast<int>(pred_src_.size());
    succ_begin_[static_cast<std::size_t>(v) + 1] = static_cast<int>(succ_dst_.size());
  }
  comp_.resize(n * p);
  cmin_.assign(n, kInf);
  for (NodeId v = 0; v < n_; ++v)
    for (DeviceId d = 0; d < p_; ++d) {
      const double c = cost_->compute(v, d);
      comp_[static_cast<std::size_t>(v) * p + static_cast<std::size_t>(d)] = c;
      cmin_[static_cast<std::size_t>(v)] = std::min(cmin_[static_cast<std::size_t>(v)], c);
    }
  for (DeviceId d = 0; d < p_; ++d) {
    slots_.push_back(cost_->slots(d));
    total_slots_ += slots_.back();
  }
  // Static tails (no op assigned): the fan-out bound of tail_assigned() on the device v takes,
  // the least over the devices (under a uniform model every device gives the same).
  static_tail_.assign(n, 0);
  const std::vector<DeviceId> none(n, -1);
  for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    double t = kInf;
    for (DeviceId d = 0; d < (uniform_ ? 1 : p_); ++d) t = std::min(t, tail_assigned(*it, d, none));
    static_tail_[v] = t;
  }
  eft_.assign(n, 0);
  head_.assign(n, 0);
  tail_.assign(n, 0);
  seen_.assign(n, -2);
  per_device_.resize(p + 1);  // the last one collects every op for all_devices()
}

double PartialBound::operator()(std::span<const DeviceId> dev, double cutoff) {
  std::size_t from = 0;
  while (from < topo_.size() && seen_[from] == dev[static_cast<std::size_t>(topo_[from])]) ++from;
  forward(dev, from);
  backward(dev);
  const double cp = critical_path();
  if (cp >= cutoff) return cp;
  const double lb = std::max(cp, device_bounds(dev));
  return all_devices_ ? std::max(lb, all_devices(dev)) : lb;
}

// Lower bound on the start of v on device d (-1: a device no assigned input uses, uniform
// model only). Inputs on d (assigned there, or unassigned and chosen local) finish one after
// another on d's slots before v starts; the others arrive after a transfer. An unassigned input
// may be either, so we take the least bound over local sets; with inputs sorted by remote
// arrival, the best local set for a given latest remote arrival m holds every input arriving
// later than m, so prefixes of that order cover every case.
double PartialBound::start_on(NodeId v, DeviceId d, std::span<const DeviceId> dev) {
  const auto vu = static_cast<std::size_t>(v);
  double fixed = 0;  // latest arrival of the inputs that are remote for sure
  local_.clear();
  optional_.clear();
  for (int i = pred_begin_[vu]; i < pred_begin_[vu + 1]; ++i) {
    const auto u = static_cast<std::size_t>(pred_src_[static_cast<std::size_t>(i)]);
    const EdgeId e = pred_edge_[static_cast<std::size_t>(i)];
    const DeviceId du = dev[u];
    if (du >= 0 && du == d) {
      local_.push_back({head_[u], compute(static_cast<NodeId>(u), d), eft_[u]});
    } else if (du >= 0) {
      fixed = std::max(fixed, eft_[u] + (d < 0 ? cost_->size(e) : cost_->transfer(e, du, d)));
    } else {
      const double work = d < 0 ? cmin_[u] : compute(static_cast<NodeId>(u), d);
      optional_.push_back({head_[u], work, eft_[u], eft_[u] + remote_transfer(e, d)});
    }
  }
  std::sort(optional_.begin(), optional_.end(),
            [](const Input& x, const Input& y) { return x.arrive > y.arrive; });
  const int slots = d < 0 ? 1 : slots_[static_cast<std::size_t>(d)];
  double best = kInf;
  for (std::size_t j = 0;; ++j) {  // local: the first j optional inputs
    const double remote = j < optional_.size() ? optional_[j].arrive : 0;
    best = std::min(best, std::max({fixed, remote, serial(local_, slots)}));
    if (j == optional_.size()) break;
    local_.push_back({optional_[j].head, optional_[j].work, optional_[j].finish});
  }
  return best;
}

// Least time over every device for an input of edge e to reach d from elsewhere.
double PartialBound::remote_transfer(EdgeId e, DeviceId d) const {
  if (p_ == 1) return kInf;
  if (d < 0 || uniform_) return cost_->size(e);
  double best = kInf;
  for (DeviceId s = 0; s < p_; ++s)
    if (s != d) best = std::min(best, cost_->transfer(e, s, d));
  return best;
}

// Lower bound on when ops `ops` (all on one device of `slots` slots) have all finished.
double PartialBound::serial(std::vector<Item>& ops, int slots) {
  double lb = 0;
  for (const Item& o : ops) {
    lb = std::max(lb, o.tail);  // here `tail` holds the op's earliest finish
    double work = 0;
    for (const Item& x : ops)
      if (x.head >= o.head) work += x.work;
    lb = std::max(lb, o.head + work / slots);
  }
  return lb;
}

// Earliest finish of unassigned v over every device it could take. Under a uniform model only
// the devices of assigned inputs and one other device (all others alike) need a look.
double PartialBound::finish_unassigned(NodeId v, std::span<const DeviceId> dev) {
  const auto vu = static_cast<std::size_t>(v);
  double best = kInf;
  head_[vu] = kInf;
  const auto consider = [&](DeviceId d) {
    const double s = start_on(v, d, dev);
    head_[vu] = std::min(head_[vu], s);
    best = std::min(best, s + (d < 0 ? cmin_[vu] : compute(v, d)));
  };
  if (!uniform_) {
    for (DeviceId d = 0; d < p_; ++d) consider(d);
    return best;
  }
  // A device without assigned inputs (-1) may not exist when every device holds one; an extra
  // option only lowers the min, so the bound stays valid.
  consider(-1);
  for (int i = pred_begin_[vu]; i < pred_begin_[vu + 1]; ++i) {
    const DeviceId du = dev[static_cast<std::size_t>(pred_src_[static_cast<std::size_t>(i)])];
    if (du >= 0) consider(du);
  }
  return best;
}

// Heads and earliest finishes of the ops at positions from.. of topo_ (the earlier ones are
// those of the previous call, with the same devices up to there).
void PartialBound::forward(std::span<const DeviceId> dev, std::size_t from) {
  for (std::size_t i = from; i < topo_.size(); ++i) {
    const NodeId v = topo_[i];
    const auto vu = static_cast<std::size_t>(v);
    const DeviceId d = dev[vu];
    seen_[i] = d;
    if (d < 0) {
      eft_[vu] = finish_unassigned(v, dev);
      continue;
    }
    head_[vu] = start_on(v, d, dev);
    eft_[vu] = head_[vu] + compute(v, d);
  }
}

void PartialBound::backward(std::span<const DeviceId> dev) {
  for (auto it = topo_.rbegin(); it != topo_.rend(); ++it) {
    const auto v = static_cast<std::size_t>(*it);
    const DeviceId d = dev[v];
    if (d < 0) {
      tail_[v] = static_tail_[v];
      continue;
    }
    tail_[v] = tail_assigned(static_cast<NodeId>(v), d, dev);
  }
}

// Lower bound on the time from the finish of assigned v (on d) to the makespan, the mirror of
// start_on(): successors on d (assigned there, or unassigned and chosen local) start after v
// finishes and run on d's slots, each followed by its tail; the others start after a transfer.
// An unassigned successor may be either; sorted by its remote value (transfer + compute +
// tail), the best local set for a given largest remote value holds every successor of larger
// remote value, so prefixes of that order cover every case.
double PartialBound::tail_assigned(NodeId v, DeviceId d, std::span<const DeviceId> dev) {
  const auto vu = static_cast<std::size_t>(v);
  double fixed = 0;  // largest remote value of the successors that are remote for sure
  local_.clear();
  optional_.clear();
  for (int i = succ_begin_[vu]; i < succ_begin_[vu + 1]; ++i) {
    const NodeId w = succ_dst_[static_cast<std::size_t>(i)];
    const auto wu = static_cast<std::size_t>(w);
    const EdgeId e = succ_edge_[static_cast<std::size_t>(i)];
    const DeviceId dw = dev[wu];
    if (dw == d) {
      local_.push_back({0, compute(w, d), tail_[wu]});
    } else if (dw >= 0) {
      fixed = std::max(fixed, cost_->transfer(e, d, dw) + compute(w, dw) + tail_[wu]);
    } else {
      // Input fields reused: work on d, tail (in `finish`), remote value (in `arrive`).
      optional_.push_back({0, compute(w, d), static_tail_[wu], remote_via(e, d, w)});
    }
  }
  std::sort(optional_.begin(), optional_.end(),
            [](const Input& x, const Input& y) { return x.arrive > y.arrive; });
  const int slots = slots_[static_cast<std::size_t>(d)];
  double best = kInf;
  for (std::size_t j = 0;; ++j) {  // local: the first j optional successors
    const double remote = j < optional_.size() ? optional_[j].arrive : 0;
    best = std::min(best, std::max({fixed, remote, serial_tail(local_, slots)}));
    if (j == optional_.size()) break;
    local_.push_back({0, optional_[j].work, optional_[j].finish});
  }
  return best;
}

// Least time from the finish of v on `from` to the makespan through its unassigned successor w
// placed on another device: transfer + compute + static tail.
double PartialBound::remote_via(EdgeId e, DeviceId from, NodeId w) const {
  const auto wu = static_cast<std::size_t>(w);
  if (p_ == 1) return kInf;
  if (uniform_) return cost_->size(e) + cmin_[wu] + static_tail_[wu];
  double best = kInf;
  for (DeviceId d = 0; d < p_; ++d)
    if (d != from) best = std::min(best, cost_->transfer(e, from, d) + compute(w, d));
  return best + static_tail_[wu];
}

// Lower bound on the time from when ops `ops` (all on one device of `slots` slots, none
// starting before time 0) may start to the makespan: the mirror of serial().
double PartialBound::serial_tail(const std::vector<Item>& ops, int slots) {
  double lb = 0;
  for (const Item& o : ops) {
    lb = std::max(lb, o.work + o.tail);
    double work = 0;
    for (const Item& x : ops)
      if (x.tail >= o.tail) work += x.work;
    lb = std::max(lb, work / slots + o.tail);
  }
  return lb;
}

double PartialBound::critical_path() const {
  double lb = 0;
  for (std::size_t v = 0; v < static_cast<std::size_t>(n_); ++v)
    lb = std::max(lb, eft_[v] + tail_[v]);
  return lb;
}

// max over thresholds h (a head) and q (a tail) of h + work{head >= h, tail >= q} / slots + q.
double PartialBound::device_bound(std::vector<Item>& items, int slots) {
  std::sort(items.begin(), items.end(),
            [](const Item& a, const Item& b) { return a.head < b.head; });
  by_tail_ = items;
  std::sort(by_tail_.begin(), by_tail_.end(),
            [](const Item& a, const Item& b) { return a.tail > b.tail; });
  double lb = 0;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0 && items[i].head == items[i - 1].head) continue;
    const double h = items[i].head;
    double work = 0;
    for (const Item& it : by_tail_) {
      if (it.head < h) continue;
      work += it.work;
      lb = std::max(lb, h + work / slots + it.tail);
    }
  }
  return lb;
}

double PartialBound::device_bounds(std::span<const DeviceId> dev) {
  for (auto& items : per_device_) items.clear();
  for (std::size_t v = 0; v < static_cast<std::size_t>(n_); ++v)
    if (dev[v] >= 0)
      per_device_[static_cast<std::size_t>(dev[v])].push_back(
          {head_[v], compute(static_cast<NodeId>(v), dev[v]), tail_[v]});
  double lb = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(p_); ++d)
    if (!per_device_[d].empty()) lb = std::max(lb, device_bound(per_device_[d], slots_[d]));
  return lb;
}

double PartialBound::all_devices(std::span<const DeviceId> dev) {
  std::vector<Item>& items = per_device_.back();
  items.clear();
  for (std::size_t v = 0; v < static_cast<std::size_t>(n_); ++v)
    items.push_back(
        {head_[v], dev[v] >= 0 ? compute(static_cast<NodeId>(v), dev[v]) : cmin_[v], tail_[v]});
  return device_bound(items, total_slots_);
}

}  // namespace doppler::detail
