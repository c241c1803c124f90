#pragma once
// A subcommand of a component this build does not include: listed in `doppler --help` like the
// others, it takes any arguments and fails with one line naming the component (exit 2).
#include <string>

#include <CLI/CLI.hpp>

#include "doppler/util/components.hpp"

namespace doppler::cli {

/// Registers `doppler <name>` (description `summary`) as needing absent component `c`.
void add_absent_command(CLI::App& app, const std::string& name, const std::string& summary,
                        Component c);

}  // namespace doppler::cli
