#include "methods.hpp"

#include <chrono>
#include <cmath>

#include <fmt/format.h>

namespace doppler::cli {

std::vector<std::string> all_methods(const Problem& problem) {
  std::vector<std::string> out;
  const double exhaustive_size =
      std::pow(static_cast<double>(problem.devices()), problem.graph().num_nodes());
  for (const PlacerInfo& info : placer_infos())
    if (!info.learned && (info.name != "exhaustive" || exhaustive_size <= 531441))
      out.push_back(info.name);
  return out;
}

bool method_is_deterministic(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  for (const PlacerInfo& info : placer_infos())
    if (info.name == name)
      return info.deterministic && spec.find("ties=random") == std::string::npos;
  return false;
}

void validate_method(const std::string& spec) {
  make_placer(spec);
}

MethodRun run_method(const std::string& spec, const Problem& problem, const PlaceOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  MethodRun r;
  const auto placer = make_placer(spec);
  r.assignment = placer->place(problem, options);
  r.evaluations = placer->evaluations();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  r.method = spec;
  r.seed = options.seed;
  r.assignment.method = spec;
  r.makespan = problem.simulator().makespan(r.assignment);
  return r;
}

std::string methods_help() {
  std::string out = "Methods (spec: name or name:key=value,...):\n";
  bool learned = false;
  for (const PlacerInfo& info : placer_infos()) {
    if (info.learned && !learned)
      out +=
          "Learned methods (every simulator call counts against --budget, training included; "
          "docs/training.md):\n";
    learned = learned || info.learned;
    out += fmt::format("  {:<15}{}{}\n", info.name, info.description,
                       info.params.empty() ? "" : " [" + info.params + "]");
  }
  return out;
}

}  // namespace doppler::cli
