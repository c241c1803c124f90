#include "doppler/train/train_config.hpp"

#include "doppler/util/error.hpp"

namespace doppler {

std::string train_stage_name(TrainStage s) {
  switch (s) {
    case TrainStage::imitation:
      return "il";
    case TrainStage::simulation:
      return "sim";
    case TrainStage::real:
      return "real";
  }
  return "sim";
}

TrainStage parse_train_stage(const std::string& name) {
  if (name == "il") return TrainStage::imitation;
  if (name == "sim") return TrainStage::simulation;
  if (name == "real") return TrainStage::real;
  throw InputError("unknown stage '" + name + "' (expected il, sim or real)");
}

TrainConfig TrainConfig::with_stage_defaults() const {
  TrainConfig c = *this;
  const bool il = stage == TrainStage::imitation;
  if (c.episodes < 0) c.episodes = il ? 300 : (stage == TrainStage::real ? 100 : 2000);
  if (c.lr < 0) c.lr = il ? 1e-3 : 1e-4;
  if (c.lr_end < 0) c.lr_end = il ? c.lr : 1e-6;
  if (c.epsilon < 0) c.epsilon = il ? 1.0 : 0.2;
  if (c.entropy_weight < 0) c.entropy_weight = il ? 1e-3 : 1e-2;
  if (c.action.empty()) c.action = il ? "greedy" : "sample";
  if (c.action != "greedy" && c.action != "sample")
    throw InputError("unknown action mode '" + c.action + "' (expected greedy or sample)");
  return c;
}

}  // namespace doppler
