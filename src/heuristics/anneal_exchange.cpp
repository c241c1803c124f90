#include "anneal_exchange.hpp"

#include <algorithm>
#include <cmath>

namespace doppler::detail {

namespace {

// `plan` with at least one call between meetings.
MeetingPlan at_least_one_call(MeetingPlan plan) {
  plan.every = std::max<std::int64_t>(1, plan.every);
  return plan;
}

}  // namespace

Exchange::Exchange(int chains, const MeetingPlan& plan, std::vector<DeviceId> start,
                   double start_ms, MergeEvaluator merge)
    : plan_(at_least_one_call(plan)),
      next_(static_cast<std::size_t>(chains), plan_.every),
      next_seconds_(static_cast<std::size_t>(chains), plan.every_seconds),
      offered_(static_cast<std::size_t>(chains), nullptr),
      offered_ms_(static_cast<std::size_t>(chains), std::numeric_limits<double>::infinity()),
      published_(std::move(start)),
      published_ms_(start_ms),
      merge_(std::move(merge)),
      barrier_(chains, Publish{this}) {}

bool Exchange::due(int c, const BudgetedEvaluator& chain) const {
  const auto i = static_cast<std::size_t>(c);
  return chain.calls() >= next_[i] ||
         (plan_.every_seconds > 0 && chain.seconds() >= next_seconds_[i]);
}

const std::vector<DeviceId>* Exchange::meet(int c, const BudgetedEvaluator& chain,
                                            const std::vector<DeviceId>& best, double ms,
                                            double& out_ms) {
  const auto i = static_cast<std::size_t>(c);
  while (next_[i] <= chain.calls()) next_[i] += plan_.every;
  if (plan_.every_seconds > 0) {
    const double now = chain.seconds();
    next_seconds_[i] = (std::floor(now / plan_.every_seconds) + 1) * plan_.every_seconds;
  }
  offered_[i] = &best;
  offered_ms_[i] = ms;
  barrier_.arrive_and_wait();
  if (!(published_ms_ < ms)) return nullptr;
  out_ms = published_ms_;
  return &published_;
}

void Exchange::leave(int c) {
  offered_[static_cast<std::size_t>(c)] = nullptr;
  barrier_.arrive_and_drop();
}

std::size_t Exchange::best_offer() const {
  std::size_t w = offered_.size();
  for (std::size_t c = 0; c < offered_.size(); ++c)
    if (offered_[c] && (w == offered_.size() || offered_ms_[c] < offered_ms_[w])) w = c;
  return w;
}

void Exchange::try_merge(std::size_t w) {
  merged_ = *offered_[w];
  std::size_t changed_by_others = 0;
  for (std::size_t c = 0; c < offered_.size(); ++c) {
    if (c == w || !offered_[c]) continue;
    const std::vector<DeviceId>& mine = *offered_[c];
    for (std::size_t v = 0; v < merged_.size(); ++v)
      if (mine[v] != published_[v] && merged_[v] == published_[v]) {
        merged_[v] = mine[v];
        ++changed_by_others;
      }
  }
  if (changed_by_others == 0) return;  // the merge is the best offer itself
  ++merges_;
  const double ms = merge_(merged_);
  if (ms < offered_ms_[w] && ms < published_ms_) {
    published_.swap(merged_);
    published_ms_ = ms;
    ++merges_published_;
  }
}

void Exchange::Publish::operator()() noexcept {
  Exchange& x = *self;
  const std::size_t w = x.best_offer();
  if (w < x.offered_.size()) {
    // A merge needs a base every offer started from: the published assignment.
    if (x.merge_ && x.plan_.merge) {
      try {
        x.try_merge(w);
      } catch (...) {  // a failed evaluation leaves the offers as they are
      }
    }
    if (x.offered_ms_[w] < x.published_ms_) {
      x.published_ = *x.offered_[w];
      x.published_ms_ = x.offered_ms_[w];
    }
  }
  std::fill(x.offered_.begin(), x.offered_.end(), nullptr);
}

}  // namespace doppler::detail
