#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "candidates_by_b_level.hpp"
#include "etf_queue.hpp"

#include "doppler/heuristics/list_placers.hpp"
#include "doppler/heuristics/list_schedule.hpp"

namespace doppler {

std::vector<double> memory_proxy(const Graph& g) {
  bool physical = false;
  for (const Node& n : g.nodes()) physical = physical || n.out_bytes > 0;
  std::vector<double> m(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.node(v);
    double ref = n.transfer_cost.value_or(0.0);  // classic model: its costliest out-edge
    if (g.has_edge_transfer_costs()) ref = std::max(ref, g.max_out_transfer_cost(v));
    m[static_cast<std::size_t>(v)] = physical ? n.out_bytes : ref;
  }
  return m;
}

namespace {

// Every this many steps ETF looks at the clock of a time budget.
constexpr int kClockEvery = 32;

// The (op, device) pair of `scan` with the earliest start; ties to the larger b-level, the lower
// op, the lower device. Devices whose memory share `left` the op's `mem` exceeds are passed over
// unless no pair fits (no shares: `left` empty).
std::pair<NodeId, DeviceId> earliest_pair(const ListSchedule& s, const std::vector<NodeId>& scan,
                                          int p, const std::vector<double>& bl,
                                          const std::vector<double>& mem,
                                          const std::vector<double>& left) {
  NodeId best_v = -1;
  DeviceId best_d = -1;
  double best_est = std::numeric_limits<double>::infinity();
  for (int pass = 0; pass < 2 && best_v < 0; ++pass) {
    // Pass 0 honours the memory capacities; pass 1 (only when nothing fits) ignores them.
    for (NodeId v : scan) {
      for (DeviceId d = 0; d < p; ++d) {
        if (pass == 0 && !left.empty() &&
            mem[static_cast<std::size_t>(v)] > left[static_cast<std::size_t>(d)])
          continue;
        const double est = s.earliest_start(v, d);
        bool better = est < best_est;
        if (!better && est == best_est) {
          const double b = bl[static_cast<std::size_t>(v)],
                       bb = bl[static_cast<std::size_t>(best_v)];
          better = b > bb || (b == bb && (v < best_v || (v == best_v && d < best_d)));
        }
        if (better) {
          best_est = est;
          best_v = v;
          best_d = d;
        }
      }
    }
  }
  return {best_v, best_d};
}

}  // namespace

PlaceResult EtfPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                    BudgetedEvaluator& eval) const {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const auto& bl = problem.analysis().b_level();
  ListSchedule s(g, problem.cost(), p, options.colocate_inputs);
  std::vector<double> mem, left;
  if (slack_ >= 0) {
    mem = memory_proxy(g);
    double total = 0;
    for (double x : mem) total += x;
    left.assign(static_cast<std::size_t>(p), (1 + slack_) * total / p);
  }
  int placed = 0, hurried_at = -1;
  std::vector<NodeId> one(1);
  // The choice is kept incrementally; when no pair fits the memory shares (m-ETF), every pair is
  // scanned with the shares ignored.
  detail::EtfQueue queue(s, bl, slack_ < 0 ? nullptr : &mem, slack_ < 0 ? nullptr : &left);
  // Once the time budget is spent: the rest by largest b-level (ties: the lower id), each at
  // its earliest start.
  std::optional<detail::CandidatesByBLevel> hurried;
  while (!s.done()) {
    // (seconds_left() is infinite, and reads no clock, without a time limit)
    if (hurried_at < 0 && placed % kClockEvery == 0 && eval.seconds_left() <= 0) {
      hurried_at = placed;
      hurried.emplace(s, bl);
    }
    if (hurried) one[0] = hurried->top();
    auto [v, d] = hurried ? std::pair<NodeId, DeviceId>{-1, -1} : queue.best();
    if (v < 0) std::tie(v, d) = earliest_pair(s, hurried ? one : s.candidates(), p, bl, mem, left);
    if (slack_ >= 0) left[static_cast<std::size_t>(d)] -= mem[static_cast<std::size_t>(v)];
    s.place(v, d);
    if (hurried)
      hurried->placed(v);
    else
      queue.placed(v);
    ++placed;
  }
  std::string note;
  if (hurried_at >= 0)
    note = fmt::format(
        "time budget spent after {} of {} ops: the rest by largest b-level, "
        "earliest start",
        hurried_at, placed);
  return {Assignment{p, s.device_of(), s.order(), name()}, note};
}

}  // namespace doppler
