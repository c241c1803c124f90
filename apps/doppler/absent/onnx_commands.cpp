// The command that needs libonnx, in a build without it (DOPPLER_WITH_ONNX=off or not found).
#include "../commands.hpp"
#include "absent_command.hpp"

namespace doppler::cli {

void add_import(CLI::App& app) {
  add_absent_command(app, "import", "Import an ONNX model as a blocked dataflow graph",
                     Component::onnx);
}

}  // namespace doppler::cli
