#pragma once
// The candidates of a ListSchedule ordered by b-level, kept up to date as ops are placed
// (internal to the critical-path placer and ETF's hurried rest): no scan of every candidate at
// every step, which was quadratic in the graph's width.
#include <set>
#include <utility>
#include <vector>

#include "doppler/heuristics/list_schedule.hpp"

namespace doppler::detail {

/// The candidates of `s` (which must outlive it) by b-level `bl`, largest first, ties to the
/// lower id; O(log N) per placement.
class CandidatesByBLevel {
public:
  /// (b-level, op) pairs in that order.
  struct Larger {
    bool operator()(const std::pair<double, NodeId>& a, const std::pair<double, NodeId>& b) const {
      return a.first != b.first ? a.first > b.first : a.second < b.second;
    }
  };
  using Order = std::set<std::pair<double, NodeId>, Larger>;

  CandidatesByBLevel(const ListSchedule& s, const std::vector<double>& bl) : s_(&s), bl_(&bl) {
    for (NodeId v : s.candidates()) insert(v);
  }
  /// Every candidate, largest b-level first.
  const Order& order() const { return order_; }
  /// The candidate of largest b-level (ties: the lower id); the schedule must not be done.
  NodeId top() const { return order_.begin()->second; }
  /// After s.place(v, d): v leaves, the successors it made ready join (the only new candidates:
  /// deferred inputs gate none, ListSchedule; a repeated edge inserts the same key again).
  void placed(NodeId v) {
    order_.erase({(*bl_)[static_cast<std::size_t>(v)], v});
    for (NodeId w : s_->graph().successors(v))
      if (s_->is_candidate(w)) insert(w);
  }

private:
  void insert(NodeId v) { order_.insert({(*bl_)[static_cast<std::size_t>(v)], v}); }
  const ListSchedule* s_;
  const std::vector<double>* bl_;
  Order order_;
};

}  // namespace doppler::detail
