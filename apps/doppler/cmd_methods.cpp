// doppler methods [NAME] [--json]: the placement methods of the registry and their options.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/heuristics/placer.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cli {

namespace {

struct MethodsOptions {
  std::string name;  // one method's options; empty: every method
  bool json = false;
};

ojson option_json(const PlacerOption& o) {
  ojson j;
  j["name"] = o.name;
  j["type"] = std::string(option_type_name(o.type));
  j["default"] = o.default_value.empty() ? ojson(nullptr) : ojson(o.default_value);
  j["choices"] = o.choices;
  j["description"] = o.description;
  return j;
}

ojson method_json(const PlacerInfo& info) {
  ojson j;
  j["name"] = info.name;
  j["description"] = info.description;
  j["deterministic"] = info.deterministic;
  j["learned"] = info.learned;
  j["options"] = ojson::array();
  for (const PlacerOption& o : info.options) j["options"].push_back(option_json(o));
  return j;
}

// One method: its description, then a line per option.
void print_method(const PlacerInfo& info) {
  std::cout << fmt::format("{} ({}{}): {}\n", info.name, info.learned ? "learned, " : "",
                           info.deterministic ? "deterministic" : "seeded", info.description);
  if (info.options.empty()) std::cout << "  no options\n";
  for (const PlacerOption& o : info.options) {
    const std::string type = o.type == OptionType::choice
                                 ? fmt::format("{}", fmt::join(o.choices, "|"))
                                 : std::string(option_type_name(o.type));
    std::cout << fmt::format("  {:<16}{:<22}{:<14}{}\n", o.name, type,
                             o.default_value.empty() ? "-" : o.default_value, o.description);
  }
}

void run_methods(const MethodsOptions& o) {
  const std::vector<PlacerInfo> all = placer_infos();
  std::vector<PlacerInfo> shown;
  for (const PlacerInfo& info : all)
    if (o.name.empty() || info.name == o.name) shown.push_back(info);
  if (shown.empty()) {
    for (const std::string_view learned : kLearnedMethodNames)
      if (o.name == learned)
        throw InputError(
            fmt::format("method '{}' is a learned method: this build has no libtorch", o.name));
    std::string names;
    for (const PlacerInfo& info : all) names += (names.empty() ? "" : ", ") + info.name;
    throw InputError(fmt::format("unknown method '{}' (methods: {})", o.name, names));
  }
  if (o.json) {
    ojson j = ojson::array();
    for (const PlacerInfo& info : shown) j.push_back(method_json(info));
    print_json(j);
    return;
  }
  if (!o.name.empty()) return print_method(shown.front());
  for (const PlacerInfo& info : shown)
    std::cout << fmt::format("{:<16}{}{}\n", info.name, info.learned ? "[learned] " : "",
                             info.description);
  std::cout << "\n`doppler methods NAME` lists a method's options (spec: NAME:key=value,...).\n";
}

}  // namespace

void add_methods(CLI::App& app) {
  auto o = std::make_shared<MethodsOptions>();
  auto* cmd = app.add_subcommand(
      "methods",
      "List the placement methods (name, description), or one method's options with their type, "
      "default and meaning; --json for a machine-readable list");
  cmd->add_option("name", o->name, "a method's name: list its options");
  cmd->add_flag("--json", o->json,
                "print a JSON array of methods, each with its options (name, type, default, "
                "choices, description)");
  cmd->callback([o] { run_methods(*o); });
}

}  // namespace doppler::cli
