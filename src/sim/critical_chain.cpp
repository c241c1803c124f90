#include "doppler/sim/critical_chain.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>

namespace doppler {

namespace {

// Times closer than this (relative) count as equal.
bool same_time(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max({1.0, std::abs(a), std::abs(b)});
}

// Ops of each device sorted by finish time (ties: lower id).
std::vector<std::vector<NodeId>> ops_by_finish(const Schedule& s) {
  std::vector<std::vector<NodeId>> out(static_cast<std::size_t>(s.devices));
  for (std::size_t v = 0; v < s.device.size(); ++v)
    if (s.device[v] >= 0)
      out[static_cast<std::size_t>(s.device[v])].push_back(static_cast<NodeId>(v));
  for (auto& ops : out)
    std::stable_sort(ops.begin(), ops.end(), [&](NodeId a, NodeId b) {
      return s.finish[static_cast<std::size_t>(a)] < s.finish[static_cast<std::size_t>(b)];
    });
  return out;
}

// The op on v's device that finished last no later than v started, with a positive duration
// where one ended exactly then (-1: none).
NodeId device_blocker(const Schedule& s, const std::vector<NodeId>& ops, NodeId v) {
  const double t = s.start[static_cast<std::size_t>(v)];
  auto it = std::upper_bound(ops.begin(), ops.end(), t, [&](double x, NodeId u) {
    return x < s.finish[static_cast<std::size_t>(u)] &&
           !same_time(x, s.finish[static_cast<std::size_t>(u)]);
  });
  // Zero-length ops that ended at t did not hold the device: skip past them to the op that did.
  while (it != ops.begin()) {
    --it;
    const auto u = static_cast<std::size_t>(*it);
    if (*it != v && (s.finish[u] > s.start[u] || !same_time(s.finish[u], t))) return *it;
  }
  return -1;
}

}  // namespace

std::vector<NodeId> critical_chain(const Graph& g, const Schedule& s) {
  const auto n = s.device.size();
  std::vector<NodeId> chain;
  NodeId v = -1;
  for (std::size_t u = 0; u < n; ++u)
    if (s.device[u] >= 0 && (v < 0 || s.finish[u] > s.finish[static_cast<std::size_t>(v)]))
      v = static_cast<NodeId>(u);
  if (v < 0) return chain;
  const auto p = static_cast<std::uint64_t>(std::max(1, s.devices));
  std::unordered_map<std::uint64_t, double> arrival;  // (src, to) -> when the data arrived
  arrival.reserve(s.transfers.size());
  for (const TransferRecord& t : s.transfers) {
    double& a = arrival[static_cast<std::uint64_t>(t.src) * p + static_cast<std::uint64_t>(t.to)];
    a = std::max(a, t.finish);
  }
  const auto by_finish = ops_by_finish(s);
  std::vector<char> seen(n, 0);
  while (v >= 0 && !seen[static_cast<std::size_t>(v)]) {
    const auto vi = static_cast<std::size_t>(v);
    seen[vi] = 1;
    chain.push_back(v);
    if (s.start[vi] > s.ready[vi] && !same_time(s.start[vi], s.ready[vi])) {
      v = device_blocker(s, by_finish[static_cast<std::size_t>(s.device[vi])], v);
      continue;
    }
    NodeId next = -1;
    double latest = -1;
    for (NodeId u : g.predecessors(v)) {
      const auto ui = static_cast<std::size_t>(u);
      if (s.device[ui] < 0) continue;
      double at = s.finish[ui];
      if (s.device[ui] != s.device[vi]) {
        const auto it = arrival.find(static_cast<std::uint64_t>(u) * p +
                                     static_cast<std::uint64_t>(s.device[vi]));
        if (it != arrival.end()) at = it->second;
      }
      if (at > latest || (at == latest && u < next)) {
        latest = at;
        next = u;
      }
    }
    v = next;
  }
  return chain;
}

}  // namespace doppler
