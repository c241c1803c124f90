#include "anneal_exchange.hpp"

#include <algorithm>

namespace doppler::detail {

Exchange::Exchange(int chains, std::int64_t every)
    : every_(std::max<std::int64_t>(1, every)),
      next_(static_cast<std::size_t>(chains), every_),
      offered_(static_cast<std::size_t>(chains), nullptr),
      offered_ms_(static_cast<std::size_t>(chains), std::numeric_limits<double>::infinity()),
      barrier_(chains, Publish{this}) {}

const std::vector<DeviceId>* Exchange::meet(int c, std::int64_t calls,
                                            const std::vector<DeviceId>& best, double ms,
                                            double& out_ms) {
  const auto i = static_cast<std::size_t>(c);
  while (next_[i] <= calls) next_[i] += every_;
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

void Exchange::Publish::operator()() noexcept {
  Exchange& x = *self;
  std::size_t w = x.offered_.size();
  for (std::size_t c = 0; c < x.offered_.size(); ++c)
    if (x.offered_[c] && (w == x.offered_.size() || x.offered_ms_[c] < x.offered_ms_[w])) w = c;
  if (w < x.offered_.size() && x.offered_ms_[w] < x.published_ms_) {
    x.published_ = *x.offered_[w];
    x.published_ms_ = x.offered_ms_[w];
  }
  std::fill(x.offered_.begin(), x.offered_.end(), nullptr);
}

}  // namespace doppler::detail
