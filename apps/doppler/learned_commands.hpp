#pragma once
// The commands that need libtorch (demo, train, pretrain). In a torch build they live in the
// learned-methods plug-in, libdoppler_learn.so beside the `doppler` binary, which the CLI loads
// only when one of them is run or a learned method is made (learn_plugin.hpp): every other
// command starts without loading libtorch (0.6 s).
#include <CLI/CLI.hpp>

namespace doppler::cli::learned {

/// One-line summaries, as `doppler --help` lists them whether or not the plug-in is loaded.
inline constexpr const char* kDemoSummary =
    "The full pipeline on the default workload (a Llama layer) at a CPU-friendly size: "
    "calibrate the engine, place with every heuristic, train Doppler (Stage I, II and a short "
    "Stage III on the engine), calibrate again, then measure every placement on the engine "
    "beside its simulation with the second profile and draw the winner's Gantt chart";
inline constexpr const char* kTrainSummary =
    "Train the Doppler policies: Stage I imitation of the critical-path placer (--stage il), "
    "Stage II REINFORCE on the simulator (--stage sim) or Stage III REINFORCE on the real engine "
    "(--stage real; --engine mpi under mpirun)";
inline constexpr const char* kPretrainSummary =
    "Train one Doppler policy over a distribution of problems (generated workloads, random "
    "DAGs, graph files; device counts; platforms) for zero-shot placement and fine-tuning. "
    "Under mpirun, ranks train data-parallel (gradients averaged). Writes RUN/ckpt.pt (place "
    "with --method doppler:policy=RUN, fine-tune with train --init RUN), log.jsonl (one line "
    "per update; held-out evaluations), problems.json, spec.json, config.json.";

void add_demo(CLI::App& app);      ///< doppler demo (cmd_demo.cpp)
void add_train(CLI::App& app);     ///< doppler train GRAPH (cmd_train.cpp)
void add_pretrain(CLI::App& app);  ///< doppler pretrain -o RUN (cmd_pretrain.cpp)

/// What the plug-in gives the CLI (doppler_learn_plugin() returns it). The CLI checks `version`
/// and `size` against its own before using the rest.
struct Plugin {
  const char* version;              ///< the project version it was built with (DOPPLER_VERSION)
  unsigned size;                    ///< sizeof(Plugin) where it was built
  void (*register_placers)();       ///< register_placer()s every learned method
  void (*add_demo)(CLI::App&);      ///< learned::add_demo
  void (*add_train)(CLI::App&);     ///< learned::add_train
  void (*add_pretrain)(CLI::App&);  ///< learned::add_pretrain
};

}  // namespace doppler::cli::learned

/// The plug-in's one entry point (C linkage, so that dlsym finds it by this name).
extern "C" const doppler::cli::learned::Plugin* doppler_learn_plugin();
