// multilevel's tied search: every repeated layer placed alike (MultilevelSettings::tied).
#include <fmt/format.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/groups.hpp"
#include "doppler/heuristics/multilevel.hpp"
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

}  // namespace

std::string MultilevelPlacer::tied_search(const Problem& problem, const PlaceOptions& options,
                                          BudgetedEvaluator& eval, const Stopwatch& t_start,
                                          std::vector<DeviceId>& cur, double& cur_ms) const {
  if (s_.tied <= 0) return {};
  const auto classes = repeat_classes(problem.graph());
  if (classes.empty()) return "tied: no repeated layers";
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
  const auto units = repeat_units(problem.graph().num_nodes(), classes);
  AnnealSettings as;
  as.t0 = s_.tied_t0;
  as.polish = 0;  // a descent would move single ops
  as.focus = kTiedFocus;
  as.repeats = &units;
  as.repeat_share = 1;
  as.threads = options.threads;
  as.lanes = options.lanes;
  const std::int64_t calls_before = eval.calls();
  AnnealResult r = anneal(problem, std::move(start), *start_ms, part, as, options.seed + 77);
  std::string line =
      fmt::format("tied: {} classes, {:.6g} tied, {:.6g} after {} calls", classes.size(), *start_ms,
                  r.best_makespan, eval.calls() - calls_before);
  if (r.best_makespan < cur_ms) {
    cur = std::move(r.best);
    cur_ms = r.best_makespan;
  } else {
    line += " (kept the untied start)";
  }
  return line;
}

}  // namespace doppler
