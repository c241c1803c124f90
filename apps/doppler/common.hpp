#pragma once
// Helpers shared by the CLI subcommands: graph loading with logged warnings, cost-model choice,
// JSON output.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "doppler/graph/cost_model.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/platform_for.hpp"  // platform_for, used with --hardware

namespace doppler::cli {

/// Ordered JSON (keys stay in insertion order in the output).
using ojson = nlohmann::ordered_json;

/// Loads a graph file, logging its warnings on stderr.
Graph load_graph_logged(const std::string& path);
/// Logs pricing_warning(g, hardware) when there is one (a profile pricing a graph that has
/// reference costs only), and kernel_coverage_warning(g, platform) (the platform made from it).
void warn_pricing(const Graph& g, const std::string& hardware, const Platform& platform);

/// Prints exactly one JSON document on stdout.
void print_json(const ojson& j);

/// Adds `--devices P` (1..kMaxDevices) bound to `devices`.
CLI::Option* add_devices_option(CLI::App& cmd, int& devices, bool required);

/// Devices used when --devices is not given and the graph records no count.
inline constexpr int kDefaultDevices = 4;

/// The device count to place `g` on: `given` (0 = --devices not given), else the count the graph
/// records (a generated or task graph's "devices" parameter), else kDefaultDevices. A `given`
/// count that differs from the recorded one is allowed and noted on stderr.
int devices_for(const Graph& g, int given);

/// Adds `--devices P` whose default is the graph's recorded count (devices_for; `devices` starts
/// at 0).
CLI::Option* add_graph_devices_option(CLI::App& cmd, int& devices);

/// Adds `--hardware PROFILE` bound to `hardware`.
CLI::Option* add_hardware_option(CLI::App& cmd, std::string& hardware);

/// Checks that a number is >= 0; fails with "must be >= 0, found X" (CLI::NonNegativeNumber's
/// message prints the whole of DBL_MAX).
CLI::Validator non_negative();

/// Adds `--budget N` (simulator calls) and `--time-budget S` (seconds) bound to `calls` and
/// `seconds`, both >= 0. `what` says who spends them ("each search run"); `default_calls` is
/// the --budget default the help states (0: each method's own, stated as such).
/// Adds `--threads N` bound to `threads` (searches' threads; 0 = every core) and `--lanes K`
/// bound to `lanes` (speculative lanes per annealing chain; 0 = the rule). `default_all`: the
/// default is every core (else 1, as for compare's and bench-suite's reproducible tables).
void add_threads_option(CLI::App& cmd, int& threads, int& lanes, bool default_all);
/// `threads` with 0 replaced by the machine's core count.
int resolve_threads(int threads);

void add_budget_options(CLI::App& cmd, std::int64_t& calls, double& seconds,
                        const std::string& what, std::int64_t default_calls);

/// JSON summary of a graph's metadata (name, origin, params).
ojson meta_json(const Graph& g);

}  // namespace doppler::cli
