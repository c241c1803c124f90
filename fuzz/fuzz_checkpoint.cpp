// libFuzzer target: the checkpoint reader, as `doppler place --policy` and `train --resume` use
// it: open the archive and its meta record, read the policy configuration, load the networks
// and the optimiser states into a policy of the seed configuration. Bad input must be an
// InputError; a crash (in Doppler or in libtorch's reader), a sanitizer report or any other
// exception is a bug. libtorch reads files, so each input is written to a temporary file.
// Built with GCC and standalone_driver.cpp (see CMakeLists.txt), which has no coverage feedback:
// at exit the target prints how many inputs loaded and each distinct error it saw, as a measure
// of which of the reader's paths were reached.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>

#include "checkpoint_seed.hpp"
#include "fuzz_checks.hpp"
#include "train/checkpoint.hpp"
#include "train/config_json.hpp"

namespace {

std::string& input_path() {
  static std::string path = (std::filesystem::temp_directory_path() /
                             ("doppler-fuzz-checkpoint-" + std::to_string(::getpid()) + ".pt"))
                                .string();
  return path;
}

// Counts of each outcome ("loaded" or an error without its file name), printed at exit.
struct Outcomes {
  std::map<std::string, long long> count;
  ~Outcomes() {
    std::printf("stat::distinct_outcomes: %zu\n", count.size());
    for (const auto& [what, n] : count) std::printf("outcome: %8lld  %s\n", n, what.c_str());
  }
};
Outcomes g_outcomes;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  const std::string& path = input_path();
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) fuzz::violated("cannot write the temporary input file", path);
  if (size > 0) std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const doppler::detail::Checkpoint c = doppler::detail::open_checkpoint(path);
    try {
      (void)doppler::detail::policy_config_from_json(c.meta.at("policy"));
    } catch (const std::exception&) {  // the callers turn this into an InputError
    }
    nn::DualAgent agent(fuzz::seed_policy_config());
    doppler::detail::load_networks(c, agent, path);
    doppler::detail::FusedAdam opt_sel(agent.sel->parameters(), 1e-3),
        opt_plc(agent.plc->parameters(), 1e-3);
    doppler::detail::load_optimizers(c, opt_sel, opt_plc, path);
    ++g_outcomes.count["loaded"];
  } catch (const InputError& e) {
    ++g_outcomes.count[e.problem()];
  }
  return 0;
}
