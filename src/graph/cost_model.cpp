#include "doppler/graph/cost_model.hpp"

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

const char* cost_unit_name(CostUnit u) {
  return u == CostUnit::seconds ? "s" : "ref";
}

CostModel::CostModel(std::string name, CostUnit unit, std::vector<double> work,
                     std::vector<double> size)
    : name_(std::move(name)), unit_(unit), work_(std::move(work)), size_(std::move(size)) {
  finish();
}

CostModel::CostModel(std::string name, CostUnit unit, std::vector<double> work,
                     std::vector<double> size, DeviceCosts devices)
    : name_(std::move(name)),
      unit_(unit),
      work_(std::move(work)),
      size_(std::move(size)),
      devices_(static_cast<int>(devices.time_per_work.size())),
      dev_(std::move(devices)) {
  const auto p = static_cast<std::size_t>(devices_);
  if (devices_ < 1 || dev_.overhead.size() != p || dev_.slots.size() != p ||
      dev_.latency.size() != p * p || dev_.time_per_size.size() != p * p ||
      (!dev_.delay.empty() && dev_.delay.size() != p * p) ||
      (!dev_.copy_share.empty() && dev_.copy_share.size() != p) ||
      (!dev_.contention.empty() && dev_.contention.size() != p))
    throw InputError("cost model '" + name_ + "': inconsistent device tables");
  finish();
}

void CostModel::finish() {
  nominal_compute_.resize(work_.size());
  nominal_transfer_.resize(size_.size());
  const int p = devices_;
  for (std::size_t v = 0; v < work_.size(); ++v) {
    if (p == 0) {
      nominal_compute_[v] = work_[v];
      continue;
    }
    double s = 0;
    for (int d = 0; d < p; ++d) s += compute(static_cast<NodeId>(v), d);
    nominal_compute_[v] = s / p;
  }
  for (std::size_t e = 0; e < size_.size(); ++e) {
    if (p <= 1) {
      nominal_transfer_[e] = p == 0 ? size_[e] : 0;
      continue;
    }
    double s = 0;
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b)
        if (a != b) s += transfer(static_cast<EdgeId>(e), a, b);
    nominal_transfer_[e] = s / (static_cast<double>(p) * (p - 1));
  }
}

CostModel CostModel::reference(const Graph& g) {
  std::vector<double> work(static_cast<std::size_t>(g.num_nodes()));
  std::vector<double> size(static_cast<std::size_t>(g.num_edges()));
  if (g.num_nodes() > 0 && !g.has_reference_costs()) {  // name the first op lacking a cost
    const auto costed = [&](NodeId v) {
      if (!g.node(v).compute_cost) return false;
      if (g.node(v).transfer_cost) return true;
      for (std::size_t i = 0; i < g.successors(v).size(); ++i)
        if (!g.edge(g.out_edge_begin(v) + static_cast<EdgeId>(i)).transfer_cost) return false;
      return true;
    };
    NodeId bad = 0;
    while (bad + 1 < g.num_nodes() && costed(bad)) ++bad;
    throw InputError(
        fmt::format("graph '{}' has no reference costs (node {} lacks compute_cost/transfer_cost); "
                    "use a hardware profile instead",
                    g.meta().name, bad));
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    work[static_cast<std::size_t>(v)] = *g.node(v).compute_cost;
  for (EdgeId e = 0; e < g.num_edges(); ++e)
    size[static_cast<std::size_t>(e)] = g.edge_transfer_cost(e);
  return CostModel("reference", CostUnit::reference, std::move(work), std::move(size));
}

void CostModel::check_devices(int p) const {
  if (p < 1 || p > kMaxDevices)
    throw InputError(fmt::format("device count {} is out of range (1..{})", p, kMaxDevices));
  if (devices_ != 0 && p > devices_)
    throw InputError(
        fmt::format("cost model '{}' has {} devices, {} requested", name_, devices_, p));
}

}  // namespace doppler
