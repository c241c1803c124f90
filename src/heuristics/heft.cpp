#include <algorithm>
#include <limits>
#include <numeric>

#include "slot_timeline.hpp"

#include "doppler/heuristics/list_placers.hpp"

namespace doppler {

PlaceResult HeftPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                     BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  const CostModel& cost = problem.cost();
  const int p = problem.devices();
  const auto n = static_cast<std::size_t>(g.num_nodes());
  const auto& rank = problem.analysis().b_level();  // upward rank with mean costs
  std::vector<NodeId> order(n);
  std::iota(order.begin(), order.end(), 0);
  // Decreasing rank; a topological tie-break keeps predecessors first when ranks are equal
  // (possible with zero costs).
  const auto& topo = g.topo_rank();
  std::stable_sort(order.begin(), order.end(), [&](NodeId a, NodeId b) {
    const double ra = rank[static_cast<std::size_t>(a)], rb = rank[static_cast<std::size_t>(b)];
    if (ra != rb) return ra > rb;
    return topo[static_cast<std::size_t>(a)] < topo[static_cast<std::size_t>(b)];
  });
  // Busy intervals per device slot, in time order.
  std::vector<std::vector<detail::SlotTimeline>> busy(static_cast<std::size_t>(p));
  for (DeviceId d = 0; d < p; ++d)
    busy[static_cast<std::size_t>(d)].resize(static_cast<std::size_t>(cost.slots(d)));
  std::vector<DeviceId> device(n, -1);
  std::vector<double> start(n, 0), finish(n, 0);
  // Input ops follow their first consumer (when colocating): skipped here, placed with it.
  const auto deferred = [&](NodeId v) {
    return options.colocate_inputs && g.node(v).kind == OpKind::input && !g.successors(v).empty();
  };
  for (NodeId v : order) {
    if (deferred(v)) continue;
    double best_finish = std::numeric_limits<double>::infinity(), best_start = 0;
    DeviceId best_dev = 0;
    std::size_t best_slot = 0;
    int best_pos = 0;
    for (DeviceId d = 0; d < p; ++d) {
      double ready = 0;
      for (EdgeId e : g.in_edges(v)) {
        const NodeId u = g.edge(e).src;
        if (device[static_cast<std::size_t>(u)] < 0) continue;  // a deferred input: placed with v
        ready = std::max(ready, finish[static_cast<std::size_t>(u)] +
                                    cost.transfer(e, device[static_cast<std::size_t>(u)], d));
      }
      const double c = cost.compute(v, d);
      const auto& slots = busy[static_cast<std::size_t>(d)];
      for (std::size_t sl = 0; sl < slots.size(); ++sl) {
        // Earliest gap at or after `ready` that fits c (insertion policy).
        const detail::SlotTimeline::Fit fit = slots[sl].earliest_fit(ready, c);
        if (fit.start + c < best_finish) {
          best_finish = fit.start + c;
          best_start = fit.start;
          best_dev = d;
          best_slot = sl;
          best_pos = fit.pos;
        }
      }
    }
    busy[static_cast<std::size_t>(best_dev)][best_slot].insert(best_pos, best_start, best_finish);
    for (NodeId u : g.predecessors(v))
      if (device[static_cast<std::size_t>(u)] < 0) device[static_cast<std::size_t>(u)] = best_dev;
    device[static_cast<std::size_t>(v)] = best_dev;
    start[static_cast<std::size_t>(v)] = best_start;
    finish[static_cast<std::size_t>(v)] = best_finish;
  }
  std::vector<NodeId> by_start(n);
  std::iota(by_start.begin(), by_start.end(), 0);
  std::vector<int> pos_in_rank(n);
  for (std::size_t i = 0; i < n; ++i)
    pos_in_rank[static_cast<std::size_t>(order[i])] = static_cast<int>(i);
  std::stable_sort(by_start.begin(), by_start.end(), [&](NodeId a, NodeId b) {
    const double sa = start[static_cast<std::size_t>(a)], sb = start[static_cast<std::size_t>(b)];
    return sa != sb ? sa < sb
                    : pos_in_rank[static_cast<std::size_t>(a)] <
                          pos_in_rank[static_cast<std::size_t>(b)];
  });
  return Assignment{p, device, by_start, name()};
}

}  // namespace doppler
