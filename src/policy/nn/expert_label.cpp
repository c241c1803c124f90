#include "policy/nn/expert_label.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "doppler/heuristics/critical_path.hpp"
#include "doppler/util/min_cost_matching.hpp"

namespace doppler::nn {

namespace {

bool same_device_spec(const DeviceSpec& a, const DeviceSpec& b) {
  return a.peak_flops == b.peak_flops && a.efficiency == b.efficiency &&
         a.launch_overhead == b.launch_overhead && a.slots == b.slots &&
         a.copy_share == b.copy_share && a.contention == b.contention;
}

// True when every route between distinct devices of the first p has the same link count and the
// same uncontended times for a small and a large transfer.
bool uniform_routes(const HardwareProfile& h, int p) {
  const auto& r0 = h.route(0, 1);
  const double small = h.transfer_time(0, 1, 1.0), large = h.transfer_time(0, 1, 1e9);
  const auto same = [](double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); };
  for (int s = 0; s < p; ++s)
    for (int d = 0; d < p; ++d)
      if (s != d &&
          (h.route(s, d).size() != r0.size() || !same(h.transfer_time(s, d, 1.0), small) ||
           !same(h.transfer_time(s, d, 1e9), large)))
        return false;
  return true;
}

}  // namespace

bool devices_interchangeable(const Problem& problem) {
  const Platform& pl = problem.platform();
  if (pl.is_reference() || pl.devices() == 1) return true;
  const HardwareProfile& h = pl.profile();
  for (int d = 1; d < pl.devices(); ++d)
    if (!same_device_spec(h.devices[0], h.devices[static_cast<std::size_t>(d)])) return false;
  return uniform_routes(h, pl.devices());
}

ExpertLabel make_expert_label(const Problem& problem, std::vector<DeviceId> device_of) {
  ExpertLabel e;
  Assignment a;
  a.devices = problem.devices();
  a.device_of = device_of;
  e.start = problem.simulator().simulate(a).start;
  e.device_of = std::move(device_of);
  e.relabel = devices_interchangeable(problem);
  return e;
}

std::vector<NodeId> expert_selections(const ExpertLabel& label,
                                      const std::vector<NodeId>& candidates) {
  double best = std::numeric_limits<double>::infinity();
  for (NodeId v : candidates) best = std::min(best, label.start[static_cast<std::size_t>(v)]);
  const double tol = kTieTolerance * std::max(1.0, std::abs(best));
  std::vector<NodeId> out;
  for (NodeId v : candidates)
    if (label.start[static_cast<std::size_t>(v)] <= best + tol) out.push_back(v);
  std::sort(out.begin(), out.end());
  return out;
}

Relabelling::Relabelling(int devices)
    : p_(devices),
      count_(static_cast<std::size_t>(devices * devices), 0),
      row_total_(static_cast<std::size_t>(devices), 0),
      col_total_(static_cast<std::size_t>(devices), 0) {}

void Relabelling::record(DeviceId label, DeviceId device) {
  ++count_[static_cast<std::size_t>(label * p_ + device)];
  ++row_total_[static_cast<std::size_t>(label)];
  ++col_total_[static_cast<std::size_t>(device)];
}

std::vector<DeviceId> Relabelling::targets(DeviceId label) const {
  std::vector<double> cost(count_.size());
  for (std::size_t i = 0; i < cost.size(); ++i) cost[i] = -static_cast<double>(count_[i]);
  const std::vector<int> match = min_cost_matching(cost, p_, p_);
  const auto l = static_cast<std::size_t>(label);
  if (row_total_[l] > 0) return {match[l]};
  // A label device without ops yet: any unused device no used label device is matched to.
  std::vector<bool> taken(static_cast<std::size_t>(p_), false);
  for (int r = 0; r < p_; ++r)
    if (row_total_[static_cast<std::size_t>(r)] > 0)
      taken[static_cast<std::size_t>(match[static_cast<std::size_t>(r)])] = true;
  std::vector<DeviceId> out;
  for (int d = 0; d < p_; ++d)
    if (col_total_[static_cast<std::size_t>(d)] == 0 && !taken[static_cast<std::size_t>(d)])
      out.push_back(d);
  if (out.empty()) out.push_back(match[l]);
  return out;
}

}  // namespace doppler::nn
