#include "common.hpp"

#include <cstdio>
#include <iostream>

#include <spdlog/spdlog.h>

#include "doppler/graph/io/graph_file.hpp"

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

CostModel cost_model_for(const Graph& g) {
  return CostModel::reference(g);
}

ojson meta_json(const Graph& g) {
  ojson j;
  j["name"] = g.meta().name;
  j["origin"] = g.meta().origin;
  j["params"] = g.meta().params;
  return j;
}

}  // namespace doppler::cli
