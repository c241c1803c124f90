#pragma once
// The annealer (private to src/heuristics): one chain of an annealing run. anneal() runs one or
// more of them (cycles, parallel chains) through this class. Its moves and Metropolis steps are
// in annealer_moves.cpp, its phases (annealing, restarts, meetings, descent, polish) in
// annealer_phases.cpp.
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <utility>
#include <vector>

#include "anneal_exchange.hpp"
#include "anneal_focus.hpp"
#include "anneal_lanes.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/sim/incremental.hpp"

namespace doppler::detail {

// One annealing run: the state its phases share (the current and best assignments, the random
// stream, the evaluators), and the phases as named steps. The order of random draws is part of
// the result: a change here changes every search's placements.
class Annealer {
public:
  // A chain on `problem` spending `budget` under `settings` (both must outlive it), its random
  // stream from `seed`.
  Annealer(const Problem& problem, BudgetedEvaluator& budget, const AnnealSettings& settings,
           std::uint64_t seed);

  // Joins a parallel run: meets the other chains through `link` (null: runs alone).
  void join(const ChainLink* link) { link_ = link; }

  // Spreads the schedule over `calls` calls (> 0) instead of the budget's limits: a budget with
  // fewer calls ends the run within its schedule (prefix cycles).
  void span(std::int64_t calls) { span_ = calls; }

  // Anneals from `start`, then polishes; the best assignment found and its makespan.
  std::pair<std::vector<DeviceId>, double> run(std::vector<DeviceId> start, double start_ms);

private:
  // The makespan of `d` (which becomes the incremental base). The loops check that a call is
  // left before they evaluate: a refused one is a bug (record() throws).
  double eval(const std::vector<DeviceId>& d);

  // The makespan when it is <= cutoff, else some value above it (see makespan_below). `d`
  // differs from the incremental base in the ops `changed`.
  double eval_below(const std::vector<DeviceId>& d, std::span<const NodeId> changed, double cutoff);

  // Makes `d` the incremental base (an uncounted simulation).
  void rebase(const std::vector<DeviceId>& d);

  // The last eval_below()'s assignment becomes the incremental base.
  void accept_base();

  // Predecessors plus successors of v.
  std::size_t degree(NodeId v) const;

  // A uniformly drawn predecessor or successor of v (one draw; degree(v) > 0).
  NodeId random_neighbour(NodeId v);

  // Shifts (or gathers) a random group, recording the old devices in undo_.
  void move_group();

  // Shifts every op of one repeat unit by one device offset (undo_ as above): the unit of a
  // critical-chain op with probability focus, else a uniform one; half the time the offset
  // that puts a random member on a random neighbour's device, else a uniform one.
  void move_repeat();

  // Swaps the devices of two ops on different devices (up to 8 tries; none found: no move).
  void move_swap();

  // Reassigns one op (from the critical chain with probability focus): to the proposal's
  // device, half the time to a neighbour's device, else to a uniform other device. With
  // probability aim a focused pick mends its chain link instead, where repair() can.
  void move_reassign();

  // A focused move that mends the chain link from v to u (what delayed v): when u is an input
  // of v on another device, v joins u's device or u joins v's (one draw, undo_ as above).
  // False (nothing moved, nothing drawn) otherwise: u held v's device, or there is no u.
  bool repair(NodeId v, NodeId u);

  // One Metropolis step at temperature `temp`: accept when ms <= cur_ms, else draw u and accept
  // when u < exp(-(ms - cur_ms) / temp). Peeking at u gives the threshold before the simulation;
  // a run stopped above it is rejected with u drawn, exactly as the full simulation would be.
  void metropolis(double temp);

  // How much the last complete evaluation's sum of op finish times rose over the incremental
  // base's, per op (seconds; negative: fell); 0 unless ties are broken by it
  // (AnnealSettings::tiebreak with incremental evaluation).
  double tie_rise() const;

  // Whether a move that kept the makespan is taken at temperature `temp` (AnnealSettings::
  // tiebreak): always without the rule, when the sum did not rise, or by the Metropolis rule on
  // tie_rise() (one draw, only then).
  bool take_tie(double temp);

  // cur_ has taken an accepted move (makespan ms): the chain focus goes stale, a new best is
  // kept and reported.
  void moved_to(double ms);

  // Applies a random move to cur_ (its old devices in undo_): a group shift, a swap or a
  // reassignment.
  void propose_move();

  // Moves cur_ back to before the last move (undo_).
  void undo();

  // Takes an evaluated move into cur_ (makespan ms) and makes it every lane's current one.
  void take(int lane, const LaneMove& move, double ms);

  // Moves a step on the lanes proposes: one per lane, no more than the calls left (at least one:
  // the loops call only while calls are left).
  std::size_t lanes_now() const;

  // One speculative step on the lanes: as many moves as lanes (and calls left) proposed from
  // cur_, each with its own Metropolis draw, simulated side by side; the first accepted in
  // proposal order is taken, the others are dropped. Returns the moves made (all charged).
  std::int64_t step_lanes(double temp);

  // The share of the schedule done, in [0, 1]: of span() calls when set, else of the budget.
  double progress() const;

  // Annealing until the polish share of the budget: a move, its Metropolis step, and a restart
  // from the best after restart_after moves without improvement.
  void anneal_phase();

  // Continues from the best assignment.
  void restart();

  // Meets the other chains of a parallel run when due (and calls are left): offers best_ and
  // adopts theirs when it is better. True when best_ changed.
  bool meet();

  // First-improvement descent over single-op moves from `a` (its makespan `a_ms`).
  void descend(std::vector<DeviceId>& a, double& a_ms);

  // descend() on the lanes: the next (op, device) pairs of the same order, one per lane, with
  // `a_ms` as cutoff; the first that improves is taken and the descent goes on from the next op,
  // as the one-lane descent does (the pairs after it are dropped).
  void descend_lanes(std::vector<DeviceId>& a, double& a_ms);

  // Polish: descent from the best assignment; while budget remains, perturb the best local
  // optimum (a few random reassignments) and descend again (iterated local search).
  void polish();

  const Graph& g_;
  const int p_;
  const std::size_t n_;
  const Simulator& sim_;
  BudgetedEvaluator& budget_;
  const AnnealSettings& s_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  std::uniform_int_distribution<std::size_t> pick_op_;
  std::uniform_int_distribution<DeviceId> pick_shift_;
  ChainFocus focus_;
  SimWorkspace ws_;
  std::optional<IncrementalSim> inc_;  // holds the current assignment as its base
  std::unique_ptr<Lanes> lanes_;       // speculative lanes (settings.lanes > 1) instead of inc_
  std::vector<LaneMove> moves_;        // the lanes' moves of one step
  std::vector<double> draws_, lane_ms_;
  std::vector<std::size_t> positions_;  // descend_lanes: each move's position
  std::vector<std::vector<NodeId>> groups_;
  std::vector<std::int64_t> repeat_of_;  // the repeat class of each op (-1: none)
  std::vector<DeviceId> cur_, best_;
  double cur_ms_ = 0, best_ms_ = 0;
  std::vector<std::pair<NodeId, DeviceId>> undo_;  // the last move's (op, old device) pairs
  std::vector<NodeId> changed_, ops_;
  std::int64_t since_improvement_ = 0;
  const ChainLink* link_ = nullptr;
  std::int64_t span_ = 0;  // calls the schedule spans (0: the budget's limits)
};

}  // namespace doppler::detail
