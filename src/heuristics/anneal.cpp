#include "doppler/heuristics/anneal.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "anneal_exchange.hpp"
#include "annealer.hpp"

#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::uint64_t kCycleSeedStep = 0x9e3779b97f4a7c15ULL;
constexpr std::uint64_t kChainSeedStep = 0x2545f4914f6cdd1dULL;

// Calls in one annealing cycle (settings.cycle_calls, else max(kDefaultSearchCalls, 10 N)).
std::int64_t cycle_calls(const Problem& problem, const AnnealSettings& s) {
  if (s.cycle_calls > 0) return s.cycle_calls;
  return std::max<std::int64_t>(kDefaultSearchCalls,
                                10 * std::int64_t{problem.graph().num_nodes()});
}

// True when a run metered by `e` anneals in prefix cycles: asked for, and no time limit.
bool prefix_cycles(const AnnealSettings& s, const BudgetedEvaluator& e) {
  return s.prefix_cycles && !std::isfinite(e.seconds_left());
}

// The calls of prefix cycle k: doubling from cycle / kPrefixCycleSplit up to `cycle`.
constexpr std::int64_t kPrefixCycleSplit = 20;
std::int64_t prefix_cycle(std::int64_t cycle, std::uint64_t k) {
  std::int64_t c = std::max<std::int64_t>(1, cycle / kPrefixCycleSplit);
  for (std::uint64_t i = 0; i < k && c < cycle; ++i) c *= 2;
  return std::min(c, cycle);
}

// One chain: cycles of at most `cycle` calls until `chain` is spent, each an annealing run (with
// its temperature schedule over its own cycle) from the best assignment so far. Prefix cycles
// (s.prefix_cycles, no time limit) have budget-free lengths, the last one cut short.
AnnealResult run_chain(const Problem& problem, AnnealResult from, BudgetedEvaluator& chain,
                       const AnnealSettings& s, std::uint64_t seed, std::int64_t cycle,
                       const detail::ChainLink* link) {
  const bool prefix = prefix_cycles(s, chain);
  for (std::uint64_t k = 0; !chain.spent(); ++k) {
    Budget b = chain.left();
    const std::int64_t length = prefix ? prefix_cycle(cycle, k) : cycle;
    if (b.evaluations <= 0 || b.evaluations > length) b.evaluations = length;
    BudgetedEvaluator part = chain.part(b);
    detail::Annealer annealer(problem, part, s, seed + k * kCycleSeedStep);
    annealer.join(link);
    if (prefix) annealer.span(length);
    auto [best, ms] = annealer.run(std::move(from.best), from.best_makespan);
    from.best = std::move(best);
    from.best_makespan = ms;
  }
  return from;
}

// When chains with `each` calls apiece (0: no call limit) meet, within a cycle of `cycle` calls
// and a run whose limits are `limits`: every 1/16 of a cycle or of their share (at least 64
// calls). When they merge (chains_merge: a time limit alone) also every 1/32 of the time; under
// a call limit a merge's call could not be set aside in advance, and the run would no longer
// repeat for its seed.
detail::MeetingPlan meeting_plan(std::int64_t each, std::int64_t cycle, const Budget& limits) {
  detail::MeetingPlan plan;
  plan.every = std::max<std::int64_t>(64, (each > 0 ? std::min(each, cycle) : cycle) / 16);
  if (chains_merge(limits)) {
    plan.every_seconds = limits.seconds / 32;
    plan.merge = true;
  }
  return plan;
}

// `threads` chains (each on its own thread, with 1/threads of the calls left and all of the
// time) that meet to exchange (and without a call limit, merge) their best (detail::Exchange);
// the best of their results.
AnnealResult run_chains(const Problem& problem, const AnnealResult& from, BudgetedEvaluator& run,
                        const AnnealSettings& s, std::uint64_t seed, std::int64_t cycle) {
  const int t = s.threads;
  const std::int64_t left = run.calls_left();
  const bool limited = left < std::numeric_limits<std::int64_t>::max();  // a call limit applies
  const std::int64_t each = limited ? left / t : 0;
  // Prefix cycles meet at budget-free intervals too, so a chain's run stays the start of its run
  // under any larger budget.
  SimWorkspace merge_ws;
  detail::Exchange exchange(t, meeting_plan(prefix_cycles(s, run) ? 0 : each, cycle, run.left()),
                            from.best, from.best_makespan, [&](const std::vector<DeviceId>& d) {
                              const std::optional<double> ms = run.makespan(d, merge_ws);
                              if (!ms) return std::numeric_limits<double>::infinity();
                              run.improved(*ms);
                              return *ms;
                            });
  std::vector<AnnealResult> out(static_cast<std::size_t>(t));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(t));
  const auto chain = [&](int c) {
    const auto i = static_cast<std::size_t>(c);
    try {
      Budget b = run.left();
      if (limited) b.evaluations = std::max<std::int64_t>(1, each + (c < left % t ? 1 : 0));
      BudgetedEvaluator mine = run.part(b);
      const detail::ChainLink link{&exchange, c, &mine};
      out[i] = run_chain(problem, from, mine, s,
                         seed + static_cast<std::uint64_t>(c) * kChainSeedStep, cycle, &link);
    } catch (...) {
      errors[i] = std::current_exception();
      out[i] = from;
    }
    exchange.leave(c);
  };
  {
    std::vector<std::jthread> pool;
    for (int c = 1; c < t; ++c) pool.emplace_back(chain, c);
    chain(0);
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  std::size_t w = 0;
  for (std::size_t c = 1; c < out.size(); ++c)
    if (out[c].best_makespan < out[w].best_makespan) w = c;
  return std::move(out[w]);
}

}  // namespace

bool chains_merge(const Budget& limits) {
  return limits.evaluations <= 0 && limits.seconds > 0;
}

int default_lanes(const Problem& problem, int threads, const Budget& limits) {
  // Below 8,000 ops chains did as well or better; merging chains did as well on every large
  // graph, and better where a call is slowest (parallel.md).
  constexpr NodeId kLaneOps = 8000;
  if (threads < 2 || problem.graph().num_nodes() < kLaneOps || chains_merge(limits)) return 1;
  return std::min(threads, 4);
}

int resolve_lanes(const Problem& problem, int threads, int lanes, const Budget& limits) {
  return std::clamp(lanes > 0 ? lanes : default_lanes(problem, threads, limits), 1,
                    std::max(1, threads));
}

AnnealResult anneal(const Problem& problem, std::vector<DeviceId> start, double start_makespan,
                    BudgetedEvaluator& budget, const AnnealSettings& settings, std::uint64_t seed) {
  const auto n = static_cast<std::size_t>(problem.graph().num_nodes());
  if (start.size() != n) throw InputError("anneal: the start assignment has the wrong size");
  if (budget.limits().evaluations <= 0 && budget.limits().seconds <= 0)
    throw InputError("anneal: give a budget of evaluations or seconds");
  if (settings.proposal && settings.proposal->weights.size() != n)
    throw InputError("anneal: the move proposal has the wrong number of ops");
  budget.improved(start_makespan);
  if (problem.devices() == 1 || n == 0 || budget.spent())
    return {std::move(start), start_makespan, 0};
  const std::int64_t calls0 = budget.calls();
  const std::int64_t cycle = cycle_calls(problem, settings);
  AnnealResult from{std::move(start), start_makespan, 0};
  AnnealSettings s = settings;  // threads become chains of `lanes` threads each
  s.lanes = resolve_lanes(problem, settings.threads, settings.lanes, budget.left());
  s.threads = std::max(1, settings.threads / s.lanes);
  AnnealResult r = s.threads > 1 && budget.calls_left() >= 2 * 64
                       ? run_chains(problem, from, budget, s, seed, cycle)
                       : run_chain(problem, std::move(from), budget, s, seed, cycle, nullptr);
  r.evaluations = budget.calls() - calls0;
  return r;
}

}  // namespace doppler
