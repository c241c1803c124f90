#pragma once
// The annealer behind `local-search` and `doppler-search`: simulated annealing over assignments
// scored by the simulator, then first-improvement descent and iterated local search, from a
// given start. Reassignment moves can be proposed by a learned distribution per op.
#include <cstdint>
#include <functional>
#include <random>
#include <span>
#include <vector>

#include "doppler/heuristics/placer.hpp"

namespace doppler {

/// Device weights proposed for reassigning each op: `weights[v]` holds P non-negative weights
/// (the device an op moves to is drawn in proportion, its current device excluded); an empty
/// row means uniform. `mix` is the probability that a reassignment uses the proposal rather than
/// the annealer's own rule (a uniform other device, or half the time a neighbour's device).
struct MoveProposal {
  std::vector<std::vector<double>> weights;  ///< [N][P] or [N][0]
  double mix = 0.5;                          ///< in [0, 1]
};

/// Whether the searches anneal in prefix cycles (AnnealSettings::prefix_cycles) when not told.
inline constexpr bool kPrefixCycles = false;

/// How the annealer judges a move that keeps the makespan exactly, by a secondary objective: the
/// sum of the ops' finish times (lower: the ops finish earlier on the whole, leaving slack).
/// With `strict` or `metropolis` the polish's descent also takes moves that keep the makespan
/// and lower that sum. Needs incremental evaluation and one lane (none otherwise).
enum class TieBreak {
  none,        ///< taken (a random walk on the plateau)
  strict,      ///< taken only when the sum does not rise
  metropolis,  ///< when the sum rises by r x N seconds (N ops), taken with probability e^(-r/T)
};

/// Settings of one annealing run.
struct AnnealSettings {
  double t0 = 0.03;      ///< start temperature, as a fraction of the start makespan
  double polish = 0.15;  ///< fraction of the budget kept for descent + ILS
  const MoveProposal* proposal = nullptr;  ///< learned reassignment proposals (none: uniform)
  /// Op groups the group move shifts by a device offset (none: the graph's tensor-op groups;
  /// the multilevel placer passes the clusters of the next coarser level). Groups of one op are
  /// ignored.
  const std::vector<std::vector<NodeId>>* groups = nullptr;
  double group_share = 0.25;   ///< probability that a move is a group move (when there are groups)
  bool gather_groups = false;  ///< a group move puts every member on one device (the first
                               ///< member's device + offset) instead of shifting each member
  /// Units of the repeat move (e.g. repeat_units: each repeat class, one role in every layer,
  /// and every other op alone): a repeat move shifts every op of one unit by one device offset,
  /// half the time the offset that puts a random member on a random neighbour's device; with
  /// `focus`, the unit is that of an op drawn from the critical chain. Every op should be in at
  /// most one unit. None: no repeat moves.
  const std::vector<std::vector<NodeId>>* repeats = nullptr;
  /// Probability that a move is a repeat move (when there are units); 0 draws no extra random
  /// number, so results equal those without the option.
  double repeat_share = 0;
  /// Evaluate moves with Simulator::makespan_below and the move's acceptance threshold (its
  /// random number is peeked before the simulation), so a rejected move can stop early. Same
  /// decisions and random draws either way.
  bool early_abort = true;
  /// Evaluate moves with IncrementalSim: resume each move's simulation from a checkpoint of the
  /// current assignment's, taken before the first instant the move can change. Same makespans
  /// and decisions (and so the same result) as full simulation. The current assignment is
  /// simulated once more, uncounted, at the start, at each restart and before the polish.
  bool incremental = true;
  /// Probability that a one-op reassignment picks its op from the current assignment's critical
  /// chain (critical_chain of its schedule) instead of uniformly; 0 draws no extra random number,
  /// so results equal those without the option.
  double focus = 0;
  /// Probability that a focused reassignment mends its op's link in the chain instead: when the
  /// op waited for an input's data sent from another device, the op joins that input's device
  /// or the input joins the op's (even odds); otherwise the move is the usual reassignment.
  /// 0 draws no extra random number, so results equal those without the option.
  double aim = 0;
  /// How a move that keeps the makespan is judged (TieBreak; none: always taken).
  TieBreak tiebreak = TieBreak::none;
  /// Swap moves (two random ops on different devices exchange devices) among the moves; false:
  /// their share goes to one-op reassignments, with the same random draws otherwise. On many
  /// lightly loaded devices a random swap nearly always adds two transfers (the 20,000-op DAG on
  /// 64 devices: docs/results/parallel.md, section "Mending the chain").
  bool swaps = true;
  /// The chain is recomputed (one simulation, counted as a simulator call) before a focused pick
  /// once the assignment has changed and at least this many moves have passed since the last time.
  int focus_refresh = 16;
  /// Threads: that many chains, each with an equal share of the calls left (and all the time),
  /// meeting every 1/16 of a cycle (at least 64 calls) of their own to adopt the best of their
  /// best assignments; the result is the best chain's. Under a time limit without a call limit
  /// they also meet every 1/32 of the seconds, and a meeting evaluates (one call) the merge of
  /// the chains' changes since the last one, adopted when it beats them all. Deterministic for a
  /// thread count under a call budget. 1: one chain on the calling thread (the single-thread
  /// annealer).
  int threads = 1;
  /// Speculative lanes per chain (at most `threads`; the chains are threads / lanes): a chain
  /// proposes that many moves at once from its current assignment, simulates them on a thread
  /// each and takes the first it accepts in proposal order (in descent, the first that
  /// improves); the others are dropped but counted. Pays where most moves are rejected and a
  /// call is slow. Deterministic for (threads, lanes) under a call budget. 1: no lanes; 0: the
  /// rule of default_lanes() for the run's limits.
  int lanes = 1;
  /// Calls in one cycle: past them, annealing starts again (temperature t0 again, a new random
  /// stream) from the best assignment so far, so a larger budget never cools more slowly than
  /// a cycle and the best is kept. 0: max(kDefaultSearchCalls, 10 x ops). A budget within one
  /// cycle gives the same result as without cycles.
  std::int64_t cycle_calls = 0;
  /// Cycles whose lengths do not depend on the budget (under a call limit alone): cycle k has
  /// min(cycle_calls, cycle_calls / 20 x 2^k) calls, and a budget that ends within a cycle cuts
  /// it short instead of fitting its schedule to what is left. With one chain the run of budget B
  /// is then the first B calls of the run of any larger budget (same seed): a larger budget never
  /// ends worse. false: the first cycle's schedule spans min(budget, cycle_calls), every cycle
  /// ends with its polish. Under a time limit both are the same (cycles of cycle_calls).
  bool prefix_cycles = false;
  /// Told of each new best assignment an annealing move finds (device per op, and its makespan),
  /// on the finding chain's thread: the callee synchronises chains. It must not touch the run's
  /// random streams; calls it makes on an evaluator of its own are its affair. Empty: nobody.
  std::function<void(std::span<const DeviceId>, double)> on_best;
};

/// True when the parallel chains of a run with these limits merge their changes at their
/// meetings: a time limit and no call limit (see anneal()).
bool chains_merge(const Budget& limits);

/// The lanes per chain the searches use when not told (PlaceOptions::lanes = 0), from the
/// problem's size, the threads and the run's limits: measured in docs/results/parallel.md.
/// Chains that merge (a time budget alone) get no lanes; otherwise graphs of 8,000 ops or more
/// get min(threads, 4).
int default_lanes(const Problem& problem, int threads, const Budget& limits);

/// The lanes per chain a search on `threads` threads with these limits runs with when asked for
/// `lanes` (0: the rule of default_lanes()): in 1..max(1, threads).
int resolve_lanes(const Problem& problem, int threads, int lanes, const Budget& limits);

/// Result of an annealing run.
struct AnnealResult {
  std::vector<DeviceId> best;    ///< best assignment found (device per op)
  double best_makespan = 0;      ///< its simulated makespan (FIFO)
  std::int64_t evaluations = 0;  ///< simulator calls made by the run
};

/// Improves `start` (whose makespan `start_makespan` is known and not re-evaluated) until
/// `budget` is spent, evaluating through it: its call limit and/or its time limit (at least
/// one must be set; give a part() of a larger run's evaluator, so the temperature schedule
/// spans this run's own limits). Moves reassign one
/// op, swap the devices of two ops, or shift a group by a device offset; a move is accepted when
/// it is no longer, or with probability exp(-increase / T) (Metropolis; with early abort the
/// threshold is known before the simulation, same decisions and random draws); the temperature
/// T falls geometrically from t0 x start_makespan; the last `polish` fraction of the
/// budget is a first-improvement descent then iterated local search; past cycle_calls the
/// schedule starts again from the best (cycles); threads > 1 runs parallel chains (see
/// AnnealSettings::threads). Every new best is reported to `budget.improved()`. Deterministic
/// in `seed` (and the thread count).
AnnealResult anneal(const Problem& problem, std::vector<DeviceId> start, double start_makespan,
                    BudgetedEvaluator& budget, const AnnealSettings& settings, std::uint64_t seed);

}  // namespace doppler
