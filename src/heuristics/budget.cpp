#include "doppler/heuristics/budget.hpp"

#include <algorithm>
#include <limits>
#include <mutex>
#include <stdexcept>

namespace doppler {

Budget resolve(Budget given, std::int64_t default_calls) {
  if (given.evaluations <= 0 && given.seconds <= 0) given.evaluations = default_calls;
  given.evaluations = std::max<std::int64_t>(0, given.evaluations);
  given.seconds = std::max(0.0, given.seconds);
  return given;
}

namespace {
constexpr double kHeartbeatSeconds = 0.2;  // the callback hears from a run at least this often
}  // namespace

struct BudgetedEvaluator::Run {
  explicit Run(const BudgetedEvaluator& r) : root(r) {}
  const BudgetedEvaluator& root;
  mutable std::mutex m;  // guards curve, best, callback and told
  std::vector<ProgressPoint> curve;
  double best = std::numeric_limits<double>::infinity();
  ProgressCallback callback;
  double told = 0;  // run seconds when the callback was last told
  std::atomic<bool> has_callback{false}, stop{false};

  // Tells the callback (m held); a false answer stops the run, and a stopped run tells nothing
  // more (a thread that improves after the stop, or a member scored after it, stays quiet).
  void tell(const ProgressPoint& at) {
    told = at.seconds;
    if (callback && !stop.load() && !callback(at)) stop.store(true);
  }
};

BudgetedEvaluator::BudgetedEvaluator(const Simulator& sim, Budget limits)
    : BudgetedEvaluator(sim, limits, nullptr, true) {}

BudgetedEvaluator::BudgetedEvaluator(const Simulator& sim, Budget limits, BudgetedEvaluator* parent,
                                     bool same_units)
    : sim_(&sim),
      limits_(resolve(limits, 0)),
      parent_(parent),
      same_units_(same_units && (!parent || parent->same_units_)) {
  if (parent_) {
    run_ = parent_->run_;
  } else {
    own_ = std::make_unique<Run>(*this);
    run_ = own_.get();
  }
}

BudgetedEvaluator::~BudgetedEvaluator() = default;

bool BudgetedEvaluator::on_run_simulator() const {
  return same_units_;
}

BudgetedEvaluator BudgetedEvaluator::part(Budget limits) {
  return part(limits, *sim_, true);
}

BudgetedEvaluator BudgetedEvaluator::part(Budget limits, const Simulator& sim, bool same_units) {
  const Budget room = left();
  limits = resolve(limits, 0);
  if (room.evaluations > 0)
    limits.evaluations =
        limits.evaluations > 0 ? std::min(limits.evaluations, room.evaluations) : room.evaluations;
  if (room.seconds > 0)
    limits.seconds = limits.seconds > 0 ? std::min(limits.seconds, room.seconds) : room.seconds;
  return BudgetedEvaluator(sim, limits, this, same_units);
}

double BudgetedEvaluator::seconds() const {
  return clock_.seconds();
}

std::int64_t BudgetedEvaluator::calls_left() const {
  std::int64_t left = limits_.evaluations > 0
                          ? std::max<std::int64_t>(0, limits_.evaluations - calls())
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
  if (run_->stop.load(std::memory_order_relaxed)) return true;
  if (!parent_ && run_->has_callback.load(std::memory_order_relaxed)) heartbeat();
  if (limits_.evaluations > 0 && calls() >= limits_.evaluations) return true;
  // a clock read (~25 ns) is small beside one simulation
  if (limits_.seconds > 0 && !expired_.load(std::memory_order_relaxed) &&
      seconds() >= limits_.seconds)
    expired_.store(true, std::memory_order_relaxed);
  return expired_.load(std::memory_order_relaxed) || (parent_ && parent_->spent());
}

bool BudgetedEvaluator::stop_requested() {
  if (run_->has_callback.load(std::memory_order_relaxed)) heartbeat();
  return run_->stop.load(std::memory_order_relaxed);
}

bool BudgetedEvaluator::watched() const {
  return run_->has_callback.load(std::memory_order_relaxed);
}

void BudgetedEvaluator::heartbeat() {
  const double now = run_->root.seconds();
  std::unique_lock lock(run_->m, std::try_to_lock);
  if (!lock.owns_lock() || now - run_->told < kHeartbeatSeconds) return;
  run_->tell({now, run_->root.calls(), run_->best});
}

void BudgetedEvaluator::improved(double makespan) {
  if (!on_run_simulator()) return;
  const std::lock_guard lock(run_->m);
  if (!(makespan < run_->best)) return;
  run_->best = makespan;
  const ProgressPoint at{run_->root.seconds(), run_->root.calls(), makespan};
  run_->curve.push_back(at);
  run_->tell(at);
}

void BudgetedEvaluator::watch(ProgressCallback callback) {
  const std::lock_guard lock(run_->m);
  run_->callback = std::move(callback);
  run_->has_callback.store(static_cast<bool>(run_->callback));
}

std::vector<ProgressPoint> BudgetedEvaluator::trace() const {
  const std::lock_guard lock(run_->m);
  return run_->curve;
}

double BudgetedEvaluator::best_reported() const {
  const std::lock_guard lock(run_->m);
  return run_->best;
}

double BudgetedEvaluator::fraction() const {
  double f = 0;
  if (limits_.evaluations > 0)
    f = static_cast<double>(calls()) / static_cast<double>(limits_.evaluations);
  if (limits_.seconds > 0) f = std::max(f, seconds() / limits_.seconds);
  return std::min(1.0, f);
}

bool BudgetedEvaluator::charge(std::int64_t n) {
  return !spent() && reserve(n);
}

bool BudgetedEvaluator::reserve(std::int64_t n) {
  if (limits_.evaluations > 0) {
    std::int64_t cur = calls_.load(std::memory_order_relaxed);
    do {
      if (cur + n > limits_.evaluations) return false;
    } while (!calls_.compare_exchange_weak(cur, cur + n, std::memory_order_relaxed));
  } else {
    calls_.fetch_add(n, std::memory_order_relaxed);
  }
  if (parent_ && !parent_->reserve(n)) {
    calls_.fetch_sub(n, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void BudgetedEvaluator::record(std::int64_t n) {
  const std::int64_t now = calls_.fetch_add(n, std::memory_order_relaxed) + n;
  if (limits_.evaluations > 0 && now > limits_.evaluations)
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
