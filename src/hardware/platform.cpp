#include "doppler/hardware/platform.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

Platform Platform::reference(int devices) {
  if (devices < 1 || devices > kMaxDevices)
    throw InputError(fmt::format("device count {} is out of range (1..{})", devices, kMaxDevices));
  Platform p;
  p.devices_ = devices;
  return p;
}

Platform Platform::hardware(HardwareProfile profile, int devices) {
  if (devices < 1 || devices > profile.num_devices())
    throw InputError(fmt::format("hardware profile '{}' has {} devices, {} requested", profile.name,
                                 profile.num_devices(), devices));
  Platform p;
  p.devices_ = devices;
  p.profile_ = std::make_shared<const HardwareProfile>(std::move(profile));
  return p;
}

std::string Platform::name() const {
  return is_reference() ? "reference" : profile_->name;
}

std::string graph_dtype(const Graph& g) {
  const auto it = g.meta().params.find("dtype");
  return it == g.meta().params.end() ? "f32" : it->second;
}

namespace {

// Bytes an op reads: each operand's region (its share of the producer's output bytes), or the
// producer's whole output.
double input_bytes(const Graph& g, const ExecDesc& e) {
  double bytes = 0;
  for (const ExecInput& in : e.inputs) {
    const Node& src = g.node(in.src);
    double share = 1;
    if (!in.shape.empty() && src.exec && src.exec->numel() > 0) {
      double region = 1;
      for (std::int64_t x : in.shape) region *= static_cast<double>(x);
      share = std::min(1.0, region / static_cast<double>(src.exec->numel()));
    }
    bytes += share * src.out_bytes;
  }
  return bytes;
}

// Work of every node in FLOPs at device 0's speed: its FLOPs, or, for an op whose kernel has a
// measured cost in the profile, that cost divided by device 0's seconds per FLOP (so device d
// takes it x time_per_work[d] / time_per_work[0]).
std::vector<double> kernel_work(const Graph& g, const HardwareProfile& hw, double spf0) {
  std::vector<double> work(static_cast<std::size_t>(g.num_nodes()));
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& n = g.node(v);
    double w = n.flops;
    if (n.exec && !hw.kernels.empty()) {
      const auto it = hw.kernels.find(n.exec->op);
      if (it != hw.kernels.end()) {
        const KernelCost& k = it->second;
        const double in = k.seconds_per_input_byte > 0 ? input_bytes(g, *n.exec) : 0;
        w = k.seconds(n.flops, n.out_bytes, in) / spf0;
      }
    }
    work[static_cast<std::size_t>(v)] = w;
  }
  return work;
}

}  // namespace

CostModel Platform::cost_model(const Graph& g) const {
  if (is_reference()) return CostModel::reference(g);
  const HardwareProfile& hw = *profile_;
  const std::string dtype = graph_dtype(g);
  const auto p = static_cast<std::size_t>(devices_);
  DeviceCosts dev;
  for (int d = 0; d < devices_; ++d) {
    const DeviceSpec& spec = hw.devices[static_cast<std::size_t>(d)];
    dev.time_per_work.push_back(hw.seconds_per_flop(d, dtype));
    dev.overhead.push_back(spec.launch_overhead);
    dev.slots.push_back(spec.slots);
    dev.copy_share.push_back(spec.copy_share);
    dev.contention.push_back(spec.contention);
  }
  dev.latency.assign(p * p, 0.0);
  dev.delay.assign(p * p, 0.0);
  dev.time_per_size.assign(p * p, 0.0);
  for (int s = 0; s < devices_; ++s)
    for (int d = 0; d < devices_; ++d) {
      if (s == d) continue;
      const RouteCost r = hw.route_cost(s, d);
      const std::size_t k = static_cast<std::size_t>(s) * p + static_cast<std::size_t>(d);
      dev.latency[k] = r.latency + r.delay;
      dev.delay[k] = r.delay;
      dev.time_per_size[k] = 1.0 / r.bandwidth;
    }
  std::vector<double> work = kernel_work(g, hw, dev.time_per_work[0]);
  std::vector<double> size(static_cast<std::size_t>(g.num_edges()));
  for (EdgeId e = 0; e < g.num_edges(); ++e) size[static_cast<std::size_t>(e)] = g.edge_bytes(e);
  return CostModel("hardware:" + hw.name, CostUnit::seconds, std::move(work), std::move(size),
                   std::move(dev));
}

}  // namespace doppler
