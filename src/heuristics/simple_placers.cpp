#include "doppler/heuristics/simple_placers.hpp"

#include <algorithm>
#include <random>

#include "doppler/heuristics/list_placers.hpp"

namespace doppler {

PlaceResult SinglePlacer::place_within(const Problem& problem, const PlaceOptions& /*options*/,
                                       BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  DeviceId best = 0;
  double best_total = 0;
  for (DeviceId d = 0; d < problem.devices(); ++d) {
    double total = 0;
    for (NodeId v = 0; v < g.num_nodes(); ++v) total += problem.cost().compute(v, d);
    if (d == 0 || total < best_total) best = d, best_total = total;
  }
  return Assignment{problem.devices(),
                    std::vector<DeviceId>(static_cast<std::size_t>(g.num_nodes()), best),
                    g.topo_order(), name()};
}

PlaceResult RoundRobinPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                           BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()));
  const auto& topo = g.topo_order();
  for (std::size_t i = 0; i < topo.size(); ++i)
    dev[static_cast<std::size_t>(topo[i])] =
        static_cast<DeviceId>(i % static_cast<std::size_t>(problem.devices()));
  Assignment a{problem.devices(), dev, topo, name()};
  if (options.colocate_inputs) colocate_inputs(g, a);
  return a;
}

PlaceResult RandomPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                       BudgetedEvaluator& /*eval*/) const {
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<DeviceId> pick(0, problem.devices() - 1);
  std::vector<DeviceId> dev(static_cast<std::size_t>(problem.graph().num_nodes()));
  for (auto& d : dev) d = pick(rng);
  return Assignment{problem.devices(), dev, problem.graph().topo_order(), name()};
}

PlaceResult BalancedPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                         BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  std::vector<double> load(static_cast<std::size_t>(p), 0);
  std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v : g.topo_order()) {
    const auto d = static_cast<DeviceId>(std::min_element(load.begin(), load.end()) - load.begin());
    dev[static_cast<std::size_t>(v)] = d;
    load[static_cast<std::size_t>(d)] += problem.cost().compute(v, d);
  }
  Assignment a{p, dev, g.topo_order(), name()};
  if (options.colocate_inputs) colocate_inputs(g, a);
  return a;
}

PlaceResult MTopoPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                      BudgetedEvaluator& /*eval*/) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const std::vector<double> mem = memory_proxy(g);
  double total = 0;
  for (double m : mem) total += m;
  const double capacity = (1 + slack_) * total / p;
  std::vector<DeviceId> dev(static_cast<std::size_t>(g.num_nodes()));
  DeviceId d = 0;
  double used = 0;
  for (NodeId v : g.topo_order()) {
    const double m = mem[static_cast<std::size_t>(v)];
    if (used > 0 && used + m > capacity && d + 1 < p) {
      ++d;
      used = 0;
    }
    dev[static_cast<std::size_t>(v)] = d;
    used += m;
  }
  Assignment a{p, dev, g.topo_order(), name()};
  if (options.colocate_inputs) colocate_inputs(g, a);
  return a;
}

}  // namespace doppler
