#include "slot_timeline.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace doppler::detail {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

double SlotTimeline::max_gap_of(int t) const {
  return t < 0 ? -kInf : node(t).max_gap;
}

void SlotTimeline::pull(int t) {
  Node& n = node(t);
  n.size = 1 + size_of(n.left) + size_of(n.right);
  n.max_gap = std::max({n.start - n.prev_finish, max_gap_of(n.left), max_gap_of(n.right)});
}

int SlotTimeline::merge(int a, int b) {
  if (a < 0) return b;
  if (b < 0) return a;
  if (node(a).prio > node(b).prio) {
    node(a).right = merge(node(a).right, b);
    pull(a);
    return a;
  }
  node(b).left = merge(a, node(b).left);
  pull(b);
  return b;
}

void SlotTimeline::split(int t, int k, int& a, int& b) {
  if (t < 0) {
    a = b = -1;
    return;
  }
  if (size_of(node(t).left) < k) {
    split(node(t).right, k - size_of(node(t).left) - 1, node(t).right, b);
    a = t;
  } else {
    split(node(t).left, k, a, node(t).left);
    b = t;
  }
  pull(t);
}

void SlotTimeline::set_prev_finish_of_first(int t, double prev_finish) {
  if (t < 0) return;
  if (node(t).left >= 0)
    set_prev_finish_of_first(node(t).left, prev_finish);
  else
    node(t).prev_finish = prev_finish;
  pull(t);
}

const SlotTimeline::Node& SlotTimeline::at(int pos) const {
  int t = root_;
  while (true) {
    const int l = size_of(node(t).left);
    if (pos == l) return node(t);
    if (pos < l) {
      t = node(t).left;
    } else {
      pos -= l + 1;
      t = node(t).right;
    }
  }
}

int SlotTimeline::first_start_at_least(double x) const {
  int t = root_, base = 0, found = size();
  while (t >= 0) {
    if (node(t).start >= x) {
      found = base + size_of(node(t).left);
      t = node(t).left;
    } else {
      base += size_of(node(t).left) + 1;
      t = node(t).right;
    }
  }
  return found;
}

// The first position k > k0 in subtree t (whose first position is `base`) with
// prev_finish + duration <= start, -1 if none. Past k0 every previous finish is at least the
// ready time, so that is the scan's test; subtrees whose largest gap falls short of the duration
// by more than `slack` (rounding of start - prev_finish against prev_finish + duration) are
// skipped.
int SlotTimeline::first_fit_after(int t, int base, int k0, double duration, double slack) const {
  if (t < 0 || base + node(t).size <= k0 + 1 || node(t).max_gap + slack < duration) return -1;
  const Node& n = node(t);
  const int r = first_fit_after(n.left, base, k0, duration, slack);
  if (r >= 0) return r;
  const int k = base + size_of(n.left);
  if (k > k0 && n.prev_finish + duration <= n.start) return k;
  return first_fit_after(n.right, k + 1, k0, duration, slack);
}

SlotTimeline::Fit SlotTimeline::earliest_fit(double ready, double duration) const {
  const int n = size();
  // Before the first interval starting at or after ready + duration nothing fits.
  const int k0 = first_start_at_least(ready + duration);
  if (k0 == n) return {n == 0 ? ready : std::max(ready, at(n - 1).finish), n};
  const double t0 = k0 == 0 ? ready : std::max(ready, at(k0 - 1).finish);
  if (t0 + duration <= at(k0).start) return {t0, k0};
  // The largest |time| held: intervals are in time order and do not overlap.
  const double horizon = std::max(std::abs(at(0).start), std::abs(at(n - 1).finish));
  const double slack = 8 * std::numeric_limits<double>::epsilon() * (horizon + duration);
  const int k = first_fit_after(root_, 0, k0, duration, slack);
  if (k < 0) return {at(n - 1).finish, n};
  return {at(k - 1).finish, k};
}

void SlotTimeline::insert(int pos, double start, double finish) {
  rng_ ^= rng_ << 13, rng_ ^= rng_ >> 17, rng_ ^= rng_ << 5;  // xorshift32
  nodes_.push_back({start, finish, pos == 0 ? -kInf : at(pos - 1).finish, 0, -1, -1, 1, rng_});
  const int x = static_cast<int>(nodes_.size()) - 1;
  pull(x);
  int a = -1, b = -1;
  split(root_, pos, a, b);
  set_prev_finish_of_first(b, finish);
  root_ = merge(merge(a, x), b);
}

}  // namespace doppler::detail
