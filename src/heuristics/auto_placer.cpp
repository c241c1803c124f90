#include "doppler/heuristics/auto_placer.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/coarsen.hpp"
#include "doppler/heuristics/groups.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/heuristics/simple_placers.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kExhaustiveCandidates = 200000;  // P^N at most this: enumerate
constexpr int kOptimalMaxOps = 30;                // at most: branch and bound beside local-search
constexpr int kLocalSearchMaxOps = 5000;
constexpr int kLearnedMinOps = 20000;
constexpr double kShortSeconds = 30;           // below: a short budget (the learned start pays)
constexpr std::int64_t kShortCalls = 2000000;  // at most, without seconds: a short budget
// Below: the cold focused search alone (kStarvedSearch). On the 20,000-op DAG on 64 devices at 60 s
// it beat the portfolio on one thread (256.0-256.2 at 0.9-1.0 calls per op against 257.7 at 1.3)
// and on two (255.96-255.97 at 1.6-1.7 against 257.1-257.3): docs/results/parallel.md, section
// "Never worse with more seconds". With the focused search of the thirty-sixth session the
// portfolio lost by more, also at 120 s and 240 s on two threads (3.8 and 7.1 calls per op: 256.85
// and 256.81 against the search's 251.14 and 251.06; section "More seconds on the 20,000-op DAG"),
// so the threshold went from 3 to 10. On a faster VM (thirty-eighth session) auto at 400 s on two
// threads estimated 16 calls per op (it made 25), ran the portfolio and ended at 256.57 against the
// search's 250.65 by name, so it is 32; above that, unmeasured on graphs this large. Graphs the
// tied rule takes below its threshold keep the portfolio above it (as before: the focused search
// alone was never measured on them above it).
constexpr double kStarvedCallsPerOp = 32;
constexpr double kColdCallsPerOp = 200;  // below: the annealing members start cold
constexpr const char* kColdSearch = "doppler-search:t0=0.0001";
// The focused search alone under kStarvedCallsPerOp on graphs of kStarvedMinOps or more: cold,
// every one-op move from the critical chain (a random op of 60,000 is rarely one that shortens
// the makespan) and mending its transfers where it can, no swap moves (the 20,000-op DAG at 60 s
// on two threads: 251.7 against 256.0 with 80% focus and swaps; section "Mending the chain"),
// and DSC's placement among its starts: with so few calls the start decides, and without it
// `auto` at 10 s ended above its own 1 s result on the 20,000-op DAG (258.8 against DSC's 258.2,
// three seeds; docs/results/parallel.md, section "Never worse with more seconds"); and the level
// placer's (249.8 there in about 2 s, against DSC's 258.2; section "Level by level"). Until the
// forty-fourth session it was doppler-search with the same options: with every move focused
// and mending, the policy only proposed the devices of the moves whose mending failed, and its
// samples never beat the level placer's start, so local-search does the same without torch or
// a policy and without the rollouts' seconds (at 20,000 calls, seeds 0 and 1: 247.88 and 247.85
// against 247.86 and 247.83, in 26 s instead of 56; section "A torch-free starved search").
constexpr const char* kStarvedSearch =
    "local-search:t0=0.0001,focus=1,aim=1,swaps=0,dsc=1,levels=1";
constexpr int kStarvedMinOps = 20000;
// Seconds of the policy's first rollout per op, and per op and device (loading the graph into
// the policy, encoding it, placing it once): one rollout of the shipped policy took 0.57 s on
// 14,194 ops on 8 devices, 3.9 s on 61,846 on 16, 2.2 s on 20,000 on 64 and 13.9 s on 100,000
// on 64 (2-vCPU VM, 2026-11-29), about N x (25 us + 1.7 us x P).
constexpr double kRolloutSecondsPerOp = 30e-6;
constexpr double kRolloutSecondsPerOpDevice = 2e-6;
constexpr double kColdMultilevelT0 = 0.0005;  // multilevel's refinement and auto's, when cold
// Under kTiedCallsPerOp on graphs of kTiedMinOps or more whose repeated layers (repeat_classes)
// hold at least kTiedMinShare of the ops: multilevel's tied search alone, every layer placed
// alike, first on a stand-in of 4 layers (repeat_proxy). At 60 s on 2 threads: the Llama-7B
// training step (0.2 calls per op) 94.9 ms over 3 seeds where the learned search alone found
// 153.7, the forward pass (14,194 ops, 3-4 calls per op) 53.8 where the portfolio found
// 54.5-54.8 (docs/results/parallel.md, sections "Tied layers" and "A stand-in of four layers").
constexpr int kTiedMinOps = 10000;
constexpr double kTiedCallsPerOp = 10;
constexpr double kTiedMinShare = 0.5;
constexpr const char* kTiedSearch = "multilevel:inner=dsc,tied=0.8,t0=0.0005,proxy=4";

// One member's outcome.
struct Member {
  std::string spec;
  std::vector<DeviceId> device_of;
  double makespan = kInf;
  Spent spent;
  std::string error;  // the member failed (its message); its result is not used
};

// Runs member `m.spec` within `share` of `eval` (one call of it kept to score the result), on
// its own copy of the problem when `own` (so a learned member's metered calls count its own
// simulator only), with `threads` threads.
void run_member(Member& m, const Problem& problem, PlaceOptions o, BudgetedEvaluator& eval,
                Budget share, bool own, int threads) {
  try {
    std::unique_ptr<Problem> copy;
    if (own) copy = std::make_unique<Problem>(problem.graph(), problem.platform());
    const Problem& mine = own ? *copy : problem;
    if (share.evaluations > 1) --share.evaluations;
    BudgetedEvaluator part = eval.part(share, mine.simulator(), true);
    o.budget = part.limits();
    o.threads = threads;
    m.device_of = make_placer(m.spec)->place_within(mine, o, part).assignment.device_of;
    m.spent = part.spent_so_far();
    // Scored with the call kept for it: counted even when the time is up or the run was told
    // to stop (which refuse new calls), so that the best member is still known.
    SimWorkspace ws;
    std::optional<double> ms = eval.makespan(m.device_of, ws);
    if (!ms && eval.calls_left() > 0) {
      eval.record(1);
      ms = mine.simulator().makespan(m.device_of, ws);
    }
    if (ms) {
      m.makespan = *ms;
      eval.improved(*ms);
    }
  } catch (const std::exception& e) {
    m.error = e.what();
  }
}

// Runs the members in waves of at most `threads` side by side, each wave with its share of
// `phase` (calls split evenly over all members, seconds over the waves).
void run_members(std::vector<Member>& members, const Problem& problem, const PlaceOptions& options,
                 BudgetedEvaluator& eval, Budget phase, int threads) {
  const int k = static_cast<int>(members.size());
  const int wave = std::min(k, std::max(1, threads));
  const int waves = (k + wave - 1) / wave;
  for (int w = 0; w < waves; ++w) {
    const int first = w * wave, last = std::min(k, first + wave);
    Budget share;
    if (phase.evaluations > 0) share.evaluations = std::max<std::int64_t>(1, phase.evaluations / k);
    if (phase.seconds > 0) share.seconds = std::max(1e-3, phase.seconds / waves);
    const int each = std::max(1, threads / (last - first));
    std::vector<std::jthread> pool;
    for (int i = first + 1; i < last; ++i)
      pool.emplace_back([&, i] {
        run_member(members[static_cast<std::size_t>(i)], problem, options, eval, share, true, each);
      });
    run_member(members[static_cast<std::size_t>(first)], problem, options, eval, share, false,
               each);
  }
}

// The level placer's placement (levels.hpp), a candidate start for the refinement beside the
// members, placed first within a sixteenth of what is left (a pass per call; it ends far sooner
// on most graphs): cheap, and on some graphs ahead of every member at short budgets (the
// reference ffnn: 56.7 at once, where `auto` reached 61.1 in a second without it).
Member level_candidate(const Problem& problem, const PlaceOptions& options,
                       BudgetedEvaluator& eval) {
  Member m{"levels", {}, kInf, {}, {}};
  const Budget left = eval.left();
  Budget share;
  if (left.evaluations > 0) share.evaluations = std::max<std::int64_t>(2, left.evaluations / 16);
  if (left.seconds > 0) share.seconds = left.seconds / 16;
  run_member(m, problem, options, eval, share, false, 1);
  return m;
}

// The whole graph on one device (`single`), scored with one call: where moving activations costs
// more than the devices parallelise (torchvision's video ResNets at batch 1 on 4 x P100, where
// only multilevel got below it: docs/results/video.md), `auto` is never worse than one device.
Member single_candidate(const Problem& problem, const PlaceOptions& options,
                        BudgetedEvaluator& eval) {
  Member m{"single", {}, kInf, {}, {}};
  Budget share;
  share.evaluations = 1;
  run_member(m, problem, options, eval, share, false, 1);
  return m;
}

// "spec 12.3 (4000 calls)" per member, for the note.
std::string describe(const std::vector<Member>& members) {
  std::string out;
  for (const Member& m : members) {
    if (!out.empty()) out += "; ";
    out += m.error.empty() ? fmt::format("{} {:.6g} ({} calls)", m.spec, m.makespan, m.spent.calls)
                           : fmt::format("{} failed: {}", m.spec, m.error);
  }
  return out;
}

// Times a counted simulator call of a round-robin assignment through `eval`: the fastest of
// up to three (0 when no call is left or the time is up).
double measure_call_seconds(const Problem& problem, BudgetedEvaluator& eval) {
  const std::vector<DeviceId> rr =
      RoundRobinPlacer().place_within(problem, {}, eval).assignment.device_of;  // no call
  SimWorkspace ws;
  double fastest = 0;
  for (int k = 0; k < 3; ++k) {
    const Stopwatch sw;
    if (!eval.makespan(rr, ws)) break;
    fastest = k == 0 ? sw.seconds() : std::min(fastest, sw.seconds());
  }
  return fastest;
}

// Whether plan_auto reads the time of a call for `f`: every budget of seconds alone (the members'
// start temperature, and whether the focused search runs alone, follow the calls per op).
bool reads_call_time(const AutoFeatures& f) {
  return f.calls == 0 && f.seconds > 0;
}

// Seconds the learned search spends on its first rollout (an estimate).
double learned_start_seconds(const AutoFeatures& f) {
  return f.ops * (kRolloutSecondsPerOp + kRolloutSecondsPerOpDevice * f.devices);
}

// Whether the learned search can run: a policy, and with a time budget, its first rollout within
// half of it (on 100,000 ops on 64 devices at 5 s, `auto` ran it alone for 15.7 s).
bool learned_fits(const AutoFeatures& f) {
  return f.learned && (f.seconds <= 0 || 2 * learned_start_seconds(f) <= f.seconds);
}

// `spec` with the option tiebreak=T added when its method anneals (local-search, multilevel,
// doppler-search); other specs unchanged.
std::string with_tiebreak(const std::string& spec, TieBreak t) {
  const std::string method = spec.substr(0, spec.find(':'));
  if (method != "local-search" && method != "multilevel" && method != "doppler-search") return spec;
  return fmt::format("{}{}tiebreak={}", spec, spec.size() > method.size() ? "," : ":",
                     static_cast<int>(t));
}

}  // namespace

double calls_per_op(const AutoFeatures& f) {
  if (f.ops <= 0) return kInf;
  if (f.calls > 0) return static_cast<double>(f.calls) / f.ops;
  if (f.seconds > 0 && f.call_seconds > 0)
    return std::max(1, f.threads) * f.seconds / f.call_seconds / f.ops;
  return kInf;
}

AutoPlan plan_auto(const AutoFeatures& f) {
  AutoPlan plan;
  const double candidates = std::pow(static_cast<double>(f.devices), static_cast<double>(f.ops));
  if (candidates <= kExhaustiveCandidates) {
    plan.exhaustive = true;
    plan.why = fmt::format("P^N = {:.0f} <= {:.0f}: the optimum by enumeration", candidates,
                           kExhaustiveCandidates);
    return plan;
  }
  if (f.ops <= kOptimalMaxOps) {
    // Proves most such graphs within a second and otherwise keeps the best of its incumbents;
    // local-search covers the graphs it cannot prove (docs/results/parallel.md, section "Task
    // graphs with known optima").
    // Under a call budget alone its nodes are limited too (optimal_node_limit of its share):
    // deterministic, and short.
    plan.members = {"optimal", "local-search"};
    plan.refine_share = 0;
    plan.why =
        fmt::format("optimal (branch and bound) beside local-search as N <= {}", kOptimalMaxOps);
    return plan;
  }
  const double per_op = calls_per_op(f);
  const bool tied_graph = f.ops >= kTiedMinOps && f.repeated >= kTiedMinShare;
  if (tied_graph && per_op < kTiedCallsPerOp) {
    plan.members.push_back(kTiedSearch);
    plan.refine_share = 0;
    plan.why = fmt::format(
        "{} alone as N >= {}, {:.0f}% of the ops in repeated layers and the budget leaves {:.2g} "
        "calls per op",
        kTiedSearch, kTiedMinOps, 100 * f.repeated, per_op);
    return plan;
  }
  const double starved = tied_graph ? kTiedCallsPerOp : kStarvedCallsPerOp;
  if (f.ops >= kStarvedMinOps && per_op < starved) {
    plan.members.push_back(kStarvedSearch);
    plan.refine_share = 0;
    plan.why = fmt::format("{} alone as N >= {} and the budget leaves {:.2g} calls per op",
                           kStarvedSearch, kStarvedMinOps, per_op);
    return plan;
  }
  const bool learned = learned_fits(f);
  // Under kColdCallsPerOp the annealing members and the refinement start cold (the hot phase
  // does not pay: docs/results/parallel.md, section "Start temperature").
  const bool cold = per_op < kColdCallsPerOp;
  const std::string ml_t0 = cold ? fmt::format(",t0={}", kColdMultilevelT0) : "";
  if (cold) plan.refine_t0 = kColdMultilevelT0;
  plan.members.push_back("multilevel:inner=dsc" + ml_t0);
  std::string why = fmt::format("{} always", plan.members.back());
  const bool short_budget =
      f.seconds > 0 ? f.seconds < kShortSeconds : f.calls > 0 && f.calls <= kShortCalls;
  if (f.ops <= kLocalSearchMaxOps && learned && short_budget) {
    plan.members.push_back(cold ? kColdSearch : "doppler-search");
    why += fmt::format(", {} as N <= {}, a policy and a short budget", plan.members.back(),
                       kLocalSearchMaxOps);
  } else if (f.ops <= kLocalSearchMaxOps) {
    plan.members.push_back("local-search");
    why += fmt::format(", local-search as N <= {}", kLocalSearchMaxOps);
  }
  if (learned && f.ops >= kLearnedMinOps) {
    plan.members.push_back(cold ? kColdSearch : "doppler-search");
    why += fmt::format(", {} as N >= {}", plan.members.back(), kLearnedMinOps);
  } else if (f.ops > kLocalSearchMaxOps) {
    plan.members.push_back("multilevel:inner=dsc,cycles=2" + ml_t0);
    why += fmt::format(", {} as N > {}", plan.members.back(), kLocalSearchMaxOps);
  }
  why += std::isfinite(per_op) ? fmt::format(" ({:.3g} calls per op)", per_op)
                               : std::string(" (calls per op unknown)");
  if (f.learned && !learned)
    why += fmt::format(
        "; no learned search: its first rollout (~{:.2g} s) takes over half the "
        "seconds",
        learned_start_seconds(f));
  plan.why = why;
  return plan;
}

AutoFeatures auto_features(const Problem& problem, int threads, const Budget& budget) {
  AutoFeatures f;
  f.seconds = budget.seconds;
  f.calls = budget.evaluations;
  f.ops = problem.graph().num_nodes();
  f.devices = problem.devices();
  f.threads = std::max(1, threads);
  const CoarsenCosts c = nominal_costs(problem.graph(), problem.cost());
  const double compute = std::accumulate(c.compute.begin(), c.compute.end(), 0.0);
  const double transfer = std::accumulate(c.transfer.begin(), c.transfer.end(), 0.0);
  f.transfer_ratio = compute > 0 ? transfer / compute : 0;
  std::size_t repeated = 0;
  for (const auto& c : repeat_classes(problem.graph())) repeated += c.size();
  f.repeated = f.ops > 0 ? static_cast<double>(repeated) / f.ops : 0;
  return f;
}

namespace {

// Whether doppler-search can be made: false when not built with torch, or without a policy.
bool learned_search_available() {
  try {
    make_placer("doppler-search");
    return true;
  } catch (const InputError&) {
    return false;
  }
}

}  // namespace

AutoPlacer::AutoPlacer(double refine, double t0, TieBreak tiebreak)
    : refine_(refine), t0_(t0), tiebreak_(tiebreak), learned_(learned_search_available()) {}

PlaceResult AutoPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                     BudgetedEvaluator& eval) const {
  const int p = problem.devices();
  const int n = problem.graph().num_nodes();
  if (p == 1 || n == 0)
    return {Assignment{p, std::vector<DeviceId>(static_cast<std::size_t>(n), 0), {}, name()},
            "one device or no op"};
  AutoFeatures f = auto_features(problem, options.threads, eval.limits());
  f.learned = learned_;
  AutoPlan plan = plan_auto(f);
  if (!plan.exhaustive && reads_call_time(f)) {
    f.call_seconds = measure_call_seconds(problem, eval);
    plan = plan_auto(f);
  }
  if (refine_ >= 0) plan.refine_share = refine_;
  if (t0_ >= 0) plan.refine_t0 = t0_;
  if (tiebreak_ != TieBreak::none)
    for (std::string& spec : plan.members) spec = with_tiebreak(spec, tiebreak_);
  if (plan.exhaustive) {
    PlaceResult r = make_placer("exhaustive")->place_within(problem, options, eval);
    r.assignment.method = name();
    r.note = plan.why;
    return r;
  }

  // The members, side by side (after the level placer's candidate when a refinement follows),
  // then annealing from the best of them.
  std::vector<Member> members;
  for (const std::string& s : plan.members) members.push_back({s, {}, kInf, {}, {}});
  Member single = single_candidate(problem, options, eval);
  std::optional<Member> levels;
  if (plan.refine_share > 0) levels = level_candidate(problem, options, eval);
  const Budget left = eval.left();
  Budget phase;
  if (left.evaluations > 0)
    phase.evaluations =
        static_cast<std::int64_t>(std::floor((1 - plan.refine_share) * left.evaluations));
  // 2% of the time stays for scoring the members and refining (a member ends at its limit).
  if (left.seconds > 0) phase.seconds = (1 - plan.refine_share) * 0.98 * left.seconds;
  run_members(members, problem, options, eval, phase, f.threads);
  if (levels) members.push_back(std::move(*levels));
  members.push_back(std::move(single));
  // The shortest placement; a member that placed but could not be scored (its budget ended at
  // the limit) still beats one that failed.
  const auto best =
      std::min_element(members.begin(), members.end(), [](const Member& a, const Member& b) {
        return std::pair(a.device_of.empty(), a.makespan) <
               std::pair(b.device_of.empty(), b.makespan);
      });
  if (best->device_of.empty())
    throw std::runtime_error("auto: every member failed: " + describe(members));
  std::vector<DeviceId> out = best->device_of;
  double out_ms = best->makespan;
  std::string refined = "no refinement (budget spent)";
  if (plan.refine_share <= 0) {
    refined = "no refinement";
  } else if (!eval.spent() && std::isfinite(out_ms)) {
    AnnealSettings as;
    as.t0 = plan.refine_t0;
    as.tiebreak = tiebreak_;
    as.threads = f.threads;
    as.lanes = options.lanes;
    BudgetedEvaluator rest = eval.part(eval.left());
    const AnnealResult r = anneal(problem, out, out_ms, rest, as, options.seed ^ 0xa070ULL);
    refined =
        fmt::format("refined {:.6g} -> {:.6g} ({} calls)", out_ms, r.best_makespan, r.evaluations);
    out = r.best;
    out_ms = r.best_makespan;
  }
  return {Assignment{p, std::move(out), {}, name()},
          fmt::format("{}; members: {}; best {}, {}", plan.why, describe(members), best->spec,
                      refined)};
}

}  // namespace doppler
