#include "doppler/heuristics/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <random>

#include "candidates_by_b_level.hpp"

namespace doppler {

namespace {
bool tied(double a, double b) {
  return std::fabs(a - b) <= kTieTolerance * std::max(std::fabs(a), std::fabs(b));
}

// The ops tied with the largest b-level among `c`'s candidates, ascending ids:
// critical_path_selections without a scan of every candidate (b-levels are non-negative, so the
// ops tied with the largest are a prefix of c's order).
std::vector<NodeId> tied_selections(const detail::CandidatesByBLevel& c) {
  const double best = c.order().begin()->first;
  std::vector<NodeId> out;
  for (auto it = c.order().begin(); it != c.order().end() && tied(it->first, best); ++it)
    out.push_back(it->second);
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

std::vector<NodeId> critical_path_selections(const ListSchedule& s,
                                             const std::vector<double>& b_level) {
  double best = -1;
  for (NodeId v : s.candidates()) best = std::max(best, b_level[static_cast<std::size_t>(v)]);
  std::vector<NodeId> out;
  for (NodeId v : s.candidates())
    if (tied(b_level[static_cast<std::size_t>(v)], best)) out.push_back(v);
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<DeviceId> critical_path_devices(const ListSchedule& s, NodeId v) {
  std::vector<double> est(static_cast<std::size_t>(s.devices()));
  double best = 0;
  for (DeviceId d = 0; d < s.devices(); ++d) {
    est[static_cast<std::size_t>(d)] = s.earliest_start(v, d);
    if (d == 0 || est[static_cast<std::size_t>(d)] < best) best = est[static_cast<std::size_t>(d)];
  }
  std::vector<DeviceId> out;
  for (DeviceId d = 0; d < s.devices(); ++d)
    if (tied(est[static_cast<std::size_t>(d)], best)) out.push_back(d);
  return out;
}

PlaceResult CriticalPathPlacer::place_within(const Problem& problem, const PlaceOptions& options,
                                             BudgetedEvaluator& /*eval*/) const {
  ListSchedule s(problem.graph(), problem.cost(), problem.devices(), options.colocate_inputs);
  const auto& bl = problem.analysis().b_level();
  std::mt19937_64 rng(options.seed);
  const auto pick = [&](const auto& tied_items) {
    if (!random_ties_ || tied_items.size() == 1) return tied_items.front();
    return tied_items[std::uniform_int_distribution<std::size_t>(0, tied_items.size() - 1)(rng)];
  };
  detail::CandidatesByBLevel candidates(s, bl);
  while (!s.done()) {
    const NodeId v = pick(tied_selections(candidates));
    s.place(v, pick(critical_path_devices(s, v)));
    candidates.placed(v);
  }
  return Assignment{problem.devices(), s.device_of(), s.order(), name()};
}

}  // namespace doppler
