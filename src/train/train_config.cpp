#include "doppler/train/train_config.hpp"

#include <algorithm>

#include "doppler/util/enum_names.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::array<EnumName<TrainStage>, 3> kStages{
    {{TrainStage::imitation, "il"}, {TrainStage::simulation, "sim"}, {TrainStage::real, "real"}}};
constexpr std::array<EnumName<TrainPreset>, 2> kPresets{
    {{TrainPreset::standard, "standard"}, {TrainPreset::paper, "paper"}}};

}  // namespace

std::string train_stage_name(TrainStage s) {
  return std::string(enum_name(kStages, s));
}

TrainStage parse_train_stage(const std::string& name) {
  return parse_enum(kStages, name, "stage");
}

std::string train_preset_name(TrainPreset p) {
  return std::string(enum_name(kPresets, p));
}

TrainPreset parse_train_preset(const std::string& name) {
  return parse_enum(kPresets, name, "preset");
}

TrainConfig TrainConfig::with_stage_defaults() const {
  TrainConfig c = *this;
  const bool il = stage == TrainStage::imitation;
  const bool paper = preset == TrainPreset::paper;
  if (c.episodes < 0) c.episodes = il ? 300 : (stage == TrainStage::real ? 100 : 2000);
  if (c.rollouts <= 0) c.rollouts = il || paper ? 1 : 16;
  if (c.lr < 0) c.lr = il ? 1e-3 : (paper ? 1e-4 : 3e-4);
  if (c.temperature < 0) c.temperature = il || paper ? 1.0 : 2.0;
  if (c.lr_end < 0) c.lr_end = il ? c.lr : 1e-6;
  if (c.lr_schedule.empty()) c.lr_schedule = il ? "constant" : (paper ? "linear" : "constant");
  parse_lr_schedule(c.lr_schedule);
  if (c.warmup < 0) c.warmup = il || paper ? 0 : 5;
  if (c.epsilon < 0) c.epsilon = il ? 1.0 : (paper ? 0.2 : 0.0);
  if (c.entropy_weight < 0) c.entropy_weight = il ? 1e-3 : (paper ? 1e-2 : 1e-3);
  if (c.baseline.empty()) c.baseline = paper ? "mean" : "loo";
  if (c.baseline != "loo" && c.baseline != "mean")
    throw InputError("unknown baseline '" + c.baseline + "' (expected loo or mean)");
  if (c.self_imitation < 0) c.self_imitation = il || paper ? 0.0 : 0.1;
  if (c.action.empty()) c.action = il ? "greedy" : "sample";
  if (c.action != "greedy" && c.action != "sample")
    throw InputError("unknown action mode '" + c.action + "' (expected greedy or sample)");
  if (!(c.temperature > 0)) throw InputError("the temperature must be positive");
  if (c.ppo_epochs < 1) throw InputError("ppo epochs must be at least 1");
  if (c.elite < 1) throw InputError("elite must be at least 1");
  if (c.teacher != "critical-path" && c.teacher != "etf" && c.teacher != "heft")
    throw InputError("unknown teacher '" + c.teacher + "' (expected critical-path, etf or heft)");
  return c;
}

int TrainConfig::updates() const {
  const int k = std::max(1, rollouts);
  return episodes <= 0 ? 0 : (episodes + k - 1) / k;
}

}  // namespace doppler
