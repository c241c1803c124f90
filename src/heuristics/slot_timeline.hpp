#pragma once
// The busy intervals of one device slot, for HEFT's insertion policy (internal to heft.cpp): the
// earliest start at or after a ready time where an op of a given duration fits, in O(log n)
// expected instead of a scan of the slot's intervals from its first.
#include <cstdint>
#include <vector>

namespace doppler::detail {

/// Non-overlapping busy intervals [start, finish) in time order (seconds or cost-model units),
/// kept in a treap by position, each node with the previous interval's finish, its gap (its start
/// minus that finish; unbounded for the first) and its subtree's largest gap.
class SlotTimeline {
public:
  /// Where an op fits: its start and the position to insert its interval at.
  struct Fit {
    double start = 0;
    int pos = 0;
  };

  /// The first position k at which max(ready, finish of interval k-1) + duration <= start of
  /// interval k (past the last interval: always), and that start time: the choice of a scan of
  /// the intervals from the first, bit for bit.
  Fit earliest_fit(double ready, double duration) const;
  /// Inserts [start, finish) at position `pos` (from earliest_fit, so the order is kept).
  void insert(int pos, double start, double finish);
  /// Number of intervals.
  int size() const { return size_of(root_); }

private:
  struct Node {
    double start, finish, prev_finish, max_gap;
    int left = -1, right = -1, size = 1;
    std::uint32_t prio;
  };

  Node& node(int t) { return nodes_[static_cast<std::size_t>(t)]; }
  const Node& node(int t) const { return nodes_[static_cast<std::size_t>(t)]; }
  int size_of(int t) const { return t < 0 ? 0 : node(t).size; }
  double max_gap_of(int t) const;
  void pull(int t);
  int merge(int a, int b);
  void split(int t, int k, int& a, int& b);  // a: the first k intervals
  void set_prev_finish_of_first(int t, double prev_finish);
  int first_start_at_least(double x) const;
  int first_fit_after(int t, int base, int k0, double duration, double slack) const;
  const Node& at(int pos) const;

  std::vector<Node> nodes_;
  int root_ = -1;
  std::uint32_t rng_ = 0x9e3779b9u;
};

}  // namespace doppler::detail
