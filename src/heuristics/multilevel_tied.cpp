// multilevel's tied search: every repeated layer placed alike (MultilevelSettings::tied).
#include <cmath>
#include <limits>
#include <mutex>

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

// Times the stand-in's best is carried to the graph during its search, at equal shares of its
// budget: the run's curve moves in that phase, and a run stopped there keeps the stand-in's
// best so far instead of the tied start. Each costs one call on the graph (10 ms on the
// Llama-7B training step), when the best changed since the last.
constexpr int kProxyCheckpoints = 16;

// The stand-in's best so far, carried to the graph and evaluated there at checkpoints; offered
// from the chains' threads.
class ProxyCheckpoints {
public:
  ProxyCheckpoints(const RepeatProxy& proxy, const std::vector<DeviceId>& start,
                   BudgetedEvaluator& graph, const BudgetedEvaluator& stand_in)
      : proxy_(proxy), start_(start), graph_(graph), stand_in_(stand_in) {}

  // A chain's new best on the stand-in: evaluated on the graph when a checkpoint is due.
  void offer(std::span<const DeviceId> stand_in_best) {
    const std::lock_guard lk(mu_);
    const double f = stand_in_.fraction();
    if (f < next_) return;
    next_ = (std::floor(f * kProxyCheckpoints) + 1) / kProxyCheckpoints;
    std::vector<DeviceId> expanded = expand_proxy(proxy_, stand_in_best, start_);
    if (const std::optional<double> ms = graph_.makespan(expanded, ws_)) consider(expanded, *ms);
  }

  // An assignment of the graph with its makespan: kept (and reported) when the best so far.
  void consider(std::vector<DeviceId>& device_of, double ms) {
    if (ms >= best_ms) return;
    best = std::move(device_of);
    best_ms = ms;
    graph_.improved(ms);
  }

  std::vector<DeviceId> best;  // the best carried over so far (empty before the first)
  double best_ms = std::numeric_limits<double>::infinity();  // its makespan on the graph

private:
  const RepeatProxy& proxy_;
  const std::vector<DeviceId>& start_;
  BudgetedEvaluator& graph_;
  const BudgetedEvaluator& stand_in_;
  std::mutex mu_;
  SimWorkspace ws_;
  double next_ = 1.0 / kProxyCheckpoints;
};

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
  AnnealSettings as = class_moves(units, s_.tied_t0, options);
  ProxyCheckpoints carried(*proxy, start, part, small_eval);
  // Several chains under a call limit would make the checkpoints' timing, and so the run, vary.
  if (options.threads == 1 || all.evaluations == 0)
    as.on_best = [&](std::span<const DeviceId> best, double) { carried.offer(best); };
  AnnealResult r =
      anneal(small, std::move(small_start), *small_ms, small_eval, as, options.seed + 78);
  std::string line =
      fmt::format(", stand-in of {} of {} layers: {:.6g} -> {:.6g} in {} calls", proxy->layers,
                  proxy->of_layers, *small_ms, r.best_makespan, small_eval.calls());
  std::vector<DeviceId> expanded = expand_proxy(*proxy, r.best, start);
  if (const std::optional<double> ms = part.makespan(expanded, ws)) {
    line += fmt::format(" ({:.6g} on the graph)", *ms);
    carried.consider(expanded, *ms);
  } else if (!carried.best.empty()) {
    line +=
        fmt::format(" (no call left to carry it over; {:.6g} on the graph at the last checkpoint)",
                    carried.best_ms);
  }
  if (carried.best_ms < start_ms) {
    start = std::move(carried.best);
    start_ms = carried.best_ms;
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
