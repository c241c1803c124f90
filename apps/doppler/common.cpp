#include "common.hpp"

#include <charconv>
#include <cstdio>
#include <iostream>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/hardware/platform_for.hpp"
#include "doppler/hardware/shipped.hpp"
#include "doppler/heuristics/budget.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cli {

Graph load_graph_logged(const std::string& path) {
  std::vector<std::string> warnings;
  Graph g = load_graph(path, &warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  return g;
}

void warn_pricing(const Graph& g, const std::string& hardware, const Platform& platform) {
  if (const std::string w = pricing_warning(g, hardware); !w.empty())
    spdlog::warn("{} (drop --hardware)", w);
  if (const std::string w = kernel_coverage_warning(g, platform); !w.empty()) spdlog::warn("{}", w);
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

int devices_for(const Graph& g, int given) {
  int recorded = 0;
  if (const auto it = g.meta().params.find("devices"); it != g.meta().params.end()) {
    const auto [end, ec] =
        std::from_chars(it->second.data(), it->second.data() + it->second.size(), recorded);
    if (ec != std::errc() || end != it->second.data() + it->second.size() || recorded < 1 ||
        recorded > kMaxDevices)
      recorded = 0;
  }
  if (given > 0 && recorded > 0 && given != recorded)
    spdlog::warn("{} records {} devices; placing on {} (--devices)", g.meta().name, recorded,
                 given);
  return given > 0 ? given : recorded > 0 ? recorded : kDefaultDevices;
}

CLI::Option* add_graph_devices_option(CLI::App& cmd, int& devices) {
  return add_devices_option(cmd, devices, false)
      ->description(fmt::format("number of devices P (1..{}; default: the count the graph "
                                "records, else {})",
                                kMaxDevices, kDefaultDevices));
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

CLI::Validator non_negative() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double x = 0;
        if (!CLI::detail::lexical_cast(input, x)) return "must be a number, found " + input;
        if (!(x >= 0)) return "must be >= 0, found " + input;
        return {};
      },
      ">= 0");
}

void add_threads_option(CLI::App& cmd, int& threads, int& lanes, bool default_all) {
  threads = default_all ? 0 : 1;
  cmd.add_option(
         "--threads", threads,
         fmt::format("threads of each search (local-search, multilevel, doppler-search, "
                     "auto: chains that exchange their best); 0: every core ({}); "
                     "default {} (the result depends on the count, not on timing, "
                     "under a call budget)",
                     std::max(1u, std::thread::hardware_concurrency()), default_all ? "0" : "1"))
      ->check(CLI::Range(0, 1024));
  lanes = 0;
  cmd.add_option("--lanes", lanes,
                 "speculative lanes of each annealing chain: the threads become threads / K "
                 "chains, each simulating K proposed moves at once and taking the first it "
                 "accepts (pays on large graphs, whose calls are slow); 0: the rule (docs/cli.md), "
                 "1: chains only")
      ->check(CLI::Range(0, 1024));
}

int resolve_threads(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void add_budget_options(CLI::App& cmd, std::int64_t& calls, double& seconds,
                        const std::string& what, std::int64_t default_calls) {
  const std::string calls_default =
      default_calls > 0 ? fmt::format("default {}", default_calls)
                        : fmt::format(
                              "default: the method's own, {} for searches, {} for trained methods, "
                              "unless --time-budget is given",
                              kDefaultSearchCalls, kDefaultTrainingCalls);
  cmd.add_option(
         "--budget", calls,
         fmt::format("simulator calls allowed to {} (training included; {})", what, calls_default))
      ->check(non_negative());
  cmd.add_option("--time-budget", seconds,
                 fmt::format("wall-clock seconds allowed to {} (0: no time limit; with "
                             "--budget, the first limit reached ends the run)",
                             what))
      ->check(non_negative());
}

ojson meta_json(const Graph& g) {
  ojson j;
  j["name"] = g.meta().name;
  j["origin"] = g.meta().origin;
  j["params"] = g.meta().params;
  return j;
}

}  // namespace doppler::cli
