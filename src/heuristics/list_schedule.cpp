#include "doppler/heuristics/list_schedule.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

ListSchedule::ListSchedule(const Graph& g, const CostModel& cost, int devices, bool defer_inputs)
    : graph_(&g), cost_(&cost), devices_(devices), defer_inputs_(defer_inputs) {
  cost.check_devices(devices);
  reset();
}

void ListSchedule::reset() {
  const auto n = static_cast<std::size_t>(graph_->num_nodes());
  const auto p = static_cast<std::size_t>(devices_);
  placed_ = 0;
  makespan_ = 0;
  device_.assign(n, -1);
  start_.assign(n, 0);
  finish_.assign(n, 0);
  load_.assign(p, 0);
  slot_free_.assign(p, {});
  for (std::size_t d = 0; d < p; ++d)
    slot_free_[d].assign(static_cast<std::size_t>(cost_->slots(static_cast<DeviceId>(d))), 0.0);
  pending_.resize(n);
  cand_pos_.assign(n, -1);
  candidates_.clear();
  order_.clear();
  for (NodeId v = 0; v < graph_->num_nodes(); ++v) {
    int pending = 0;
    for (NodeId u : graph_->predecessors(v)) pending += !deferred(u);
    pending_[static_cast<std::size_t>(v)] = pending;
    if (pending == 0 && !deferred(v)) {
      cand_pos_[static_cast<std::size_t>(v)] = static_cast<int>(candidates_.size());
      candidates_.push_back(v);
    }
  }
}

double ListSchedule::arrival(NodeId v, DeviceId d) const {
  double t = 0;
  for (EdgeId e : graph_->in_edges(v)) {
    const NodeId u = graph_->edge(e).src;
    const DeviceId du = device_[static_cast<std::size_t>(u)];
    if (du < 0) continue;  // a deferred input: it will be placed on d
    t = std::max(t, finish_[static_cast<std::size_t>(u)] + cost_->transfer(e, du, d));
  }
  return t;
}

double ListSchedule::free_at(DeviceId d) const {
  const auto& s = slot_free_[static_cast<std::size_t>(d)];
  return *std::min_element(s.begin(), s.end());
}

double ListSchedule::earliest_finish(NodeId v, DeviceId d) const {
  return earliest_start(v, d) + cost_->compute(v, d);
}

void ListSchedule::place(NodeId v, DeviceId d) {
  const auto vi = static_cast<std::size_t>(v);
  if (cand_pos_[vi] < 0)
    throw std::logic_error(fmt::format("ListSchedule::place: op {} is not a candidate", v));
  for (NodeId u : graph_->predecessors(v))
    if (device_[static_cast<std::size_t>(u)] < 0) commit(u, d, 0.0);  // deferred input
  commit(v, d, earliest_start(v, d));
  // Swap-remove v from the candidates, then add successors that became ready.
  const int pos = cand_pos_[vi];
  const NodeId last = candidates_.back();
  candidates_[static_cast<std::size_t>(pos)] = last;
  cand_pos_[static_cast<std::size_t>(last)] = pos;
  candidates_.pop_back();
  cand_pos_[vi] = -1;
  for (NodeId w : graph_->successors(v))
    if (--pending_[static_cast<std::size_t>(w)] == 0) {
      cand_pos_[static_cast<std::size_t>(w)] = static_cast<int>(candidates_.size());
      candidates_.push_back(w);
    }
}

void ListSchedule::commit(NodeId v, DeviceId d, double start) {
  const auto vi = static_cast<std::size_t>(v);
  const double c = cost_->compute(v, d);
  auto& slots = slot_free_[static_cast<std::size_t>(d)];
  auto slot = std::min_element(slots.begin(), slots.end());
  *slot = std::max(*slot, start + c);
  device_[vi] = d;
  start_[vi] = start;
  finish_[vi] = start + c;
  load_[static_cast<std::size_t>(d)] += c;
  makespan_ = std::max(makespan_, start + c);
  order_.push_back(v);
  ++placed_;
}

}  // namespace doppler
