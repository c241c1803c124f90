// The commands that need libtorch, in a build without it (DOPPLER_WITH_TORCH=off or not found).
#include "../commands.hpp"
#include "../learned_commands.hpp"
#include "absent_command.hpp"

namespace doppler::cli {

void prepare_learned(int, char**) {}

void add_demo(CLI::App& app) {
  add_absent_command(app, "demo", learned::kDemoSummary, Component::torch);
}

void add_train(CLI::App& app) {
  add_absent_command(app, "train", learned::kTrainSummary, Component::torch);
}

void add_pretrain(CLI::App& app) {
  add_absent_command(app, "pretrain", learned::kPretrainSummary, Component::torch);
}

}  // namespace doppler::cli
