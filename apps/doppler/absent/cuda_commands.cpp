// The command that needs CUDA, in a build without it (DOPPLER_WITH_CUDA=off or no nvcc).
#include "../commands.hpp"
#include "absent_command.hpp"

namespace doppler::cli {

void add_gpus(CLI::App& app) {
  add_absent_command(app, "gpus", "List the GPUs the CUDA backend can use", Component::cuda);
}

// No backend to register: an Engine asked for CUDA says the build has none (exit 2).
void register_backends() {}

bool cuda_usable() {
  return false;
}

}  // namespace doppler::cli
