#pragma once
// Subcommands of the `doppler` CLI. Each add_* function registers one subcommand on the app;
// its callback runs the command and throws InputError on bad input.
#include <CLI/CLI.hpp>

namespace doppler::cli {

void add_info(CLI::App& app);         ///< doppler info GRAPH
void add_convert(CLI::App& app);      ///< doppler convert IN OUT
void add_import(CLI::App& app);       ///< doppler import MODEL.onnx
void add_demo(CLI::App& app);         ///< doppler demo (learned_commands.hpp)
void add_generate(CLI::App& app);     ///< doppler generate WORKLOAD
void add_simulate(CLI::App& app);     ///< doppler simulate GRAPH
void add_place(CLI::App& app);        ///< doppler place GRAPH
void add_methods(CLI::App& app);      ///< doppler methods [NAME]
void add_compare(CLI::App& app);      ///< doppler compare GRAPH
void add_bench_suite(CLI::App& app);  ///< doppler bench-suite INPUTS...
void add_train(CLI::App& app);        ///< doppler train GRAPH (learned_commands.hpp)
void add_pretrain(CLI::App& app);     ///< doppler pretrain -o RUN (learned_commands.hpp)
/// Before the add_* calls: in a torch build, registers the learned methods as deferred placers
/// (placer_infos() lists them; making one loads the learned-methods plug-in) and loads the
/// plug-in now when the subcommand is demo, train or pretrain, whose add_* then register the
/// plug-in's commands rather than stand-ins. A no-op in a build without torch.
void prepare_learned(int argc, char** argv);

void add_execute(CLI::App& app);       ///< doppler execute GRAPH --assignment A
void add_calibrate(CLI::App& app);     ///< doppler calibrate --devices P -o hw.json
void add_validate_sim(CLI::App& app);  ///< doppler validate-sim GRAPH --hardware hw.json
void add_gpus(CLI::App& app);          ///< doppler gpus
/// Makes the engine backends this build has available (CUDA: enable_cuda_backend()); a no-op
/// without them.
void register_backends();
/// True when this build has the CUDA backend and this process sees a GPU (no error otherwise).
bool cuda_usable();

}  // namespace doppler::cli
