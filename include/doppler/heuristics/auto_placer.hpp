#pragma once
// `auto`: the placement method that picks and combines the others for a problem and a budget.
#include <string>
#include <vector>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// What the rule of `auto` reads: the problem's shape and the run's means.
struct AutoFeatures {
  int ops = 0;                ///< ops of the graph
  int devices = 0;            ///< P
  double transfer_ratio = 0;  ///< sum of nominal transfer times / sum of compute times
  double repeated = 0;        ///< share of the ops in repeated layers (repeat_classes), [0, 1]
  bool learned = false;       ///< doppler-search is available (torch build and a policy)
  int threads = 1;            ///< threads of the run
  double seconds = 0;         ///< the run's time budget (0: none)
  std::int64_t calls = 0;     ///< the run's simulator-call budget (0: none)
  double call_seconds = 0;    ///< seconds of one simulator call, measured (0: not measured)
};

/// Simulator calls per op the run's budget leaves: calls / ops with a call budget, else
/// threads x seconds / call_seconds / ops; infinite when neither is known.
double calls_per_op(const AutoFeatures& f);

/// What `auto` runs for a problem: the optimum by enumeration on tiny problems, else a portfolio
/// of members (placer specs) run side by side on the threads (one after another when there are
/// fewer threads than members), then annealing with every thread from the best member's result.
struct AutoPlan {
  bool exhaustive = false;           ///< tiny problem: `exhaustive` alone (the optimum)
  std::vector<std::string> members;  ///< placer specs of the portfolio (never empty otherwise)
  double refine_share = 0.25;        ///< share of the budget for the final annealing
  double refine_t0 = 0.005;          ///< its start temperature (fraction of the makespan)
  std::string why;                   ///< the rule that chose them, one line for the report
};

/// The rule (docs/results/parallel.md has the measurements behind it): `exhaustive` when P^N <=
/// 200,000; else up to 30 ops `optimal` (branch and bound) beside `local-search`, without
/// refinement (it proves most such graphs within a second); else `multilevel:inner=dsc` always
/// (best or near-best on every graph measured) and one more member: up to 5,000 ops
/// `doppler-search` when a policy is available and the budget is short (under 30 s, or at most
/// 2,000,000 calls without seconds: the learned start wins there, plain local search with more
/// time), else `local-search` (it wins on small graphs, loses on large ones); from 20,000 ops
/// `doppler-search` when a policy is available (its prior wins where a simulator call costs
/// milliseconds); otherwise `multilevel:inner=dsc,cycles=2` (V-cycles, 3-4% better on the ONNX
/// graphs, worse on the Llama forward pass: the portfolio takes both). Under 200 calls per op
/// (calls_per_op) the annealing starts cold: the multilevel members and the refinement at t0 =
/// 0.0005, `doppler-search` at 0.0001 (the hot phase pays only with many calls per op). From 20,000
/// ops under 32 calls per op (ten on graphs the tied rule below takes),
/// `local-search:t0=0.0001,focus=1,aim=1,swaps=0,dsc=1,levels=1` alone on every thread (DSC's and
/// the level placer's placements among its starts, every one-op move from the critical chain and
/// mending it, no swaps; no policy needed), without refinement: multilevel's finest level starves
/// there. Before that rule: from 10,000 ops under ten calls per op with at least half of the ops in
/// repeated layers, `multilevel:inner=dsc,tied=0.8,t0=0.0005,proxy=4` alone (its tied search moves
/// one role in every layer at once, so a call goes 32 times as far on 32 layers, and runs first on
/// a stand-in of 4 layers, 6-10 x cheaper to simulate).
AutoPlan plan_auto(const AutoFeatures& f);

/// The `auto` method: its plan (plan_auto) on the problem's features, within the budget (calls
/// split evenly over the members, one call each kept to score them, refine_share for the end;
/// every simulator call counts). The note names the rule, each member's makespan and calls,
/// and the member whose result won (and what the refinement gained).
class AutoPlacer : public Placer {
public:
  /// `refine`: overrides AutoPlan::refine_share when >= 0; `t0`: overrides AutoPlan::refine_t0
  /// (the refinement's AnnealSettings::t0) when >= 0; `tiebreak`: the tie rule of every annealing
  /// member (local-search, multilevel, doppler-search) and of the refinement.
  /// Whether doppler-search can run (AutoFeatures::learned) is found here, when the placer is
  /// made, not in place(): making it may load its code (a deferred placer: the CLI's libtorch
  /// plug-in, 0.6 s), which a time budget should not pay.
  explicit AutoPlacer(double refine = -1, double t0 = -1, TieBreak tiebreak = TieBreak::none);
  std::string name() const override { return "auto"; }
  std::int64_t default_calls() const override { return kDefaultSearchCalls; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override;

private:
  double refine_, t0_;
  TieBreak tiebreak_;
  bool learned_;  // doppler-search can be made
};

/// The features of a problem as plan_auto reads them, for `threads` threads and a run within
/// `budget` (call_seconds left at 0: for a budget of seconds alone AutoPlacer times a call, the
/// fastest of three counted simulations of a round-robin assignment); `learned` is left false
/// (AutoPlacer sets it).
AutoFeatures auto_features(const Problem& problem, int threads, const Budget& budget);

}  // namespace doppler
