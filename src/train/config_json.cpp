#include "train/config_json.hpp"

namespace doppler::detail {

using nlohmann::json;

json to_json(const TrainConfig& c) {
  return {{"stage", train_stage_name(c.stage)},
          {"preset", train_preset_name(c.preset)},
          {"episodes", c.episodes},
          {"rollouts", c.rollouts},
          {"lr_schedule", c.lr_schedule},
          {"warmup", c.warmup},
          {"temperature", c.temperature},
          {"baseline", c.baseline},
          {"ppo_epochs", c.ppo_epochs},
          {"ppo_clip", c.ppo_clip},
          {"self_imitation", c.self_imitation},
          {"elite", c.elite},
          {"teacher", c.teacher},
          {"sel", c.sel == SelMode::frozen ? "frozen" : "rl"},
          {"grad_norm_every", c.grad_norm_every},
          {"exact_gradient", c.exact_gradient},
          {"lr", c.lr},
          {"lr_end", c.lr_end},
          {"epsilon", c.epsilon},
          {"epsilon_end", c.epsilon_end},
          {"entropy_weight", c.entropy_weight},
          {"grad_clip", c.grad_clip},
          {"returns", c.returns == ReturnMode::episode ? "episode" : "discounted"},
          {"gamma", c.gamma},
          {"action", c.action},
          {"seed", c.seed},
          {"checkpoint_every", c.checkpoint_every},
          {"time_budget", c.time_budget},
          {"parallel", c.parallel},
          {"policy", to_json(c.policy)}};
}

TrainConfig train_config_from_json(const json& j) {
  TrainConfig c;
  c.stage = parse_train_stage(j.at("stage").get<std::string>());
  c.episodes = j.at("episodes").get<int>();
  c.preset = parse_train_preset(j.value("preset", std::string("paper")));
  c.rollouts = j.value("rollouts", 1);
  c.lr_schedule = j.value("lr_schedule", std::string("linear"));
  c.warmup = j.value("warmup", 0);
  c.temperature = j.value("temperature", 1.0);  // runs before the option: T = 1
  c.baseline = j.value("baseline", std::string("mean"));
  c.ppo_epochs = j.value("ppo_epochs", 1);
  c.ppo_clip = j.value("ppo_clip", 0.2);
  c.self_imitation = j.value("self_imitation", 0.0);
  c.elite = j.value("elite", 4);
  c.teacher = j.value("teacher", std::string("critical-path"));
  c.sel = j.value("sel", std::string("rl")) == "frozen" ? SelMode::frozen : SelMode::rl;
  c.grad_norm_every = j.value("grad_norm_every", 10);
  c.exact_gradient = j.value("exact_gradient", true);
  c.lr = j.at("lr").get<double>();
  c.lr_end = j.at("lr_end").get<double>();
  c.epsilon = j.at("epsilon").get<double>();
  c.epsilon_end = j.at("epsilon_end").get<double>();
  c.entropy_weight = j.at("entropy_weight").get<double>();
  c.grad_clip = j.at("grad_clip").get<double>();
  c.returns = j.at("returns").get<std::string>() == "episode" ? ReturnMode::episode
                                                              : ReturnMode::discounted;
  c.gamma = j.at("gamma").get<double>();
  c.action = j.at("action").get<std::string>();
  c.seed = j.at("seed").get<std::uint64_t>();
  c.checkpoint_every = j.at("checkpoint_every").get<int>();
  c.time_budget = j.value("time_budget", 0.0);
  c.parallel = j.at("parallel").get<bool>();
  c.policy = policy_config_from_json(j.at("policy"));
  return c;
}

}  // namespace doppler::detail
