#include "absent_command.hpp"

namespace doppler::cli {

void add_absent_command(CLI::App& app, const std::string& name, const std::string& summary,
                        Component c) {
  const std::string library(component_library(c));
  CLI::App* cmd = app.add_subcommand(name, summary + " [not in this build: needs " + library + "]");
  // Every argument reaches the callback, which says what is missing (--help shows the summary
  // above, with its note).
  cmd->fallthrough(false);
  cmd->allow_extras();
  cmd->prefix_command();
  cmd->callback([name, c] { throw component_absent("doppler " + name, c); });
}

}  // namespace doppler::cli
