#include "doppler/graph/communication_bound.hpp"

#include <algorithm>
#include <limits>
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

}  // namespace

double communication_lower_bound(const Graph& g, const CostModel& cost, int p) {
  cost.check_devices(p);
  const auto n = static_cast<std::size_t>(g.num_nodes());
  const TransferFloor floor = transfer_floor(cost, p);
  int slots = 1, total_slots = 0;
  for (DeviceId d = 0; d < p; ++d) {
    slots = std::max(slots, cost.slots(d));
    total_slots += cost.slots(d);
  }
  std::vector<double> fastest(n, kInf), est(n, 0.0);
  double work = 0;
  for (std::size_t v = 0; v < n; ++v) {
    for (DeviceId d = 0; d < p; ++d)
      fastest[v] = std::min(fastest[v], cost.compute(static_cast<NodeId>(v), d));
    work += fastest[v];
  }
  std::vector<Pred> preds, local;
  double bound = work / total_slots;
  for (NodeId v : g.topo_order()) {
    const auto pv = g.predecessors(v);
    const auto in = g.in_edges(v);
    preds.clear();
    for (std::size_t i = 0; i < pv.size(); ++i) {
      const auto u = static_cast<std::size_t>(pv[i]);
      const double arrival = est[u] + fastest[u] + floor.of(cost, in[i]);
      if (i > 0 && pv[i] == pv[i - 1]) {  // parallel edges: one producer, latest arrival
        preds.back().arrival = std::max(preds.back().arrival, arrival);
        continue;
      }
      preds.push_back({arrival, est[u], fastest[u]});
    }
    const auto vi = static_cast<std::size_t>(v);
    est[vi] = preds.empty() ? 0.0 : earliest_start(preds, local, slots);
    bound = std::max(bound, est[vi] + fastest[vi]);
  }
  return bound;
}

}  // namespace doppler
