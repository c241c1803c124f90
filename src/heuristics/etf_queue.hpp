#pragma once
// ETF's choice kept incrementally: the (ready op, device) pair of earliest start without scanning
// every pair at every step (internal to etf.cpp).
#include <cstdint>
#include <queue>
#include <utility>
#include <vector>

#include "doppler/heuristics/list_schedule.hpp"

namespace doppler::detail {

/// The (candidate, device) pair of a ListSchedule with the earliest start, ties to the larger
/// b-level, the lower op, the lower device: the pair a scan of every candidate and device picks.
/// Each candidate's arrival on every device is computed once (when it becomes a candidate, and
/// again when a deferred input of it is placed); a device's start is max(arrival, free time) and
/// its free time only grows, so each device keeps the candidates not yet free to start by
/// arrival, and those that are by b-level. O((N P) log N + E P) over a whole run instead of
/// O(N x ready x P x in-degree).
class EtfQueue {
public:
  /// A queue over `s` (which must outlive it) and the b-levels `bl`; registers s's candidates.
  /// With memory shares (m-ETF), a pair is eligible only while `mem[v]` <= `left[d]` (both must
  /// outlive it; `left` only ever decreases, so a pair once ineligible is dropped for good).
  EtfQueue(const ListSchedule& s, const std::vector<double>& bl,
           const std::vector<double>* mem = nullptr, const std::vector<double>* left = nullptr);
  /// The best eligible pair now; {-1, -1} when no pair is eligible (the caller then ignores the
  /// shares, as m-ETF does).
  std::pair<NodeId, DeviceId> best();
  /// To be called after s.place(v, d): forgets v, registers the new candidates and refreshes the
  /// candidates whose deferred inputs that placement put on d.
  void placed(NodeId v);

private:
  struct Entry {
    double arrival;
    double bl;
    NodeId v;
    std::uint32_t version;
  };
  struct LaterArrival {  // min-heap by arrival, then larger b-level, then lower op
    bool operator()(const Entry& a, const Entry& b) const;
  };
  struct LowerRank {  // max-heap by b-level, then lower op
    bool operator()(const Entry& a, const Entry& b) const;
  };
  using Waiting = std::priority_queue<Entry, std::vector<Entry>, LaterArrival>;
  using Ready = std::priority_queue<Entry, std::vector<Entry>, LowerRank>;

  void add(NodeId v);
  bool stale(const Entry& e) const;
  bool dropped(const Entry& e, DeviceId d) const;  // stale, or no longer fits on d

  const ListSchedule* s_;
  const std::vector<double>* bl_;
  const std::vector<double>* mem_;      // memory per op (m-ETF), or null
  const std::vector<double>* left_;     // memory share left per device (m-ETF), or null
  std::vector<Waiting> waiting_;        // per device: arrival after the device's free time
  std::vector<Ready> ready_;            // per device: arrival at or before it (start = free time)
  std::vector<std::uint32_t> version_;  // per op (0: not registered yet); older entries are stale
};

}  // namespace doppler::detail
