#include "doppler/train/learned_infos.hpp"

#include <string>
#include <utility>
#include <vector>

#include "doppler/heuristics/anneal_options.hpp"
#include "doppler/heuristics/budget.hpp"

namespace doppler {

namespace {

using enum OptionType;

// samples= and temperature= (take_sample_spec).
std::vector<PlacerOption> sample_options() {
  return {{"samples", integer, "64",
           "policy rollouts drawn and simulated, the best kept (1..1000000; fewer when the "
           "budget is short)"},
          {"temperature", number, "1", "sampling temperature of those rollouts (> 0)"}};
}

// policy= of the methods that place with a trained policy (policy_path).
PlacerOption loaded_policy_option(const std::string& detail) {
  return {"policy", path, "",
          "checkpoint or run directory to place with (default: the shipped "
          "models/doppler-pretrained.pt, or $DOPPLER_MODEL)" +
              detail};
}

// Stage I and the architecture (take_trained_spec); `with_sim`: sim= is accepted.
std::vector<PlacerOption> stage_options(bool with_sim) {
  std::vector<PlacerOption> out = {
      {"preset",
       choice,
       "standard",
       "defaults of the hyper-parameters left unset: standard (the benchmark's) or paper",
       {"standard", "paper"}},
      {"il", integer, "300", "Stage I (imitation) episodes; no simulator call"}};
  if (with_sim)
    out.push_back({"sim", integer, "(budget)",
                   "Stage II rollouts, one simulator call each (default: what the budget leaves "
                   "to training)"});
  out.push_back({"policy", path, "",
                 "checkpoint or run directory to start from (default: fresh "
                 "networks)"});
  out.push_back(
      {"hidden", integer, "128",
       "node embedding size of the message-passing encoders (1..4096; not with policy=)"});
  out.push_back({"mp_steps", integer, "6", "message-passing steps (0..64; not with policy=)"});
  return out;
}

// The training hyper-parameters (TrainConfig; "(preset)": the stage's and the preset's default).
std::vector<PlacerOption> hyper_options() {
  return {
      {"rollouts", integer, "(preset)",
       "rollouts per update (Stage I 1; RL stages: standard 16, paper 1)"},
      {"lr", number, "(preset)",
       "Adam learning rate after warm-up (Stage I 1e-3; RL stages: standard 3e-4, paper 1e-4)"},
      {"schedule",
       choice,
       "(preset)",
       "learning-rate schedule (Stage I constant; RL stages: standard constant, paper linear)",
       {"constant", "cosine", "linear"}},
      {"entropy", number, "(preset)", "entropy bonus weight per step (1e-3; paper RL stages 1e-2)"},
      {"si", number, "(preset)",
       "self-imitation weight of the best assignments found (Stage I 0; RL stages: standard "
       "0.1, paper 0)"},
      {"rl_temperature", number, "(preset)",
       "softmax temperature of the training rollouts (Stage I 1; RL stages: standard 2, paper 1)"},
      {"ppo", integer, "1",
       "passes over each batch with PPO's clipped objective (1..64; 1: plain policy gradient)"},
      {"baseline",
       choice,
       "(preset)",
       "policy-gradient baseline: leave-one-out over an update's rollouts (standard) or the "
       "running mean (paper)",
       {"loo", "mean"}},
      {"returns",
       choice,
       "episode",
       "reward of each step: the episode's makespan reward, or discounted from the last step",
       {"episode", "discounted"}},
      {"sel",
       choice,
       "rl",
       "SEL in the RL stages: trained (rl) or kept from Stage I (frozen)",
       {"rl", "frozen"}},
      {"teacher",
       choice,
       "critical-path",
       "list scheduler Stage I imitates",
       {"critical-path", "etf", "heft"}},
      {"action",
       choice,
       "(stage)",
       "how training rollouts act (Stage I greedy, RL stages sample)",
       {"greedy", "sample"}},
  };
}

// Every option of a Doppler method trained inside place() (take_trained_spec).
std::vector<PlacerOption> trained_options(const std::string& name) {
  std::vector<PlacerOption> out = stage_options(name != "doppler-il");
  for (PlacerOption& o : hyper_options()) out.push_back(std::move(o));
  for (PlacerOption& o : sample_options()) out.push_back(std::move(o));
  if (name == "doppler-sys") {
    out.push_back({"real", integer, "30",
                   "Stage III rollouts, each measured on the CPU engine (0: no Stage III)"});
    out.push_back({"repeat", integer, "3",
                   "engine runs per Stage III measurement, their median kept (1..1000)"});
  }
  return out;
}

// doppler-search's options: its search's, then the training ones that need train > 0.
std::vector<PlacerOption> search_options() {
  std::vector<PlacerOption> out = {
      loaded_policy_option("; with train > 0, the one training starts from"),
      {"train", number, "0",
       "fraction of the budget first spent training Stages I + II (0: search with the loaded "
       "policy; > 0: the default budget is " +
           std::to_string(kDefaultTrainingCalls) + " calls)"},
      {"mix", number, "0.5", "fraction in [0, 1] of reassignments drawn from PLC's distribution"},
      focus_option("", "; train=0 only"),
      aim_option("; train=0 only"),
      swaps_option("; train=0 only"),
      prefix_option(" (train=0 only)"),
      tiebreak_option("; train=0 only"),
      {"t0", number, "0.03", "annealing start temperature, as a fraction of the start makespan"},
      {"dsc", integer, "0",
       "1: DSC's clustering is a start too, beside the samples and the list schedulers (one "
       "call; train=0 only)"},
      {"levels", integer, "0",
       "1: the level placer's placement (levels: thirty passes, one call each) is a start too "
       "(train=0 only)"}};
  for (PlacerOption& o : sample_options()) out.push_back(std::move(o));
  std::vector<PlacerOption> training = stage_options(true);
  for (PlacerOption& o : hyper_options()) training.push_back(std::move(o));
  for (PlacerOption& o : training)
    if (o.name != "policy") {
      o.description += " (train > 0 only)";
      out.push_back(std::move(o));
    }
  return out;
}

// placeto's and gdp's options (make_baseline_placer; BaselineConfig, resolved per method).
std::vector<PlacerOption> baseline_options(const std::string& name) {
  const bool gdp = name == "gdp";
  std::vector<PlacerOption> out = {
      {"calls", integer, "(budget)",
       "simulator calls for training, the final placement's evaluation included (default: the "
       "budget's)"},
      {"episodes", integer, "0", "training episode limit (0: none)"},
      {"policy", path, "",
       "a trained checkpoint to place with, no training (takes no other option)"},
      {"hidden", integer, gdp ? "64" : "32", "embedding size"},
      {"steps", integer, "3", gdp ? "GraphSAGE layers" : "message-passing steps per direction"},
      {"lr", number, "1e-3", "Adam learning rate at the start (cosine decay to lr / 10)"},
      {"entropy", number, "0.01", "entropy bonus weight per decision"},
      {"batch", integer, gdp ? "8" : "4", gdp ? "placements per update" : "episodes per update"},
      {"epochs", integer, gdp ? "10" : "1", "PPO passes over each batch"},
      {"clip", number, "0.2", "PPO clip of the probability ratio, in (0, 1)"},
      {"max_devices", integer, "64", "size of the network's device layer; P may not exceed it"}};
  if (gdp) {
    out.push_back({"heads", integer, "4", "attention heads (hidden must be a multiple)"});
    out.push_back({"layers", integer, "2", "Transformer-XL layers"});
    out.push_back(
        {"segment", integer, "128",
         "Transformer-XL segment length, in tokens (the memory is the previous segment)"});
  }
  return out;
}

}  // namespace

std::vector<PlacerInfo> learned_placer_infos() {
  std::vector<PlacerInfo> out;
  std::vector<PlacerOption> doppler_options = {loaded_policy_option("")};
  for (PlacerOption& o : sample_options()) doppler_options.push_back(std::move(o));
  out.push_back({"doppler",
                 "a trained policy, by default the shipped pretrained one (zero-shot): the best "
                 "of samples= rollouts",
                 std::move(doppler_options), false, true});
  const std::vector<std::pair<std::string, std::string>> trained = {
      {"doppler-il", "Doppler Stage I only (imitation; no simulator call), best of samples="},
      {"doppler-sim", "Doppler Stage I + II on the simulator within the budget, best of samples="},
      {"doppler-sys", "Doppler Stages I + II + III (real= rollouts measured on the CPU engine)"},
      {"doppler-sel", "ablation: learned SEL + critical-path PLC (as doppler-sim)"},
      {"doppler-plc", "ablation: critical-path SEL + learned PLC (as doppler-sim)"},
      {"doppler-joint", "ablation: one network scoring (op, device) pairs (as doppler-sim)"},
  };
  for (const auto& [name, description] : trained)
    out.push_back({name, description, trained_options(name), false, true});
  out.push_back(
      {"doppler-search",
       "search with the learned prior: local-search's annealer from the best of the policy's "
       "samples (at most 1/16 of the budget) and local-search's list schedulers, reassignments "
       "drawn from PLC (mix=); --budget (default " +
           std::to_string(kDefaultSearchCalls) +
           ") and/or --time-budget, loading and sampling included; train=F > 0 first trains "
           "Stages I + II on F of the budget (doppler-sim's options then apply)",
       search_options(), false, true});
  for (const std::string name : {"placeto", "gdp"})
    out.push_back({name,
                   name == "placeto"
                       ? "Placeto: improves a placement op by op, one simulation per step"
                       : "GDP: GraphSAGE + Transformer-XL placer, one-shot placement",
                   baseline_options(name), false, true});
  return out;
}

}  // namespace doppler
