#include "doppler/heuristics/budget.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace doppler {

Budget resolve(Budget given, std::int64_t default_calls) {
  if (given.evaluations <= 0 && given.seconds <= 0) given.evaluations = default_calls;
  given.evaluations = std::max<std::int64_t>(0, given.evaluations);
  given.seconds = std::max(0.0, given.seconds);
  return given;
}

BudgetedEvaluator::BudgetedEvaluator(const Simulator& sim, Budget limits)
    : BudgetedEvaluator(sim, limits, nullptr) {}

BudgetedEvaluator::BudgetedEvaluator(const Simulator& sim, Budget limits, BudgetedEvaluator* parent)
    : sim_(&sim), limits_(resolve(limits, 0)), parent_(parent) {}

BudgetedEvaluator BudgetedEvaluator::part(Budget limits) {
  return part(limits, *sim_);
}

BudgetedEvaluator BudgetedEvaluator::part(Budget limits, const Simulator& sim) {
  const Budget room = left();
  limits = resolve(limits, 0);
  if (room.evaluations > 0)
    limits.evaluations =
        limits.evaluations > 0 ? std::min(limits.evaluations, room.evaluations) : room.evaluations;
  if (room.seconds > 0)
    limits.seconds = limits.seconds > 0 ? std::min(limits.seconds, room.seconds) : room.seconds;
  return BudgetedEvaluator(sim, limits, this);
}

double BudgetedEvaluator::seconds() const {
  return clock_.seconds();
}

std::int64_t BudgetedEvaluator::calls_left() const {
  std::int64_t left = limits_.evaluations > 0
                          ? std::max<std::int64_t>(0, limits_.evaluations - calls_)
                          : std::numeric_limits<std::int64_t>::max();
  if (parent_) left = std::min(left, parent_->calls_left());
  return left;
}

double BudgetedEvaluator::seconds_left() const {
  double left = limits_.seconds > 0 ? std::max(0.0, limits_.seconds - seconds())
                                    : std::numeric_limits<double>::infinity();
  if (parent_) left = std::min(left, parent_->seconds_left());
  return left;
}

Budget BudgetedEvaluator::left() const {
  Budget b;
  const std::int64_t calls = calls_left();
  if (calls != std::numeric_limits<std::int64_t>::max()) b.evaluations = calls;
  const double s = seconds_left();
  if (s != std::numeric_limits<double>::infinity()) b.seconds = std::max(1e-9, s);
  return b;
}

bool BudgetedEvaluator::spent() {
  if (limits_.evaluations > 0 && calls_ >= limits_.evaluations) return true;
  if (limits_.seconds > 0 && !expired_)  // a clock read (~25 ns) is small beside one simulation
    expired_ = seconds() >= limits_.seconds;
  return expired_ || (parent_ && parent_->spent());
}

double BudgetedEvaluator::fraction() const {
  double f = 0;
  if (limits_.evaluations > 0)
    f = static_cast<double>(calls_) / static_cast<double>(limits_.evaluations);
  if (limits_.seconds > 0) f = std::max(f, seconds() / limits_.seconds);
  return std::min(1.0, f);
}

bool BudgetedEvaluator::charge(std::int64_t n) {
  if (!allows(n)) return false;
  record(n);
  return true;
}

void BudgetedEvaluator::record(std::int64_t n) {
  calls_ += n;
  if (limits_.evaluations > 0 && calls_ > limits_.evaluations)
    throw std::logic_error("a placement run spent more simulator calls than its budget");
  if (parent_) parent_->record(n);
}

std::optional<double> BudgetedEvaluator::makespan(std::span<const DeviceId> device_of,
                                                  SimWorkspace& ws) {
  if (!charge()) return std::nullopt;
  return sim_->makespan(device_of, ws);
}

std::optional<double> BudgetedEvaluator::makespan(const Assignment& a, DispatchRule rule) {
  if (!charge()) return std::nullopt;
  return sim_->makespan(a, rule);
}

std::optional<double> BudgetedEvaluator::makespan_below(std::span<const DeviceId> device_of,
                                                        SimWorkspace& ws, double cutoff) {
  if (!charge()) return std::nullopt;
  return sim_->makespan_below(device_of, ws, cutoff);
}

std::optional<Schedule> BudgetedEvaluator::simulate(const Assignment& a, DispatchRule rule) {
  if (!charge()) return std::nullopt;
  return sim_->simulate(a, rule);
}

}  // namespace doppler
