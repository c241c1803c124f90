#include "etf_queue.hpp"

#include <limits>

namespace doppler::detail {

bool EtfQueue::LaterArrival::operator()(const Entry& a, const Entry& b) const {
  if (a.arrival != b.arrival) return a.arrival > b.arrival;
  if (a.bl != b.bl) return a.bl < b.bl;
  return a.v > b.v;
}

bool EtfQueue::LowerRank::operator()(const Entry& a, const Entry& b) const {
  if (a.bl != b.bl) return a.bl < b.bl;
  return a.v > b.v;
}

EtfQueue::EtfQueue(const ListSchedule& s, const std::vector<double>& bl,
                   const std::vector<double>* mem, const std::vector<double>* left)
    : s_(&s),
      bl_(&bl),
      mem_(mem),
      left_(left),
      waiting_(static_cast<std::size_t>(s.devices())),
      ready_(static_cast<std::size_t>(s.devices())),
      version_(static_cast<std::size_t>(s.graph().num_nodes()), 0) {
  for (NodeId v : s.candidates()) add(v);
}

void EtfQueue::add(NodeId v) {
  const auto vi = static_cast<std::size_t>(v);
  ++version_[vi];
  for (DeviceId d = 0; d < s_->devices(); ++d)
    waiting_[static_cast<std::size_t>(d)].push({s_->arrival(v, d), (*bl_)[vi], v, version_[vi]});
}

bool EtfQueue::stale(const Entry& e) const {
  return !s_->is_candidate(e.v) || e.version != version_[static_cast<std::size_t>(e.v)];
}

bool EtfQueue::dropped(const Entry& e, DeviceId d) const {
  return stale(e) ||
         (left_ && (*mem_)[static_cast<std::size_t>(e.v)] > (*left_)[static_cast<std::size_t>(d)]);
}

std::pair<NodeId, DeviceId> EtfQueue::best() {
  NodeId best_v = -1;
  DeviceId best_d = -1;
  double best_est = std::numeric_limits<double>::infinity(), best_bl = 0;
  for (DeviceId d = 0; d < s_->devices(); ++d) {
    Waiting& w = waiting_[static_cast<std::size_t>(d)];
    Ready& r = ready_[static_cast<std::size_t>(d)];
    const double free = s_->free_at(d);
    // Release the candidates whose inputs are there by the device's free time.
    while (!w.empty() && (dropped(w.top(), d) || w.top().arrival <= free)) {
      if (!dropped(w.top(), d)) r.push(w.top());
      w.pop();
    }
    while (!r.empty() && dropped(r.top(), d)) r.pop();
    const Entry* e = !r.empty() ? &r.top() : (!w.empty() ? &w.top() : nullptr);
    if (!e) continue;
    const double est = !r.empty() ? free : e->arrival;
    const bool better =
        est < best_est ||
        (est == best_est && (e->bl > best_bl || (e->bl == best_bl && e->v < best_v)));
    if (better) {  // devices in increasing order: an equal pair on a later device never wins
      best_est = est;
      best_bl = e->bl;
      best_v = e->v;
      best_d = d;
    }
  }
  return {best_v, best_d};
}

void EtfQueue::placed(NodeId v) {
  const Graph& g = s_->graph();
  for (NodeId w : g.successors(v))
    if (s_->is_candidate(w) && version_[static_cast<std::size_t>(w)] == 0) add(w);  // once
  if (!s_->defers_inputs()) return;
  // The deferred inputs this placement put on v's device were committed just before v (the
  // entry before them is the previous placement's op, never a deferred input): their other
  // consumers now receive them from that device, so their arrivals changed.
  const std::vector<NodeId>& order = s_->order();
  for (std::size_t i = order.size() - 1; i-- > 0;) {
    const NodeId u = order[i];
    if (g.node(u).kind != OpKind::input || g.successors(u).empty()) break;
    for (NodeId w : g.successors(u))
      if (w != v && s_->is_candidate(w)) add(w);
  }
}

}  // namespace doppler::detail
