#include "anneal_lanes.hpp"

#include <algorithm>
#include <limits>

namespace doppler::detail {

namespace {

// Ops a lane's incremental base may lag behind its current assignment before it catches up
// (one incremental simulation): each can move the checkpoint its evaluations resume from earlier.
constexpr std::size_t kRebaseAfter = 32;
constexpr double kInf = std::numeric_limits<double>::infinity();
// Polls of an atomic before a waiting side sleeps (a few tens of microseconds).
constexpr int kSpins = 4000;

// Returns once `x` may no longer hold `old`: after spinning a little (the other side is usually
// a few microseconds away), else asleep until notified.
template <class T>
void wait_for_change(const std::atomic<T>& x, T old) {
  for (int i = 0; i < kSpins; ++i) {
    if (x.load(std::memory_order_acquire) != old) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  x.wait(old, std::memory_order_acquire);
}

}  // namespace

struct Lanes::Lane {
  std::optional<IncrementalSim> inc;
  SimWorkspace ws;
  std::vector<DeviceId> cur;    // the chain's current assignment
  std::vector<NodeId> dirty;    // ops where the incremental base may differ from cur
  std::vector<NodeId> changed;  // scratch: dirty + the move's ops
  std::vector<std::pair<NodeId, DeviceId>> undo;
  double reset_ms = 0;
};

Lanes::Lanes(const Simulator& sim, int k, bool incremental, bool early_abort)
    : sim_(sim),
      incremental_(incremental),
      early_abort_(early_abort),
      errors_(static_cast<std::size_t>(k)) {
  for (int l = 0; l < k; ++l) {
    lanes_.push_back(std::make_unique<Lane>());
    if (incremental_) lanes_.back()->inc.emplace(sim_);
  }
  try {
    for (std::size_t l = 1; l < lanes_.size(); ++l)
      threads_.emplace_back([this, l] { lane_loop(l); });
  } catch (...) {  // a thread could not start: release the ones that did before they are joined
    stop();
    throw;
  }
}

Lanes::~Lanes() {
  stop();
}

void Lanes::stop() {
  job_ = Job::stop;
  go_.fetch_add(1, std::memory_order_release);
  go_.notify_all();
}

double Lanes::reset(std::span<const DeviceId> current) {
  job_ = Job::reset;
  reset_to_ = current;
  run_all();
  return lanes_[0]->reset_ms;
}

void Lanes::evaluate(std::span<const LaneMove> moves, std::span<double> out) {
  job_ = Job::evaluate;
  moves_ = moves.subspan(0, std::min(moves.size(), lanes_.size()));
  out_ = out;
  run_all();
}

void Lanes::accept(int i, const LaneMove& move) {
  for (std::size_t l = 0; l < lanes_.size(); ++l) {
    Lane& lane = *lanes_[l];
    for (const auto& [v, d] : move.changes) lane.cur[static_cast<std::size_t>(v)] = d;
    if (static_cast<int>(l) == i && lane.inc) {
      lane.inc->accept();  // its candidate was exactly the new current assignment
      lane.dirty.clear();
    } else {
      for (const auto& change : move.changes) lane.dirty.push_back(change.first);
    }
  }
}

void Lanes::run_all() {
  pending_.store(size() - 1, std::memory_order_relaxed);
  go_.fetch_add(1, std::memory_order_release);
  go_.notify_all();
  lane_loop_step(0);
  for (int left = pending_.load(std::memory_order_acquire); left > 0;
       left = pending_.load(std::memory_order_acquire))
    wait_for_change(pending_, left);
  for (std::exception_ptr& e : errors_)
    if (e) std::rethrow_exception(std::exchange(e, nullptr));
}

void Lanes::lane_loop(std::size_t l) {
  for (std::uint64_t seen = 0;;) {
    while (go_.load(std::memory_order_acquire) == seen) wait_for_change(go_, seen);
    seen = go_.load(std::memory_order_acquire);
    if (job_ == Job::stop) return;
    lane_loop_step(l);
    if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending_.notify_one();
  }
}

void Lanes::lane_loop_step(std::size_t l) {
  try {
    if (job_ == Job::reset)
      reset_lane(*lanes_[l], l == 0);
    else if (l < moves_.size())
      out_[l] = evaluate_lane(*lanes_[l], moves_[l]);
  } catch (...) {
    errors_[l] = std::current_exception();
  }
}

void Lanes::reset_lane(Lane& lane, bool first) {
  lane.cur.assign(reset_to_.begin(), reset_to_.end());
  lane.dirty.clear();
  if (lane.inc)
    lane.reset_ms = lane.inc->reset(lane.cur, false);
  else if (first)
    lane.reset_ms = sim_.makespan(lane.cur, lane.ws);
}

double Lanes::evaluate_lane(Lane& lane, const LaneMove& move) {
  if (lane.inc && lane.dirty.size() > kRebaseAfter) {  // catch the base up with cur
    lane.inc->evaluate(lane.cur, lane.dirty);
    lane.inc->accept();
    lane.dirty.clear();
  }
  lane.undo.clear();
  lane.changed = lane.dirty;
  for (const auto& [v, d] : move.changes) {
    lane.undo.emplace_back(v, lane.cur[static_cast<std::size_t>(v)]);
    lane.cur[static_cast<std::size_t>(v)] = d;
    lane.changed.push_back(v);
  }
  const double cutoff = early_abort_ ? move.cutoff : kInf;
  double ms = 0;
  if (lane.inc)
    ms = lane.inc->evaluate(lane.cur, lane.changed, cutoff);
  else
    ms = early_abort_ ? sim_.makespan_below(lane.cur, lane.ws, cutoff)
                      : sim_.makespan(lane.cur, lane.ws);
  for (auto it = lane.undo.rbegin(); it != lane.undo.rend(); ++it)
    lane.cur[static_cast<std::size_t>(it->first)] = it->second;
  return ms;
}

}  // namespace doppler::detail
