#include "doppler/heuristics/critical_path.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>

namespace doppler {

namespace {
bool tied(double a, double b) {
  return std::fabs(a - b) <= kTieTolerance * std::max(std::fabs(a), std::fabs(b));
}

// The candidates of a ListSchedule by b-level, largest first (then the lower id), kept up to
// date as ops are placed: critical_path_selections without a scan of every candidate (b-levels
// are non-negative, so the ops tied with the largest are a prefix of this order).
class ByBLevel {
public:
  ByBLevel(const ListSchedule& s, const std::vector<double>& bl) : s_(&s), bl_(&bl) {
    for (NodeId v : s.candidates()) insert(v);
  }
  // The ops tied with the largest b-level, ascending ids.
  std::vector<NodeId> selections() const {
    const double best = order_.begin()->first;
    std::vector<NodeId> out;
    for (auto it = order_.begin(); it != order_.end() && tied(it->first, best); ++it)
      out.push_back(it->second);
    std::sort(out.begin(), out.end());
    return out;
  }
  // After s.place(v, d): v leaves, the successors it made ready join (a successor that is a
  // candidate now waited for v, so it is new; a repeated edge inserts the same key again).
  void placed(NodeId v) {
    order_.erase({(*bl_)[static_cast<std::size_t>(v)], v});
    for (NodeId w : s_->graph().successors(v))
      if (s_->is_candidate(w)) insert(w);
  }

private:
  struct Larger {
    bool operator()(const std::pair<double, NodeId>& a, const std::pair<double, NodeId>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  void insert(NodeId v) { order_.insert({(*bl_)[static_cast<std::size_t>(v)], v}); }
  const ListSchedule* s_;
  const std::vector<double>* bl_;
  std::set<std::pair<double, NodeId>, Larger> order_;
};
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
  ByBLevel candidates(s, bl);
  while (!s.done()) {
    const NodeId v = pick(candidates.selections());
    s.place(v, pick(critical_path_devices(s, v)));
    candidates.placed(v);
  }
  return Assignment{problem.devices(), s.device_of(), s.order(), name()};
}

}  // namespace doppler
