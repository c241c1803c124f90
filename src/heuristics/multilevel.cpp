#include "doppler/heuristics/multilevel.hpp"

#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/clustering.hpp"
#include "doppler/heuristics/coarsen.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

// The coarsening steps: steps[i] maps level i's nodes onto level i + 1 (level 0: the ops). With
// `part` (a device per op), only ops of one device merge: the placement is one of every level.
std::vector<Coarsening> build_hierarchy(const Problem& problem, const MultilevelSettings& s,
                                        std::uint64_t seed, std::vector<int> part = {}) {
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
    cs.part = part;
    Coarsening c = coarsen_once(*cur, steps.empty() ? costs : steps.back().costs, cs);
    if (c.graph.num_nodes() > 0.95 * cur->num_nodes()) break;
    if (!part.empty()) {  // a cluster's part: its members' (one part by construction)
      std::vector<int> coarse(static_cast<std::size_t>(c.graph.num_nodes()));
      for (std::size_t v = 0; v < part.size(); ++v)
        coarse[static_cast<std::size_t>(c.cluster_of[v])] = part[v];
      part = std::move(coarse);
    }
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

void MultilevelPlacer::refine(const Problem& problem, const PlaceOptions& options,
                              BudgetedEvaluator& eval, const Stopwatch& t_start, PassEnd end,
                              const Groups& groups, int cycle, std::vector<DeviceId>& cur,
                              double& cur_ms) const {
  const std::size_t depth = groups.size();
  if (levels_.size() < depth + 1) levels_.resize(depth + 1);
  for (std::size_t i = depth + 1; i-- > 0;) {
    const Stopwatch t_level;
    const std::int64_t evals_before = eval.calls();
    const auto levels_left = static_cast<double>(i + 1);
    Budget b;
    if (end.calls > 0)
      b.evaluations = static_cast<std::int64_t>(
          static_cast<double>(std::max<std::int64_t>(0, end.calls - eval.calls())) / levels_left);
    if (end.seconds > 0) b.seconds = std::max(0.0, end.seconds - t_start.seconds()) / levels_left;
    // A level runs while both limits in force leave something (a spent time limit must not
    // leave the annealer with an evaluation limit alone).
    const bool time_left = end.seconds <= 0 || b.seconds > 0;
    const bool evals_left = end.calls <= 0 || b.evaluations > 0;
    if (time_left && evals_left) {
      AnnealSettings as;
      as.t0 = s_.t0;
      as.focus = s_.focus;
      as.aim = s_.aim;
      as.swaps = s_.swaps;
      as.prefix_cycles = s_.prefix;
      as.tiebreak = s_.tiebreak;
      as.groups = i > 0 ? &groups[i - 1] : (depth > 0 ? &groups[0] : nullptr);
      as.gather_groups = true;
      as.group_share = i > 0 ? 0.7 : 0.25;
      as.polish = i > 0 ? 0.0 : 0.15;
      as.threads = options.threads;
      as.lanes = options.lanes;
      BudgetedEvaluator level = eval.part(b);
      const std::uint64_t seed = options.seed + i + 1000003ULL * static_cast<unsigned>(cycle);
      AnnealResult r = anneal(problem, std::move(cur), cur_ms, level, as, seed);
      cur = std::move(r.best);
      cur_ms = r.best_makespan;
    }
    if (levels_[i].nodes == 0)
      levels_[i].nodes =
          i == 0 ? problem.graph().num_nodes() : static_cast<int>(groups[i - 1].size());
    levels_[i].makespan = cur_ms;
    levels_[i].evaluations += eval.calls() - evals_before;
    levels_[i].seconds += t_level.seconds();
  }
}

void MultilevelPlacer::run_cycles(const Problem& problem, const PlaceOptions& options,
                                  BudgetedEvaluator& eval, const Stopwatch& t_start,
                                  const Groups& first, std::vector<DeviceId>& cur,
                                  double& cur_ms) const {
  const std::int64_t evals = eval.limits().evaluations;
  const double seconds = eval.limits().seconds;
  const std::int64_t calls_from = eval.calls();
  const double seconds_from = t_start.seconds();
  const int cycles = std::max(1, s_.cycles);
  for (int c = 0; c < cycles; ++c) {
    PassEnd end;
    const double part = static_cast<double>(c + 1) / cycles;
    if (evals > 0)
      end.calls = calls_from +
                  static_cast<std::int64_t>(
                      part * static_cast<double>(std::max<std::int64_t>(0, evals - calls_from)));
    if (seconds > 0) end.seconds = seconds_from + part * std::max(0.0, seconds - seconds_from);
    if (c == 0) {
      refine(problem, options, eval, t_start, end, first, c, cur, cur_ms);
      continue;
    }
    const auto again =
        build_hierarchy(problem, s_, options.seed + 7919ULL * static_cast<unsigned>(c + 1),
                        std::vector<int>(cur.begin(), cur.end()));
    refine(problem, options, eval, t_start, end, op_groups(again, problem.graph().num_nodes()), c,
           cur, cur_ms);
  }
}

PlaceResult MultilevelPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                           BudgetedEvaluator& eval) const {
  levels_.clear();
  const Stopwatch t_start;
  const int p = problem.devices();
  const int n = problem.graph().num_nodes();
  const std::int64_t evals = eval.limits().evaluations;
  const double seconds = eval.limits().seconds;
  SimWorkspace ws;
  ListScheduleStart list = best_list_schedule(problem, options, eval);
  if (p == 1 || n == 0) return Assignment{p, list.device_of, {}, name()};
  improve_with_dsc(problem, options, eval, list);  // it wins by far where transfers dominate

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
    const Stopwatch t_level;
    const Problem coarse(steps.back().graph, Platform::reference(p));
    Budget share;
    share.evaluations =
        evals > 0 ? std::max<std::int64_t>(
                        1, static_cast<std::int64_t>(s_.inner_share * evals) - eval.calls())
                  : 0;
    share.seconds = seconds > 0 ? std::max(1e-3, s_.inner_share * seconds - t_start.seconds()) : 0;
    BudgetedEvaluator inner_eval = eval.part(share, coarse.simulator());
    PlaceOptions o = options;
    o.budget = inner_eval.limits();
    const auto inner = make_placer(inner_spec(s_.inner));
    std::vector<DeviceId> a =
        project(groups.back(), inner->place_within(coarse, o, inner_eval).assignment.device_of, n);
    const std::optional<double> ms = eval.makespan(a, ws);
    levels_[depth].makespan = ms.value_or(cur_ms);
    levels_[depth].evaluations = inner_eval.calls() + (ms ? 1 : 0);
    levels_[depth].seconds = t_level.seconds();
    if (ms && *ms < cur_ms) {
      cur = std::move(a);
      cur_ms = *ms;
    }
  }

  // With `tied`: every repeated layer placed alike first (its status line is the note).
  std::string note = tied_search(problem, options, eval, t_start, cur, cur_ms);
  // Refine, coarsest to finest; then each further cycle coarsens again within the devices of
  // the placement so far (other clusters, other seed) and refines its levels the same way.
  run_cycles(problem, options, eval, t_start, groups, cur, cur_ms);
  return PlaceResult(Assignment{p, std::move(cur), {}, name()}, std::move(note));
}

}  // namespace doppler
