#include "doppler/heuristics/multilevel.hpp"

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/clustering.hpp"
#include "doppler/heuristics/coarsen.hpp"
#include "doppler/heuristics/search_placers.hpp"

namespace doppler {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The coarsening steps: steps[i] maps level i's nodes onto level i + 1 (level 0: the ops).
std::vector<Coarsening> build_hierarchy(const Problem& problem, const MultilevelSettings& s,
                                        std::uint64_t seed) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const int target = s.coarse_nodes > 0 ? s.coarse_nodes : std::max(256, 16 * p);
  CoarsenCosts costs = nominal_costs(g, problem.cost());
  const double total = std::accumulate(costs.compute.begin(), costs.compute.end(), 0.0);
  std::vector<Coarsening> steps;
  const Graph* cur = &g;
  while (cur->num_nodes() > target) {
    CoarsenSettings cs;
    cs.max_cluster = s.cap * total / p;
    cs.seed = seed + steps.size();
    Coarsening c = coarsen_once(*cur, steps.empty() ? costs : steps.back().costs, cs);
    if (c.graph.num_nodes() > 0.95 * cur->num_nodes()) break;
    steps.push_back(std::move(c));
    cur = &steps.back().graph;
  }
  return steps;
}

// The ops (level-0 ids) of every node of each level: out[i] for level i + 1 (level 0's groups
// would be single ops). O(depth x N).
std::vector<std::vector<std::vector<NodeId>>> op_groups(const std::vector<Coarsening>& steps,
                                                        int n) {
  std::vector<std::vector<std::vector<NodeId>>> out;
  std::vector<NodeId> at(static_cast<std::size_t>(n));
  std::iota(at.begin(), at.end(), 0);
  for (const Coarsening& c : steps) {
    for (auto& x : at) x = c.cluster_of[static_cast<std::size_t>(x)];
    std::vector<std::vector<NodeId>> groups(static_cast<std::size_t>(c.graph.num_nodes()));
    for (NodeId v = 0; v < n; ++v)
      groups[static_cast<std::size_t>(at[static_cast<std::size_t>(v)])].push_back(v);
    out.push_back(std::move(groups));
  }
  return out;
}

// The level-0 assignment of a coarsest-level one.
std::vector<DeviceId> project(const std::vector<std::vector<NodeId>>& groups,
                              const std::vector<DeviceId>& coarse, int n) {
  std::vector<DeviceId> a(static_cast<std::size_t>(n), 0);
  for (std::size_t c = 0; c < groups.size(); ++c)
    for (NodeId v : groups[c]) a[static_cast<std::size_t>(v)] = coarse[c];
  return a;
}

// Inner placer spec: ';' stands for ',' so that the inner options survive the outer spec.
std::string inner_spec(std::string spec) {
  std::replace(spec.begin(), spec.end(), ';', ',');
  return spec;
}

}  // namespace

Assignment MultilevelPlacer::place(const Problem& problem, const PlaceOptions& options) const {
  evaluations_ = 0;
  levels_.clear();
  const auto t_start = Clock::now();
  const int p = problem.devices();
  const int n = problem.graph().num_nodes();
  const std::int64_t evals = options.budget.evaluations > 0
                                 ? options.budget.evaluations
                                 : (options.budget.seconds > 0 ? 0 : 20000);
  const double seconds = options.budget.seconds;
  ListScheduleStart list = best_list_schedule(problem, options);
  evaluations_ += list.evaluations;
  if (p == 1 || n == 0) return {p, list.device_of, {}, name()};
  {  // DSC is a start too: it wins by far where transfers dominate
    const DscPlacer dsc;
    std::vector<DeviceId> a = dsc.place(problem, options).device_of;
    const double ms = problem.simulator().makespan(a);
    evaluations_ += dsc.evaluations() + 1;
    if (ms < list.makespan) {
      list.device_of = std::move(a);
      list.makespan = ms;
    }
  }

  const std::vector<Coarsening> steps = build_hierarchy(problem, s_, options.seed);
  const std::size_t depth = steps.size();
  const auto groups = op_groups(steps, n);
  levels_.resize(depth + 1);
  levels_[0].nodes = n;
  for (std::size_t i = 0; i < depth; ++i) levels_[i + 1].nodes = steps[i].graph.num_nodes();

  // Place the coarsest level with the inner placer; start from its projection or from the best
  // list scheduler, whichever is shorter on the ops.
  std::vector<DeviceId> cur = list.device_of;
  double cur_ms = list.makespan;
  if (depth > 0) {
    const auto t_level = Clock::now();
    const Problem coarse(steps.back().graph, Platform::reference(p));
    PlaceOptions o = options;
    o.budget.evaluations =
        evals > 0 ? std::max<std::int64_t>(
                        1, static_cast<std::int64_t>(s_.inner_share * evals) - evaluations_)
                  : 0;
    o.budget.seconds = seconds > 0 ? std::max(1e-3, s_.inner_share * seconds - since(t_start)) : 0;
    const auto inner = make_placer(inner_spec(s_.inner));
    std::vector<DeviceId> a = project(groups.back(), inner->place(coarse, o).device_of, n);
    const double ms = problem.simulator().makespan(a);
    evaluations_ += inner->evaluations() + 1;
    levels_[depth].makespan = ms;
    levels_[depth].evaluations = inner->evaluations() + 1;
    levels_[depth].seconds = since(t_level);
    if (ms < cur_ms) {
      cur = std::move(a);
      cur_ms = ms;
    }
  }

  // Refine, coarsest to finest: annealing on the ops whose group moves gather a whole cluster of
  // the level on one device (mostly group moves at coarse levels).
  for (std::size_t i = depth + 1; i-- > 0;) {
    const auto t_level = Clock::now();
    const std::int64_t evals_before = evaluations_;
    const auto levels_left = static_cast<double>(i + 1);
    Budget b;
    if (evals > 0)
      b.evaluations = static_cast<std::int64_t>(
          static_cast<double>(std::max<std::int64_t>(0, evals - evaluations_)) / levels_left);
    if (seconds > 0) b.seconds = std::max(0.0, seconds - since(t_start)) / levels_left;
    // A level runs while both limits in force leave something (a spent time limit must not
    // leave the annealer with an evaluation limit alone).
    const bool time_left = seconds <= 0 || b.seconds > 0;
    const bool evals_left = evals <= 0 || b.evaluations > 0;
    if (time_left && evals_left) {
      AnnealSettings as;
      as.t0 = s_.t0;
      as.focus = s_.focus;
      as.groups = i > 0 ? &groups[i - 1] : (depth > 0 ? &groups[0] : nullptr);
      as.gather_groups = true;
      as.group_share = i > 0 ? 0.7 : 0.25;
      as.polish = i > 0 ? 0.0 : 0.15;
      AnnealResult r = anneal(problem, std::move(cur), cur_ms, b, as, options.seed + i);
      evaluations_ += r.evaluations;
      cur = std::move(r.best);
      cur_ms = r.best_makespan;
    }
    levels_[i].makespan = cur_ms;
    levels_[i].evaluations += evaluations_ - evals_before;
    levels_[i].seconds += since(t_level);
  }
  return {p, std::move(cur), {}, name()};
}

}  // namespace doppler
