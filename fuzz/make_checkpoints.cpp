// fuzz_make_checkpoints OUT_DIR: seed checkpoints for the checkpoint fuzzer, written with the
// real writer: OUT_DIR/full.pt (networks, optimiser states, meta) and OUT_DIR/weights.pt
// (networks and meta only).
#include <cstdio>
#include <filesystem>

#include "checkpoint_seed.hpp"
#include "train/checkpoint.hpp"
#include "train/config_json.hpp"

int main(int argc, char** argv) {
  using namespace doppler;
  if (argc != 2) {
    std::fprintf(stderr, "usage: fuzz_make_checkpoints OUT_DIR\n");
    return 2;
  }
  const std::filesystem::path out = argv[1];
  std::filesystem::create_directories(out);
  torch::manual_seed(1);
  const PolicyConfig pc = fuzz::seed_policy_config();
  nn::DualAgent agent(pc);
  doppler::detail::FusedAdam opt_sel(agent.sel->parameters(), 1e-3),
      opt_plc(agent.plc->parameters(), 1e-3);
  nlohmann::json meta;
  meta["policy"] = doppler::detail::to_json(pc);
  meta["episode"] = 5;
  meta["rng"] = "1 2 3";
  doppler::detail::write_checkpoint(out / "full.pt", agent, &opt_sel, &opt_plc, meta);
  doppler::detail::write_checkpoint(out / "weights.pt", agent, nullptr, nullptr, meta);
  std::printf("fuzz_make_checkpoints: 2 seeds in %s\n", out.c_str());
  return 0;
}
