#include "learned_methods.hpp"

#include <fmt/format.h>

#include "doppler/engine/engine.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::cli {

namespace {

struct LearnedSpec {
  std::string name;
  PolicyVariant variant = PolicyVariant::dual;
  int il = 300;    // Stage I episodes
  int sim = 0;     // Stage II episodes
  int real = 0;    // Stage III episodes (doppler-sys)
  int repeat = 3;  // Stage III: measured runs per episode
  std::string policy;
  TrainConfig base;
};

int take_int(PlacerParams& p, const std::string& method, const std::string& key, int fallback) {
  const auto it = p.find(key);
  if (it == p.end()) return fallback;
  std::int64_t v = 0;
  std::string why;
  if (!parse_int64(it->second, v, why) || v < 0 || v > 10'000'000)
    throw InputError(fmt::format("method {}: option {} must be a non-negative integer, found '{}'",
                                 method, key, it->second));
  p.erase(it);
  return static_cast<int>(v);
}

double take_double(PlacerParams& p, const std::string& method, const std::string& key,
                   double fallback) {
  const auto it = p.find(key);
  if (it == p.end()) return fallback;
  double v = 0;
  std::string why;
  if (!parse_finite_double(it->second, v, why))
    throw InputError(fmt::format("method {}: option {}: {}", method, key, why));
  p.erase(it);
  return v;
}

LearnedSpec parse(const std::string& spec) {
  const auto colon = spec.find(':');
  LearnedSpec s;
  s.name = spec.substr(0, colon);
  PlacerParams p;
  if (colon != std::string::npos)
    for (std::string_view kv : split_fields(std::string_view(spec).substr(colon + 1), ',')) {
      kv = trim(kv);
      const auto eq = kv.find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw InputError(
            fmt::format("method {}: expected key=value options, found '{}'", s.name, kv));
      p[std::string(trim(kv.substr(0, eq)))] = std::string(trim(kv.substr(eq + 1)));
    }
  if (s.name == "doppler") {
    s.il = 0;
  } else if (s.name == "doppler-il") {
    s.sim = 0;
  } else if (s.name == "doppler-sim" || s.name == "doppler-sel" || s.name == "doppler-plc" ||
             s.name == "doppler-joint" || s.name == "doppler-sys") {
    s.sim = 1000;
    if (s.name == "doppler-sys") s.real = 30;
    if (s.name == "doppler-sel") s.variant = PolicyVariant::sel_only;
    if (s.name == "doppler-plc") s.variant = PolicyVariant::plc_only;
    if (s.name == "doppler-joint") s.variant = PolicyVariant::joint;
  } else {
    throw InputError("unknown learned method '" + s.name + "'");
  }
  if (const auto it = p.find("policy"); it != p.end()) {
    s.policy = it->second;
    p.erase(it);
  }
  if (s.name == "doppler" && s.policy.empty())
    throw InputError("method doppler needs policy=PATH (a checkpoint written by doppler train)");
  s.il = take_int(p, s.name, "il", s.il);
  s.sim = take_int(p, s.name, "sim", s.sim);
  s.real = take_int(p, s.name, "real", s.real);
  s.repeat = std::max(1, take_int(p, s.name, "repeat", s.repeat));
  if (s.real > 0 && s.name != "doppler-sys")
    throw InputError(fmt::format("method {}: Stage III (real=) is doppler-sys's", s.name));
  s.base.policy.variant = s.variant;
  s.base.policy.hidden = take_int(p, s.name, "hidden", s.base.policy.hidden);
  s.base.policy.steps = take_int(p, s.name, "mp_steps", s.base.policy.steps);
  s.base.lr = take_double(p, s.name, "lr", -1);
  s.base.entropy_weight = take_double(p, s.name, "entropy", -1);
  if (const auto it = p.find("returns"); it != p.end()) {
    if (it->second != "episode" && it->second != "discounted")
      throw InputError(fmt::format("method {}: returns must be episode or discounted", s.name));
    s.base.returns = it->second == "episode" ? ReturnMode::episode : ReturnMode::discounted;
    p.erase(it);
  }
  if (const auto it = p.find("action"); it != p.end()) {
    s.base.action = it->second;
    p.erase(it);
  }
  if (!p.empty())
    throw InputError(fmt::format(
        "method {}: unknown option '{}' (accepted: policy, il, sim, real, repeat, hidden, "
        "mp_steps, lr, entropy, returns, action)",
        s.name, p.begin()->first));
  return s;
}

// The learned baselines (placeto, gdp): options calls, episodes, policy, hidden, steps, lr,
// entropy, batch, epochs, clip, max_devices, heads, layers, segment. No imitation stage.
LearnedRun run_baseline_method(const std::string& spec, const Problem& problem,
                               const PlaceOptions& options) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const BaselineMethod method = parse_baseline_method(name);
  PlacerParams p;
  if (colon != std::string::npos)
    for (std::string_view kv : split_fields(std::string_view(spec).substr(colon + 1), ',')) {
      const auto eq = trim(kv).find('=');
      if (eq == std::string_view::npos || eq == 0)
        throw InputError(
            fmt::format("method {}: expected key=value options, found '{}'", name, kv));
      p[std::string(trim(trim(kv).substr(0, eq)))] = std::string(trim(trim(kv).substr(eq + 1)));
    }
  LearnedRun out;
  if (const auto it = p.find("policy"); it != p.end()) {
    const std::string path = it->second;
    p.erase(it);
    if (!p.empty()) throw InputError(fmt::format("method {}: policy= takes no other option", name));
    out.assignment = place_baseline(method, problem, path);
    return out;
  }
  BaselineConfig c;
  c.seed = options.seed;
  c.calls = take_int(p, name, "calls", 1302);
  c.episodes = take_int(p, name, "episodes", 0);
  c.hidden = take_int(p, name, "hidden", 0);
  c.steps = take_int(p, name, "steps", 0);
  c.max_devices = take_int(p, name, "max_devices", c.max_devices);
  c.heads = take_int(p, name, "heads", c.heads);
  c.layers = take_int(p, name, "layers", c.layers);
  c.segment = take_int(p, name, "segment", c.segment);
  c.lr = take_double(p, name, "lr", c.lr);
  c.entropy_weight = take_double(p, name, "entropy", c.entropy_weight);
  c.batch = take_int(p, name, "batch", 0);
  c.ppo_epochs = take_int(p, name, "epochs", 0);
  c.clip = take_double(p, name, "clip", c.clip);
  if (!p.empty())
    throw InputError(fmt::format(
        "method {}: unknown option '{}' (accepted: calls, episodes, policy, hidden, steps, lr, "
        "entropy, batch, epochs, clip, max_devices, heads, layers, segment)",
        name, p.begin()->first));
  const BaselineResult r = train_baseline(method, problem, c);
  out.assignment = r.best;
  out.cost_calls = r.cost_calls;
  return out;
}

}  // namespace

bool is_learned_method(const std::string& spec) {
  const std::string name = spec.substr(0, spec.find(':'));
  return name == "doppler" || name == "doppler-il" || name == "doppler-sim" ||
         name == "doppler-sys" || name == "doppler-sel" || name == "doppler-plc" ||
         name == "doppler-joint" || name == "placeto" || name == "gdp";
}

LearnedRun run_learned_method(const std::string& spec, const Problem& problem,
                              const PlaceOptions& options) {
  const std::string name = spec.substr(0, spec.find(':'));
  if (name == "placeto" || name == "gdp") return run_baseline_method(spec, problem, options);
  const LearnedSpec s = parse(spec);
  LearnedRun out;
  if (s.name == "doppler") {
    DopplerPolicy policy = DopplerPolicy::load(s.policy);
    out.assignment = policy.place(problem);
    return out;
  }
  TrainConfig cfg = s.base;
  cfg.seed = options.seed;
  cfg.checkpoint_every = 0;
  cfg.stage = TrainStage::imitation;
  cfg.episodes = s.il;
  DopplerTrainer trainer(problem, cfg);
  if (!s.policy.empty()) trainer.load_weights(s.policy);
  TrainResult r;
  if (s.il > 0) r = trainer.train();
  if (s.sim > 0) {
    TrainConfig rl = s.base;
    rl.seed = options.seed;
    rl.checkpoint_every = 0;
    rl.stage = TrainStage::simulation;
    rl.episodes = s.sim;
    trainer.start_stage(rl);
    r = trainer.train();
  }
  if (s.real > 0) {  // Stage III: REINFORCE on the measured makespan of the CPU engine
    EngineOptions eo;
    eo.devices = problem.devices();
    Engine engine(problem.graph(), eo);
    bool warm = false;
    trainer.set_cost([&](const Assignment& a) {
      const int warmup = warm ? 0 : 1;
      warm = true;
      return engine.measure(a, DispatchRule::fifo, s.repeat, warmup).median;
    });
    TrainConfig sys = s.base;
    sys.seed = options.seed;
    sys.checkpoint_every = 0;
    sys.stage = TrainStage::real;
    sys.episodes = s.real;
    trainer.start_stage(sys);
    r = trainer.train();
  }
  if (s.il == 0 && s.sim == 0 && s.real == 0) r = trainer.train();  // only the greedy rollout
  out.assignment = r.best;
  out.cost_calls = r.cost_calls;
  return out;
}

std::string learned_methods_help() {
  return "Learned methods (they train inside the command; options il=EPISODES, sim=EPISODES, "
         "policy=CKPT,\n"
         "hidden, mp_steps, lr, entropy, returns=episode|discounted, action=sample|greedy):\n"
         "  doppler       the greedy placement of a trained policy (policy=CKPT, required)\n"
         "  doppler-il    Stage I only: imitation of critical-path (il=300)\n"
         "  doppler-sim   Stage I + Stage II REINFORCE on the simulator (il=300, sim=1000)\n"
         "  doppler-sys   Stage I + II + Stage III REINFORCE on the CPU engine's measured "
         "makespan\n"
         "                (il=300, sim=1000, real=30 episodes, repeat=3 runs per episode)\n"
         "  doppler-sel   ablation: learned SEL + critical-path PLC (il=300, sim=1000)\n"
         "  doppler-plc   ablation: critical-path SEL + learned PLC (il=300, sim=1000)\n"
         "  doppler-joint ablation: one network scoring (op, device) pairs (il=300, sim=1000)\n"
         "Learned baselines (no imitation stage; batched policy gradient on the simulator until\n"
         "calls= simulator calls are spent, by default 1302 = what doppler-sim makes with il=300,\n"
         "sim=1000, its 300 Stage I imitation episodes included; options calls, episodes,\n"
         "policy=CKPT, hidden, steps, lr, entropy, batch, epochs (PPO passes per batch), clip,\n"
         "max_devices, heads, layers, segment; docs/baselines.md):\n"
         "  placeto       Placeto: improves a placement op by op, one simulation per step\n"
         "                (batch=4 episodes per update, epochs=1, lr=1e-3)\n"
         "  gdp           GDP: GraphSAGE + Transformer-XL placer, one-shot placement; PPO\n"
         "                (batch=8 placements per update, epochs=10, clip=0.2, lr=1e-3)\n";
}

}  // namespace doppler::cli
