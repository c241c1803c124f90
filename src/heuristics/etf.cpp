#include <algorithm>
#include <limits>

#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/list_schedule.hpp"

namespace doppler {

std::vector<double> memory_proxy(const Graph& g) {
  bool physical = false;
  for (const Node& n : g.nodes()) physical = physical || n.out_bytes > 0;
  std::vector<double> m(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.node(v);
    double ref = n.transfer_cost.value_or(0.0);  // classic model: its costliest out-edge
    if (g.has_edge_transfer_costs()) ref = std::max(ref, g.max_out_transfer_cost(v));
    m[static_cast<std::size_t>(v)] = physical ? n.out_bytes : ref;
  }
  return m;
}

PlaceResult EtfPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                    BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto& bl = problem.analysis().b_level();
  ListSchedule s(g, problem.cost(), p, options.colocate_inputs);
  std::vector<double> mem, left;
  if (slack_ >= 0) {
    mem = memory_proxy(g);
    double total = 0;
    for (double x : mem) total += x;
    left.assign(static_cast<std::size_t>(p), (1 + slack_) * total / p);
  }
  while (!s.done()) {
    NodeId best_v = -1;
    DeviceId best_d = -1;
    double best_est = std::numeric_limits<double>::infinity();
    for (int pass = 0; pass < 2 && best_v < 0; ++pass) {
      // Pass 0 honours the memory capacities; pass 1 (only when nothing fits) ignores them.
      for (NodeId v : s.candidates()) {
        for (DeviceId d = 0; d < p; ++d) {
          if (pass == 0 && slack_ >= 0 &&
              mem[static_cast<std::size_t>(v)] > left[static_cast<std::size_t>(d)])
            continue;
          const double est = s.earliest_start(v, d);
          bool better = est < best_est;
          if (!better && est == best_est) {
            const double b = bl[static_cast<std::size_t>(v)],
                         bb = bl[static_cast<std::size_t>(best_v)];
            better = b > bb || (b == bb && (v < best_v || (v == best_v && d < best_d)));
          }
          if (better) {
            best_est = est;
            best_v = v;
            best_d = d;
          }
        }
      }
    }
    if (slack_ >= 0)
      left[static_cast<std::size_t>(best_d)] -= mem[static_cast<std::size_t>(best_v)];
    s.place(best_v, best_d);
  }
  return Assignment{p, s.device_of(), s.order(), name()};
}

}  // namespace doppler
