#pragma once
// Helpers shared by the CLI subcommands: graph loading with logged warnings, cost-model choice,
// JSON output.
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

/// Prints exactly one JSON document on stdout.
void print_json(const ojson& j);

/// Adds `--devices P` (1..kMaxDevices) bound to `devices`.
CLI::Option* add_devices_option(CLI::App& cmd, int& devices, bool required);

/// Adds `--hardware PROFILE` bound to `hardware`.
CLI::Option* add_hardware_option(CLI::App& cmd, std::string& hardware);

/// JSON summary of a graph's metadata (name, origin, params).
ojson meta_json(const Graph& g);

}  // namespace doppler::cli
