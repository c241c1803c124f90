#include "doppler/hardware/platform_for.hpp"

#include <map>

#include <fmt/format.h>

#include "doppler/hardware/shipped.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

Platform platform_for(const Graph& g, const std::string& hardware, int devices) {
  if (!hardware.empty()) return Platform::hardware(load_hardware_profile(hardware), devices);
  if (!g.has_reference_costs()) {
    std::string names;
    for (const auto& p : shipped_profiles()) names += (names.empty() ? "" : ", ") + p.name;
    throw InputError("graph '" + g.meta().name + "' has no reference costs")
        .with_remedy(Remedy::hardware, names);
  }
  return Platform::reference(devices);
}

std::string pricing_warning(const Graph& g, const std::string& hardware) {
  if (hardware.empty() || !g.has_reference_costs()) return "";
  for (const Node& n : g.nodes())
    if (n.flops > 0 || n.out_bytes > 0) return "";
  return "graph '" + g.meta().name + "' has reference costs only (no FLOPs or bytes): profile '" +
         hardware +
         "' would price every op at its fixed overhead alone; simulate it without a "
         "hardware profile";
}

std::string kernel_coverage_warning(const Graph& g, const Platform& platform) {
  if (platform.is_reference() || platform.profile().left_out.empty()) return "";
  const HardwareProfile& p = platform.profile();
  std::map<std::string, int> ops;
  for (const Node& n : g.nodes())
    if (n.exec && p.left_out.count(n.exec->op)) ++ops[n.exec->op];
  if (ops.empty()) return "";
  std::string list;
  for (const auto& [kernel, count] : ops)
    list += fmt::format("{}{} ({} op{})", list.empty() ? "" : ", ", kernel, count,
                        count == 1 ? "" : "s");
  return fmt::format(
      "profile '{}' was calibrated without kernels of graph '{}': {}; it prices them by FLOPs "
      "at its peak (calibrate --kernels-of the graph to measure them)",
      p.name, g.meta().name, list);
}

}  // namespace doppler
