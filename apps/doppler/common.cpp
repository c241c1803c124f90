#include "common.hpp"

#include <cstdio>
#include <iostream>

#include <spdlog/spdlog.h>

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cli {

Graph load_graph_logged(const std::string& path) {
  std::vector<std::string> warnings;
  Graph g = load_graph(path, &warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  return g;
}

void print_json(const ojson& j) {
  std::cout << j.dump(2) << "\n";
  std::cout.flush();
}

CLI::Option* add_devices_option(CLI::App& cmd, int& devices, bool required) {
  auto* opt = cmd.add_option("-d,--devices", devices, "number of devices P (1..1024)")
                  ->check(CLI::Range(1, kMaxDevices));
  if (required) opt->required();
  return opt;
}

CLI::Option* add_hardware_option(CLI::App& cmd, std::string& hardware) {
  std::string names;
  for (const auto& p : shipped_profiles())
    names += (names.empty() ? "" : ", ") + p.name +
             (p.aliases.empty() ? "" : " (" + p.aliases.front() + ")");
  return cmd.add_option("--hardware", hardware,
                        "hardware profile: a shipped name (" + names +
                            ") or a doppler-hardware JSON file; default: the reference model "
                            "(the graph's compute_cost / transfer_cost)");
}

ojson meta_json(const Graph& g) {
  ojson j;
  j["name"] = g.meta().name;
  j["origin"] = g.meta().origin;
  j["params"] = g.meta().params;
  return j;
}

}  // namespace doppler::cli
