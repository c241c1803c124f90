#include "doppler/graph/assignment.hpp"

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

void Assignment::validate(const Graph& g, int expected_devices, const std::string& what) const {
  const auto fail = [&](const std::string& msg) { throw InputError(what, 0, msg); };
  if (devices < 1 || devices > kMaxDevices)
    fail(fmt::format("device count {} is out of range (1..{})", devices, kMaxDevices));
  if (expected_devices > 0 && devices != expected_devices)
    fail(fmt::format("assignment is for {} devices, but {} were requested", devices,
                     expected_devices));
  if (static_cast<int>(device_of.size()) != g.num_nodes())
    fail(fmt::format("assignment has {} entries, the graph has {} nodes", device_of.size(),
                     g.num_nodes()));
  for (std::size_t v = 0; v < device_of.size(); ++v)
    if (device_of[v] < 0 || device_of[v] >= devices)
      fail(fmt::format("node {} is on device {}, outside 0..{}", v, device_of[v], devices - 1));
  if (order.empty()) return;
  if (order.size() != device_of.size())
    fail(fmt::format("order has {} entries, the graph has {} nodes", order.size(), g.num_nodes()));
  std::vector<char> seen(order.size(), 0);
  for (NodeId v : order) {
    if (v < 0 || v >= g.num_nodes())
      fail(fmt::format("order names node {}, outside 0..{}", v, g.num_nodes() - 1));
    if (seen[static_cast<std::size_t>(v)]++) fail(fmt::format("order names node {} twice", v));
  }
}

std::vector<int> Assignment::ops_per_device() const {
  std::vector<int> count(static_cast<std::size_t>(devices > 0 ? devices : 0), 0);
  for (DeviceId d : device_of)
    if (d >= 0 && d < devices) ++count[static_cast<std::size_t>(d)];
  return count;
}

}  // namespace doppler
