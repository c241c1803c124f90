#include "doppler/train/learned_placers.hpp"

#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "placers/learned_support.hpp"

#include "doppler/heuristics/placer.hpp"

namespace doppler {

namespace {

const char* const kTrainedParams =
    "il=300,sim=(budget),samples=64,temperature=1,preset=standard|paper,rollouts=16,lr=3e-4,"
    "entropy,si=0.1,ppo=1,sel=rl|frozen,teacher=critical-path|etf|heft,baseline=loo|mean,"
    "schedule=constant|cosine|linear,rl_temperature=2,returns,action,hidden,mp_steps,policy=CKPT";

constexpr const char* kSearchParams =
    "policy=CKPT|RUN (default "
    "models/doppler-pretrained.pt),samples=64,temperature=1,mix=0.5,focus=0,"
    "train=0; train=F>0 first trains Stages I+II on F of the budget (default {} calls; "
    "--time-budget ignored; policy= initialises them) and takes doppler-sim's training options "
    "(il=300,sim,preset,rollouts,lr,entropy,si,ppo,sel,teacher,baseline,schedule,rl_temperature,"
    "returns,action,hidden,mp_steps), which are errors without it";

}  // namespace

void register_learned_placers() {
  register_placer(
      {"doppler",
       "a trained policy, by default the shipped pretrained one (zero-shot): the best of "
       "samples= rollouts",
       "policy=CKPT|RUN (default models/doppler-pretrained.pt),samples=64,temperature=1", false,
       true},
      learned::make_policy_placer);
  const std::vector<std::pair<std::string, std::string>> trained = {
      {"doppler-il", "Doppler Stage I only (imitation; no simulator call), best of samples="},
      {"doppler-sim", "Doppler Stage I + II on the simulator within the budget, best of samples="},
      {"doppler-sys", "Doppler Stages I + II + III (real= rollouts measured on the CPU engine)"},
      {"doppler-sel", "ablation: learned SEL + critical-path PLC (as doppler-sim)"},
      {"doppler-plc", "ablation: critical-path SEL + learned PLC (as doppler-sim)"},
      {"doppler-joint", "ablation: one network scoring (op, device) pairs (as doppler-sim)"},
  };
  for (const auto& [name, description] : trained)
    register_placer(
        {name, description,
         std::string(kTrainedParams) + (name == "doppler-sys" ? ",real=30,repeat=3" : ""), false,
         true},
        [name = name](PlacerParams& p) -> std::unique_ptr<Placer> {
          return learned::make_trained_placer(name, p);
        });
  register_placer(
      {"doppler-search",
       fmt::format("search with the learned prior: local-search's annealer from the best of the "
                   "policy's samples (at most 1/16 of the budget) and local-search's list "
                   "schedulers, reassignments drawn from PLC (mix=); --budget (default {}) "
                   "and/or --time-budget, loading and sampling included",
                   kDefaultSearchCalls),
       fmt::format(kSearchParams, kDefaultTrainingCalls), false, true},
      learned::make_search_placer);
  for (const std::string name : {"placeto", "gdp"})
    register_placer(
        {name,
         name == "placeto" ? "Placeto: improves a placement op by op, one simulation per step"
                           : "GDP: GraphSAGE + Transformer-XL placer, one-shot placement",
         "calls=(budget),episodes,policy=CKPT,hidden,steps,lr,entropy,batch,epochs,clip,"
         "max_devices,heads,layers,segment",
         false, true},
        [name](PlacerParams& p) { return learned::make_baseline_placer(name, p); });
}

}  // namespace doppler
