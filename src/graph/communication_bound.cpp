#include "doppler/graph/communication_bound.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <vector>

namespace doppler {

namespace {

constexpr std::size_t kMaxPrefix = 32;
constexpr double kInf = std::numeric_limits<double>::infinity();

// One predecessor of the op being bounded.
struct Pred {
  double arrival;  // ft(u) + cheapest transfer of its edge: its data's earliest remote arrival
  double release;  // est(u)
  double work;     // fastest compute time of u
};

// Lower bounds on transfer time: cheapest latency and cheapest time per size over the ordered
// pairs of distinct devices among the first p (each bounds the pair's own from below).
struct TransferFloor {
  double latency = kInf, per_size = kInf;
  double of(const CostModel& cost, EdgeId e) const {
    if (latency == kInf) return kInf;
    if (cost.uniform()) return cost.transfer(e, 0, 1);
    return latency + cost.size(e) * per_size;
  }
};

TransferFloor transfer_floor(const CostModel& cost, int p) {
  TransferFloor f;
  if (p < 2) return f;
  if (cost.uniform()) return {0, 1};
  const DeviceCosts& d = cost.device_costs();
  for (int s = 0; s < p; ++s)
    for (int t = 0; t < p; ++t) {
      if (s == t) continue;
      const auto k = static_cast<std::size_t>(s) * static_cast<std::size_t>(cost.devices()) +
                     static_cast<std::size_t>(t);
      f.latency = std::min(f.latency, d.latency[k]);
      f.per_size = std::min(f.per_size, d.time_per_size[k]);
    }
  return f;
}

// Finish of the jobs in `by_release` (sorted by release) on one device with `slots` slots,
// relaxed to a preemptive machine of speed `slots`; also at least each job's own finish.
double serial_finish(const std::vector<Pred>& by_release, int slots) {
  double t = 0, own = 0;
  for (const Pred& q : by_release) {
    t = std::max(t, q.release) + q.work / slots;
    own = std::max(own, q.release + q.work);
  }
  return std::max(t, own);
}

// est(v) from v's predecessors (see the header): `preds` is consumed (sorted in place).
double earliest_start(std::vector<Pred>& preds, std::vector<Pred>& local, int slots) {
  std::sort(preds.begin(), preds.end(),
            [](const Pred& a, const Pred& b) { return a.arrival > b.arrival; });
  local.clear();
  double best = kInf;
  const std::size_t k = preds.size();
  for (std::size_t j = 0;; ++j) {
    const double remote = j < k ? preds[j].arrival : 0.0;
    const double serial = serial_finish(local, slots);
    best = std::min(best, std::max(remote, serial));
    if (j == k) break;
    if (j == kMaxPrefix) return std::min(best, serial);
    const auto at = std::upper_bound(local.begin(), local.end(), preds[j].release,
                                     [](double r, const Pred& q) { return r < q.release; });
    local.insert(at, preds[j]);
  }
  return best;
}

// The bound's inputs shared by both passes.
struct BoundInputs {
  TransferFloor floor;
  int slots = 1;                // most compute slots of one device
  int total_slots = 0;          // compute slots of all p devices
  std::vector<double> fastest;  // fastest compute time of each op
  double work = 0;              // sum of fastest
};

BoundInputs bound_inputs(const Graph& g, const CostModel& cost, int p) {
  BoundInputs in;
  in.floor = transfer_floor(cost, p);
  for (DeviceId d = 0; d < p; ++d) {
    in.slots = std::max(in.slots, cost.slots(d));
    in.total_slots += cost.slots(d);
  }
  in.fastest.assign(static_cast<std::size_t>(g.num_nodes()), kInf);
  for (std::size_t v = 0; v < in.fastest.size(); ++v) {
    for (DeviceId d = 0; d < p; ++d)
      in.fastest[v] = std::min(in.fastest[v], cost.compute(static_cast<NodeId>(v), d));
    in.work += in.fastest[v];
  }
  return in;
}

// v's neighbours on the side the pass comes from: predecessors (forward) or successors
// (backward), with the edge joining each, in ascending neighbour order.
void gather(const Graph& g, const CostModel& cost, const BoundInputs& in,
            const std::vector<double>& est, NodeId v, bool backward, std::vector<Pred>& out) {
  out.clear();
  const auto nb = backward ? g.successors(v) : g.predecessors(v);
  const auto in_edges = backward ? std::span<const EdgeId>{} : g.in_edges(v);
  for (std::size_t i = 0; i < nb.size(); ++i) {
    const auto u = static_cast<std::size_t>(nb[i]);
    const EdgeId e = backward ? g.out_edge_begin(v) + static_cast<EdgeId>(i) : in_edges[i];
    const double arrival = est[u] + in.fastest[u] + in.floor.of(cost, e);
    if (i > 0 && nb[i] == nb[i - 1]) {  // parallel edges: one producer, latest arrival
      out.back().arrival = std::max(out.back().arrival, arrival);
      continue;
    }
    out.push_back({arrival, est[u], in.fastest[u]});
  }
}

// est(v) for every op: a lower bound on its start (forward), or on the time from its finish
// to the makespan (backward: the same rule on the reversed graph, whose schedules are the
// original's run backwards in time).
std::vector<double> one_pass(const Graph& g, const CostModel& cost, const BoundInputs& in,
                             bool backward) {
  std::vector<double> est(in.fastest.size(), 0.0);
  std::vector<Pred> preds, local;
  const auto& order = g.topo_order();
  for (std::size_t k = 0; k < order.size(); ++k) {
    const NodeId v = backward ? order[order.size() - 1 - k] : order[k];
    gather(g, cost, in, est, v, backward, preds);
    est[static_cast<std::size_t>(v)] = preds.empty() ? 0.0 : earliest_start(preds, local, in.slots);
  }
  return est;
}

}  // namespace

double communication_lower_bound(const Graph& g, const CostModel& cost, int p) {
  cost.check_devices(p);
  const BoundInputs in = bound_inputs(g, cost, p);
  const std::vector<double> head = one_pass(g, cost, in, false);
  const std::vector<double> tail = one_pass(g, cost, in, true);
  double bound = in.work / in.total_slots;
  for (std::size_t v = 0; v < head.size(); ++v)
    bound = std::max(bound, head[v] + in.fastest[v] + tail[v]);
  return bound;
}

}  // namespace doppler
