#include "methods.hpp"

#include <cmath>

#include <fmt/format.h>

#include "common.hpp"

#include "doppler/heuristics/run_placer.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::cli {

std::vector<std::string> all_methods(const Problem& problem) {
  std::vector<std::string> out;
  const double exhaustive_size =
      std::pow(static_cast<double>(problem.devices()), problem.graph().num_nodes());
  for (const PlacerInfo& info : placer_infos())
    if (!info.learned && (info.name != "exhaustive" || exhaustive_size <= 531441) &&
        (info.name != "optimal" || problem.graph().num_nodes() <= 24))
      out.push_back(info.name);
  return out;
}

std::vector<std::string> expand_methods(const std::string& list, const Problem& problem) {
  // Methods are separated by commas, and so are a method's options: a field with '=' (and no
  // ':') continues the previous method's options, e.g. "heft,doppler-sim:il=10,sim=20".
  std::vector<std::string> specs;
  for (std::string_view m : split_fields(list, ',')) {
    const std::string field(trim(m));
    if (field.empty()) continue;
    if (field.find('=') != std::string::npos && field.find(':') == std::string::npos &&
        !specs.empty())
      specs.back() += "," + field;
    else
      specs.push_back(field);
  }
  std::vector<std::string> out;
  for (const std::string& name : specs) {
    if (name == "all") {
      for (const auto& a : all_methods(problem)) out.push_back(a);
    } else if (name == "learned") {
      for (const char* a :
           {"doppler-il", "doppler-sim", "doppler-sim:preset=paper", "doppler-search",
            "doppler-sel", "doppler-plc", "doppler-joint", "placeto", "gdp"})
        out.push_back(a);
    } else {
      validate_method(name);  // before any work starts
      out.push_back(name);
    }
  }
  if (out.empty()) throw InputError("--methods: no method given");
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
  return {run_placer(spec, problem, options), spec, options.seed};
}

PlaceOptions search_options(int seed, std::int64_t calls, double seconds, int threads, int lanes) {
  PlaceOptions o;
  o.seed = static_cast<std::uint64_t>(seed);
  o.budget = {calls, seconds};
  o.threads = resolve_threads(threads);
  o.lanes = lanes;
  return o;
}

std::string budget_text(std::int64_t calls, double seconds, int threads) {
  std::string out = calls > 0 && seconds > 0
                        ? fmt::format("{} simulations or {:g} s", calls, seconds)
                    : seconds > 0 ? fmt::format("{:g} s (no call limit)", seconds)
                                  : fmt::format("{} simulations", calls);
  const int t = resolve_threads(threads);
  return t > 1 ? out + fmt::format(", {} threads per search", t) : out;
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
                       info.options.empty() ? "" : " [" + options_text(info) + "]");
  }
  return out;
}

}  // namespace doppler::cli
