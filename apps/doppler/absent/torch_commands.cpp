// The commands that need libtorch, in a build without it (DOPPLER_WITH_TORCH=off or not found).
#include "../commands.hpp"
#include "absent_command.hpp"

namespace doppler::cli {

void add_demo(CLI::App& app) {
  add_absent_command(app, "demo", "Place, train and measure the default workload",
                     Component::torch);
}

void add_train(CLI::App& app) {
  add_absent_command(app, "train", "Train a Doppler policy on one graph", Component::torch);
}

void add_pretrain(CLI::App& app) {
  add_absent_command(app, "pretrain", "Pretrain a Doppler policy on many graphs", Component::torch);
}

}  // namespace doppler::cli
