#include "doppler/policy/placement_env.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "doppler/heuristics/run_placer.hpp"
#include "doppler/policy/features.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

std::optional<EnvMode> parse_env_mode(const std::string& name) {
  if (name == "sel_plc") return EnvMode::sel_plc;
  if (name == "plc") return EnvMode::plc;
  return std::nullopt;
}

PlacementEnv::PlacementEnv(const Problem& problem, EnvMode mode, bool defer_inputs)
    : problem_(&problem),
      mode_(mode),
      sched_(problem.graph(), problem.cost(), problem.devices(), defer_inputs),
      queued_(static_cast<std::size_t>(problem.graph().num_nodes()), 0),
      reference_(run_placer("critical-path", problem, {}).makespan) {
  reset();
}

void PlacementEnv::reset() {
  sched_.reset();
  heap_.clear();
  std::fill(queued_.begin(), queued_.end(), 0);
  op_ = -1;
  steps_ = 0;
  makespan_ = 0;
  if (mode_ == EnvMode::plc) {
    for (NodeId v : sched_.candidates()) push_new_candidates(v);  // queues v itself
    next_op();
  }
}

bool PlacementEnv::is_candidate(NodeId v) const {
  return v >= 0 && v < problem_->graph().num_nodes() && sched_.is_candidate(v);
}

void PlacementEnv::select(NodeId v) {
  if (!selecting())
    throw InputError(done() ? "select: the episode is over (call reset)"
                            : fmt::format("select: op {} awaits its device first", op_));
  if (!is_candidate(v))
    throw InputError(
        fmt::format("select: op {} is not a candidate (placed already, unknown, or a "
                    "predecessor is unplaced)",
                    v));
  op_ = v;
  ++steps_;
}

void PlacementEnv::place(DeviceId d) {
  if (op_ < 0)
    throw InputError(done() ? "place: the episode is over (call reset)"
                            : "place: select an op first");
  if (d < 0 || d >= problem_->devices())
    throw InputError(fmt::format("place: device {} is not in 0..{}", d, problem_->devices() - 1));
  const NodeId v = op_;
  sched_.place(v, d);
  ++steps_;
  op_ = -1;
  if (done()) {
    makespan_ = problem_->simulator().makespan(sched_.device_of(), ws_);
    return;
  }
  if (mode_ == EnvMode::plc) {
    push_new_candidates(v);
    next_op();
  }
}

std::vector<float> PlacementEnv::device_features() const {
  if (op_ < 0) return {};
  return doppler::device_features(sched_, op_);
}

double PlacementEnv::reward() const {
  if (!done() || reference_ <= 0) return 0;
  return -makespan_ / reference_;
}

// Heap order: y leaves the heap before x (higher b-level, then lower id).
bool PlacementEnv::comes_out_after(NodeId x, NodeId y) const {
  const auto& b = problem_->analysis().b_level();
  const double bx = b[static_cast<std::size_t>(x)], by = b[static_cast<std::size_t>(y)];
  return bx != by ? bx < by : x > y;
}

// Queues the candidates among `placed`'s successors (or `placed` itself when it is a candidate),
// keyed by b-level.
void PlacementEnv::push_new_candidates(NodeId placed) {
  const auto before = [this](NodeId x, NodeId y) { return comes_out_after(x, y); };
  const auto push = [&](NodeId v) {
    auto& q = queued_[static_cast<std::size_t>(v)];
    if (q || !sched_.is_candidate(v)) return;
    q = 1;
    heap_.push_back(v);
    std::push_heap(heap_.begin(), heap_.end(), before);
  };
  push(placed);
  for (NodeId s : problem_->graph().successors(placed)) push(s);
}

void PlacementEnv::next_op() {
  const auto before = [this](NodeId x, NodeId y) { return comes_out_after(x, y); };
  while (!heap_.empty() && op_ < 0) {
    std::pop_heap(heap_.begin(), heap_.end(), before);
    const NodeId v = heap_.back();
    heap_.pop_back();
    if (sched_.is_candidate(v)) op_ = v;  // deferred inputs placed with a consumer are skipped
  }
}

}  // namespace doppler
