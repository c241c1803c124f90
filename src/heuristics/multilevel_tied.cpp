// multilevel's tied search: every repeated layer placed alike (MultilevelSettings::tied).
#include <fmt/format.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/groups.hpp"
#include "doppler/heuristics/multilevel.hpp"
#include "doppler/heuristics/repeat_proxy.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

// Share of the tied search's one-class moves that pick their class from the critical chain: on
// the Llama-7B training step (1,921 classes, 7,000 calls a minute) 0.8 found 109-119 ms where
// picks without focus found 143-154 (docs/results/parallel.md, section "Tied layers").
constexpr double kTiedFocus = 0.8;
// Tying the start may make it at most this much longer; beyond, the layers' placements differ
// too much to be tied (the 12-layer GPT: 1.59 x) and the search is skipped.
constexpr double kTiedStartLimit = 1.25;
// Share of the tied search spent on the stand-in of a few layers (MultilevelSettings::
// tied_proxy); the rest anneals the whole graph by classes from the stand-in's result.
constexpr double kProxyShare = 0.75;

// The settings of a cold anneal by whole classes (`units`), on any thread count.
AnnealSettings class_moves(const std::vector<std::vector<NodeId>>& units, double t0,
                           const PlaceOptions& options) {
  AnnealSettings as;
  as.t0 = t0;
  as.polish = 0;  // a descent would move single ops
  as.focus = kTiedFocus;
  as.repeats = &units;
  as.repeat_share = 1;
  as.threads = options.threads;
  as.lanes = options.lanes;
  return as;
}

}  // namespace

std::string MultilevelPlacer::proxy_search(const Problem& problem, const PlaceOptions& options,
                                           BudgetedEvaluator& part,
                                           const std::vector<std::vector<NodeId>>& classes,
                                           std::vector<DeviceId>& start, double& start_ms) const {
  const auto proxy = repeat_proxy(problem.graph(), classes, s_.tied_proxy);
  if (!proxy) return fmt::format(", no stand-in of {} layers", s_.tied_proxy);
  const Problem small(proxy->graph, problem.platform());
  const Budget all = part.limits();
  BudgetedEvaluator small_eval =
      part.part({static_cast<std::int64_t>(kProxyShare * static_cast<double>(all.evaluations)),
                 kProxyShare * all.seconds},
                small.simulator());
  SimWorkspace ws;
  std::vector<DeviceId> small_start = restrict_to_proxy(*proxy, start);
  const std::optional<double> small_ms = small_eval.makespan(small_start, ws);
  if (!small_ms) return ", no budget for the stand-in";
  const auto units = repeat_units(small.graph().num_nodes(), repeat_classes(small.graph()));
  AnnealResult r = anneal(small, std::move(small_start), *small_ms, small_eval,
                          class_moves(units, s_.tied_t0, options), options.seed + 78);
  std::string line =
      fmt::format(", stand-in of {} of {} layers: {:.6g} -> {:.6g} in {} calls", proxy->layers,
                  proxy->of_layers, *small_ms, r.best_makespan, small_eval.calls());
  std::vector<DeviceId> expanded = expand_proxy(*proxy, r.best, start);
  const std::optional<double> expanded_ms = part.makespan(expanded, ws);
  if (!expanded_ms) return line;
  line += fmt::format(" ({:.6g} on the graph)", *expanded_ms);
  if (*expanded_ms < start_ms) {
    start = std::move(expanded);
    start_ms = *expanded_ms;
    part.improved(start_ms);
  }
  return line;
}

std::string MultilevelPlacer::tied_search(const Problem& problem, const PlaceOptions& options,
                                          BudgetedEvaluator& eval, const Stopwatch& t_start,
                                          std::vector<DeviceId>& cur, double& cur_ms) const {
  if (s_.tied <= 0) return {};
  const auto classes = repeat_classes(problem.graph());
  if (classes.empty()) return "tied: no repeated layers";
  eval.improved(cur_ms);  // the untied start: the run's curve starts here, not after the search
  // The tied search ends at the tied share of the run's limits.
  Budget b;
  const Budget all = eval.limits();
  if (all.evaluations > 0)
    b.evaluations =
        static_cast<std::int64_t>(s_.tied * static_cast<double>(all.evaluations)) - eval.calls();
  if (all.seconds > 0) b.seconds = s_.tied * all.seconds - t_start.seconds();
  if ((all.evaluations > 0 && b.evaluations < 2) || (all.seconds > 0 && b.seconds <= 0))
    return "tied: no budget left";
  BudgetedEvaluator part = eval.part(b);
  SimWorkspace ws;
  std::vector<DeviceId> start = tie_repeats(cur, classes, problem.devices());
  const std::optional<double> start_ms = part.makespan(start, ws);
  if (!start_ms) return "tied: no budget left";
  if (*start_ms > kTiedStartLimit * cur_ms)
    return fmt::format("tied: skipped (tying the start made it {:.2f} x longer)",
                       *start_ms / cur_ms);
  const std::int64_t calls_before = eval.calls();
  double tied_ms = *start_ms;
  part.improved(tied_ms);
  std::string line = fmt::format("tied: {} classes, {:.6g} tied", classes.size(), tied_ms);
  if (s_.tied_proxy > 0) line += proxy_search(problem, options, part, classes, start, tied_ms);
  const auto units = repeat_units(problem.graph().num_nodes(), classes);
  AnnealResult r = anneal(problem, std::move(start), tied_ms, part,
                          class_moves(units, s_.tied_t0, options), options.seed + 77);
  line += fmt::format(", {:.6g} after {} calls", r.best_makespan, eval.calls() - calls_before);
  if (r.best_makespan < cur_ms) {
    cur = std::move(r.best);
    cur_ms = r.best_makespan;
  } else {
    line += " (kept the untied start)";
  }
  return line;
}

}  // namespace doppler
