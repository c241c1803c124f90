#pragma once
// Logging for translation units that must not include spdlog or fmt: those that include torch,
// since a libtorch built elsewhere (a pip wheel's) ships its own fmt, which clashes with the
// Debian fmt that spdlog is built against (docs/gpu.md, "Torch on the GPU machine").
#include <string>

namespace doppler {

/// Logs `message` as a warning through the program's logger (spdlog's default logger: the CLI
/// prints "doppler: warning: MESSAGE" on stderr).
void log_warning(const std::string& message);

/// Logs `message` as information (shown unless the CLI runs quiet).
void log_info(const std::string& message);

}  // namespace doppler
