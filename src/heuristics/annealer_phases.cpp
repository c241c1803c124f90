// The annealer's phases: annealing with restarts from the best, meetings with the other chains,
// then the polish (descent and iterated local search).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "annealer.hpp"

namespace doppler::detail {

std::pair<std::vector<DeviceId>, double> Annealer::run(std::vector<DeviceId> start,
                                                       double start_ms) {
  best_ = std::move(start);
  best_ms_ = start_ms;
  cur_ = best_;
  cur_ms_ = best_ms_;
  rebase(cur_);
  anneal_phase();
  polish();
  return {std::move(best_), best_ms_};
}

void Annealer::anneal_phase() {
  constexpr std::int64_t restart_after = 2000;
  const double polish = s_.polish;
  const double t_start = s_.t0 * best_ms_, t_end = t_start * 1e-4;
  while (!budget_.spent() && progress() < 1 - polish) {
    const double temp = t_start * std::pow(t_end / t_start, progress() / (1 - polish));
    if (lanes_) {
      since_improvement_ += step_lanes(temp);
    } else {
      propose_move();
      metropolis(temp);
      ++since_improvement_;
    }
    if (since_improvement_ >= restart_after) restart();
    if (meet()) restart();
  }
}

double Annealer::progress() const {
  if (span_ <= 0) return budget_.fraction();
  return std::min(1.0, static_cast<double>(budget_.calls()) / static_cast<double>(span_));
}

void Annealer::restart() {
  cur_ = best_;
  cur_ms_ = best_ms_;
  since_improvement_ = 0;
  rebase(cur_);
  focus_.changed();
}

bool Annealer::meet() {
  if (!link_ || !link_->exchange->due(link_->chain, *link_->calls) || budget_.spent()) return false;
  double ms = 0;
  const std::vector<DeviceId>* other =
      link_->exchange->meet(link_->chain, *link_->calls, best_, best_ms_, ms);
  if (!other) return false;
  best_ = *other;
  best_ms_ = ms;
  return true;
}

void Annealer::descend(std::vector<DeviceId>& a, double& a_ms) {
  if (lanes_) return descend_lanes(a, a_ms);
  bool improved = true;
  while (improved && !budget_.spent()) {
    improved = false;
    std::shuffle(ops_.begin(), ops_.end(), rng_);
    for (NodeId v : ops_) {
      const DeviceId old = a[static_cast<std::size_t>(v)];
      for (DeviceId d = 0; d < p_ && !budget_.spent(); ++d) {
        if (d == old) continue;
        a[static_cast<std::size_t>(v)] = d;
        const double ms = eval_below(a, std::span<const NodeId>(&v, 1), a_ms);
        if (ms < a_ms || (ms == a_ms && tie_rise() < 0)) {
          accept_base();
          a_ms = ms;
          improved = true;
          if (&a == &best_) budget_.improved(ms);
          break;
        }
        a[static_cast<std::size_t>(v)] = old;
      }
      if (meet() && &a == &best_) {  // descend from the adopted best
        rebase(best_);
        improved = true;
        break;
      }
      if (budget_.spent()) break;
    }
  }
}

void Annealer::descend_lanes(std::vector<DeviceId>& a, double& a_ms) {
  bool improved = true;
  while (improved && !budget_.spent()) {
    improved = false;
    std::shuffle(ops_.begin(), ops_.end(), rng_);
    std::size_t next = 0;  // position in ops_ x devices: next / p_ is the op's index
    const std::size_t end = n_ * static_cast<std::size_t>(p_);
    while (next < end && !budget_.spent()) {
      const std::size_t lanes = lanes_now();
      moves_.clear();
      std::size_t at = next;
      for (; at < end && moves_.size() < lanes; ++at) {
        const NodeId v = ops_[at / static_cast<std::size_t>(p_)];
        const auto d = static_cast<DeviceId>(at % static_cast<std::size_t>(p_));
        if (d == a[static_cast<std::size_t>(v)]) continue;
        moves_.push_back({{{v, d}}, a_ms});
        positions_.resize(moves_.size());
        positions_.back() = at;
      }
      if (moves_.empty()) break;
      lane_ms_.resize(moves_.size());
      budget_.record(static_cast<std::int64_t>(moves_.size()));
      lanes_->evaluate(moves_, lane_ms_);
      next = at;
      for (std::size_t i = 0; i < moves_.size(); ++i) {
        if (!(lane_ms_[i] < a_ms)) continue;
        const auto [v, d] = moves_[i].changes.front();
        a[static_cast<std::size_t>(v)] = d;
        lanes_->accept(static_cast<int>(i), moves_[i]);
        a_ms = lane_ms_[i];
        improved = true;
        if (&a == &best_) budget_.improved(a_ms);
        const std::size_t pp = static_cast<std::size_t>(p_);
        next = (positions_[i] / pp + 1) * pp;  // the next op
        break;
      }
      if (meet() && &a == &best_) {  // descend from the adopted best
        rebase(best_);
        improved = true;
        break;
      }
    }
  }
}

void Annealer::polish() {
  ops_.resize(n_);
  std::iota(ops_.begin(), ops_.end(), 0);
  rebase(best_);
  descend(best_, best_ms_);
  std::uniform_int_distribution<int> kicks(
      2, std::max(2, static_cast<int>(std::min<std::size_t>(n_, 8))));
  while (!budget_.spent()) {
    meet();
    cur_ = best_;
    const int k = kicks(rng_);
    for (int i = 0; i < k; ++i) {
      const auto v = pick_op_(rng_);
      cur_[v] = (cur_[v] + pick_shift_(rng_)) % p_;
    }
    cur_ms_ = eval(cur_);
    descend(cur_, cur_ms_);
    if (cur_ms_ < best_ms_) {
      best_ms_ = cur_ms_;
      best_ = cur_;
      budget_.improved(best_ms_);
    }
  }
}

}  // namespace doppler::detail
