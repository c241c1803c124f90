#include "doppler/train/learned_placers.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "doppler/engine/engine.hpp"
#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/pipeline.hpp"
#include "doppler/train/stage3_guard.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::int64_t kDefaultBudget = 4000;

// Options shared by the methods that sample a policy.
struct SampleSpec {
  int samples = 64;
  double temperature = 1.0;
};

SampleSpec take_sample_spec(PlacerParams& p, const std::string& name) {
  SampleSpec s;
  s.samples = static_cast<int>(take_integer(p, name, "samples", s.samples, 1, 1'000'000));
  s.temperature = take_number(p, name, "temperature", s.temperature);
  if (!(s.temperature > 0))
    throw InputError(fmt::format("method {}: temperature must be positive", name));
  return s;
}

// Samples to draw within a share of the budget: min(samples, share), at least 1.
int samples_within(int samples, std::int64_t share) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(samples, share)));
}

// A loaded policy shared by the placers of the process; sample() runs under its mutex
// (DopplerPolicy is not meant for concurrent callers).
struct SharedPolicy {
  explicit SharedPolicy(DopplerPolicy p) : policy(std::move(p)) {}
  std::mutex mutex;
  DopplerPolicy policy;
};

// The policy at `path` (a checkpoint or a run directory), loaded once per process: cached by
// the checkpoint's canonical path, modification time and size, so a rewritten file is
// reloaded. At most kCachedPolicies stay loaded.
std::shared_ptr<SharedPolicy> shared_policy(const std::string& path) {
  constexpr std::size_t kCachedPolicies = 8;
  using Key = std::tuple<std::string, std::filesystem::file_time_type, std::uintmax_t>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<SharedPolicy>> cache;
  std::error_code ec;
  const std::filesystem::path file = std::filesystem::canonical(checkpoint_path(path), ec);
  Key key;
  if (!ec) key = {file.string(), std::filesystem::last_write_time(file, ec), 0};
  if (!ec) std::get<2>(key) = std::filesystem::file_size(file, ec);
  if (ec) return std::make_shared<SharedPolicy>(DopplerPolicy::load(path));  // its InputError
  const std::lock_guard<std::mutex> lock(mutex);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  auto loaded = std::make_shared<SharedPolicy>(DopplerPolicy::load(path));
  std::erase_if(cache, [&](const auto& e) { return std::get<0>(e.first) == std::get<0>(key); });
  if (cache.size() >= kCachedPolicies) cache.erase(cache.begin());
  cache.emplace(key, loaded);
  return loaded;
}

// The policy a method loads: `given`, else the shipped one, which must exist (InputError naming
// it). A given path is read at place() time (DopplerPolicy::load's InputError names it).
std::string policy_path(const std::string& method, const std::string& given) {
  if (!given.empty()) return given;
  const std::string path = default_policy_path().string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError(fmt::format(
        "method {}: the shipped policy {} is missing (set DOPPLER_MODEL, pass policy=PATH, or run "
        "scripts/pretrain.sh)",
        method, path));
  return path;
}

// The best of `o.samples` rollouts of a shared policy.
SampledPlacement sample_shared(SharedPolicy& p, const Problem& problem, const SampleOptions& o) {
  const std::lock_guard<std::mutex> lock(p.mutex);
  return p.policy.sample(problem, o);
}

// doppler: a trained policy, best of K samples.
class DopplerPolicyPlacer : public Placer {
public:
  DopplerPolicyPlacer(std::string policy, SampleSpec s) : policy_(std::move(policy)), s_(s) {}
  std::string name() const override { return "doppler"; }
  Assignment place(const Problem& problem, const PlaceOptions& options) const override {
    const std::shared_ptr<SharedPolicy> policy = shared_policy(policy_);
    SampleOptions o;
    o.samples = s_.samples;
    if (options.budget.evaluations > 0)
      o.samples = static_cast<int>(std::min<std::int64_t>(o.samples, options.budget.evaluations));
    o.seed = options.seed;
    o.temperature = s_.temperature;
    const std::int64_t before = problem.simulator().calls();
    SampledPlacement r = sample_shared(*policy, problem, o);
    evaluations_ = problem.simulator().calls() - before;
    r.best.method = name();
    return r.best;
  }

private:
  std::string policy_;
  SampleSpec s_;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Default call budget of doppler-search without training, as local-search's.
constexpr std::int64_t kSearchBudget = 20000;

// The best placement seen so far.
struct Best {
  std::vector<DeviceId> devices;
  double makespan = std::numeric_limits<double>::infinity();
  void offer(const std::vector<DeviceId>& d, double ms) {
    if (ms < makespan) {
      devices = d;
      makespan = ms;
    }
  }
};

// The better of two sample batches (the first on ties).
SampledPlacement better_of(SampledPlacement a, SampledPlacement b) {
  return b.best_makespan < a.best_makespan ? std::move(b) : std::move(a);
}

// doppler-search (train=0): the annealer of local-search, started from the best of the loaded
// policy's samples and local-search's list schedulers, with reassignments drawn from PLC.
class DopplerSearchPlacer : public Placer {
public:
  DopplerSearchPlacer(std::string policy, SampleSpec s, double mix, double focus)
      : policy_(std::move(policy)), s_(s), mix_(mix), focus_(focus) {}
  std::string name() const override { return "doppler-search"; }

  Assignment place(const Problem& problem, const PlaceOptions& options) const override {
    const Clock::time_point t0 = Clock::now();
    const std::int64_t before = problem.simulator().calls();
    const auto used = [&] { return problem.simulator().calls() - before; };
    const double seconds = options.budget.seconds;
    const std::int64_t n = options.budget.evaluations > 0 ? options.budget.evaluations
                           : seconds > 0                  ? 0
                                                          : kSearchBudget;
    const int samples = n > 0 ? samples_within(s_.samples, n / 16) : s_.samples;
    Best best;
    const ListScheduleStart start =
        best_list_schedule(problem, options, static_cast<int>(n > 0 ? n - samples : 5));
    best.offer(start.device_of, start.makespan);
    if (problem.devices() > 1 && problem.graph().num_nodes() > 0) {
      const std::shared_ptr<SharedPolicy> policy = shared_policy(policy_);
      const SampledPlacement sp = sample(*policy, problem, options, samples, t0);
      best.offer(sp.best.device_of, sp.best_makespan);
      Budget b;
      b.evaluations = n > 0 ? n - used() : 0;
      b.seconds = seconds > 0 ? seconds - seconds_since(t0) : 0;
      if ((n == 0 || b.evaluations > 0) && (seconds == 0 || b.seconds > 0)) {
        const MoveProposal proposal{sp.proposal, mix_};
        AnnealSettings as;
        as.proposal = &proposal;
        as.focus = focus_;
        AnnealResult ar = anneal(problem, best.devices, best.makespan, b, as, options.seed);
        best.offer(ar.best, ar.best_makespan);
      }
    }
    evaluations_ = used();
    return {problem.devices(), std::move(best.devices), {}, name()};
  }

private:
  // The best of `k` samples (rollout 0 greedy). With a time budget, sampling stops at about a
  // sixteenth of it (the load included): a first batch of 2 rollouts times them, a second batch
  // (its own greedy rollout included) draws as many of the rest as fit.
  SampledPlacement sample(SharedPolicy& policy, const Problem& problem, const PlaceOptions& options,
                          int k, Clock::time_point t0) const {
    SampleOptions o;
    o.seed = options.seed;
    o.temperature = s_.temperature;
    const double share = options.budget.seconds / 16;
    if (share <= 0) {
      o.samples = k;
      return sample_shared(policy, problem, o);
    }
    o.samples = std::min(k, seconds_since(t0) < share ? 2 : 1);
    const Clock::time_point t1 = Clock::now();
    SampledPlacement first = sample_shared(policy, problem, o);
    const double per_rollout = std::max(1e-9, seconds_since(t1) / o.samples);
    const double fit = o.threads * (share - seconds_since(t0)) / per_rollout;
    const int more = static_cast<int>(std::min<double>(k - o.samples, std::floor(fit)));
    if (more < 2) return first;
    o.samples = more;
    o.seed = options.seed ^ 0x9e3779b97f4a7c15ULL;
    return better_of(std::move(first), sample_shared(policy, problem, o));
  }

  std::string policy_;
  SampleSpec s_;
  double mix_;
  double focus_;  // AnnealSettings::focus
};

// Everything a trained-inside Doppler method is configured with.
struct TrainedSpec {
  std::string name;
  PipelineSpec pipeline;
  bool sim_given = false;
  SampleSpec sample;
  bool search = false;  // doppler-search
  double train_fraction = 0.5;
  double mix = 0.5;  // share of learned moves among reassignments
};

// The Doppler methods that train inside place().
class DopplerTrainedPlacer : public Placer {
public:
  explicit DopplerTrainedPlacer(TrainedSpec s) : s_(std::move(s)) {}
  std::string name() const override { return s_.name; }

  Assignment place(const Problem& problem, const PlaceOptions& options) const override {
    const std::int64_t before = problem.simulator().calls();
    const Plan plan = plan_budget(options);
    PipelineSpec spec = s_.pipeline;
    spec.sim = plan.sim;
    spec.base.seed = options.seed;
    DopplerTrainer trainer(problem, spec.base);
    std::unique_ptr<Engine> engine;
    CostFunction measured;
    if (spec.real > 0) {
      EngineOptions eo;
      eo.devices = problem.devices();
      engine = std::make_unique<Engine>(problem.graph(), eo);
      measured = engine_cost(*engine, spec.repeat);
    }
    if (spec.real > 0) {  // Stage III: its measured best, if it beats Stage II's on the engine
      Assignment out = stage3_answer(trainer, spec, measured, *engine);
      // Simulator calls only: the engine measurements of Stage III are not simulations.
      evaluations_ = problem.simulator().calls() - before;
      out.method = name();
      return out;
    }
    const TrainResult tr = run_pipeline(trainer, spec, measured);
    Assignment out = tr.best;
    double out_ms = tr.best_makespan;
    if (plan.samples > 0) {
      SampleOptions so;
      so.samples = plan.samples;
      so.seed = options.seed;
      so.temperature = s_.sample.temperature;
      SampledPlacement sp = trainer.sample(so);
      if (!(sp.best_makespan >= out_ms)) {  // also when out_ms is NaN (Stage I only)
        out = sp.best;
        out_ms = sp.best_makespan;
      }
      if (s_.search && plan.search > 0) {
        MoveProposal proposal{sp.proposal, s_.mix};
        AnnealSettings as;
        as.proposal = &proposal;
        Budget b;
        b.evaluations = plan.search;
        AnnealResult ar = anneal(problem, out.device_of, out_ms, b, as, options.seed);
        if (ar.best_makespan < out_ms) out = {problem.devices(), ar.best, {}, name()};
      }
    }
    evaluations_ = problem.simulator().calls() - before;
    out.method = name();
    return out;
  }

private:
  struct Plan {
    int sim = 0, samples = 0;
    std::int64_t search = 0;
  };

  // Stages I + II, then III; Stage III's measured best replaces Stage II's best only when an
  // interleaved re-measurement (2 x repeat + 1 runs each) finds it significantly faster.
  static Assignment stage3_answer(DopplerTrainer& trainer, PipelineSpec spec,
                                  const CostFunction& measured, Engine& engine) {
    const int real = spec.real;
    spec.real = 0;
    const TrainResult two = run_pipeline(trainer, spec, measured);
    spec.il = spec.sim = 0;
    spec.real = real;
    spec.init.clear();
    const TrainResult three = run_pipeline(trainer, spec, measured);
    if (two.best.device_of.empty()) return three.best;  // no Stage II to compare with
    const Stage3Check c = check_stage3(engine, two.best, three.best, 2 * spec.repeat + 1);
    if (!c.keep_stage3)
      spdlog::info(
          "Stage III's best measured {:.4g} s against Stage II's {:.4g} s on "
          "re-measurement, not significantly faster: Stage II's placement kept",
          c.stage3.median, c.stage2.median);
    return c.keep_stage3 ? three.best : two.best;
  }

  // Splits the budget (see learned_placers.hpp).
  Plan plan_budget(const PlaceOptions& options) const {
    const bool given = options.budget.evaluations > 0;
    const std::int64_t n = given ? options.budget.evaluations : kDefaultBudget;
    Plan p;
    const bool trains = s_.name != "doppler-il";
    if (!trains) {
      p.samples = samples_within(s_.sample.samples, n);
      return p;
    }
    p.samples = samples_within(s_.sample.samples, n / 16);
    if (s_.search) {
      const auto t =
          static_cast<std::int64_t>(std::floor(s_.train_fraction * static_cast<double>(n)));
      p.sim = static_cast<int>(std::max<std::int64_t>(0, t - 1));
      p.search = std::max<std::int64_t>(0, n - t - p.samples);
    } else {
      p.sim = static_cast<int>(std::max<std::int64_t>(0, n - p.samples - 1));
    }
    if (s_.sim_given) {
      if (given && s_.pipeline.sim + 1 + p.samples > n)
        throw InputError(fmt::format(
            "method {}: sim={} rollouts and {} samples do not fit in a budget of {} simulator "
            "calls",
            s_.name, s_.pipeline.sim, p.samples, n));
      p.sim = s_.pipeline.sim;
      if (s_.search) p.search = std::max<std::int64_t>(0, n - p.sim - 1 - p.samples);
    }
    if (p.sim == 0 && s_.pipeline.il == 0 && s_.pipeline.init.empty())
      throw InputError(
          fmt::format("method {}: a budget of {} calls leaves nothing to train on", s_.name, n));
    return p;
  }

  TrainedSpec s_;
};

TrainedSpec take_trained_spec(const std::string& name, PlacerParams& p) {
  TrainedSpec s;
  s.name = name;
  TrainConfig& b = s.pipeline.base;
  if (name == "doppler-sel") b.policy.variant = PolicyVariant::sel_only;
  if (name == "doppler-plc") b.policy.variant = PolicyVariant::plc_only;
  if (name == "doppler-joint") b.policy.variant = PolicyVariant::joint;
  s.search = name == "doppler-search";
  b.preset = parse_train_preset(take_string(p, "preset", "standard"));
  s.pipeline.il = static_cast<int>(take_integer(p, name, "il", 300, 0, 10'000'000));
  s.sim_given = p.count("sim") > 0;
  s.pipeline.sim = static_cast<int>(take_integer(p, name, "sim", 0, 0, 10'000'000));
  if (name == "doppler-il" && s.sim_given)
    throw InputError("method doppler-il: Stage I only (no sim=)");
  s.pipeline.real = static_cast<int>(
      take_integer(p, name, "real", name == "doppler-sys" ? 30 : 0, 0, 10'000'000));
  if (s.pipeline.real > 0 && name != "doppler-sys")
    throw InputError(fmt::format("method {}: Stage III (real=) is doppler-sys's", name));
  s.pipeline.repeat = static_cast<int>(take_integer(p, name, "repeat", 3, 1, 1000));
  s.pipeline.init = take_string(p, "policy", "");
  s.sample = take_sample_spec(p, name);
  s.train_fraction = take_number(p, name, "train", 0.5);
  s.mix = take_number(p, name, "mix", 0.5);
  if (s.train_fraction < 0 || s.train_fraction > 1 || s.mix < 0 || s.mix > 1)
    throw InputError(fmt::format("method {}: train and mix must be in [0, 1]", name));
  b.policy.hidden = static_cast<int>(take_integer(p, name, "hidden", b.policy.hidden, 1, 4096));
  b.policy.steps = static_cast<int>(take_integer(p, name, "mp_steps", b.policy.steps, 0, 64));
  b.rollouts = static_cast<int>(take_integer(p, name, "rollouts", -1, -1, 4096));
  b.lr = take_number(p, name, "lr", -1);
  b.entropy_weight = take_number(p, name, "entropy", -1);
  b.self_imitation = take_number(p, name, "si", -1);
  b.temperature = take_number(p, name, "rl_temperature", -1);
  b.ppo_epochs = static_cast<int>(take_integer(p, name, "ppo", 1, 1, 64));
  b.teacher = take_string(p, "teacher", "critical-path");
  const std::string sel = take_string(p, "sel", "rl");
  if (sel != "rl" && sel != "frozen")
    throw InputError(fmt::format("method {}: sel must be rl or frozen", name));
  b.sel = sel == "frozen" ? SelMode::frozen : SelMode::rl;
  b.baseline = take_string(p, "baseline", "");
  b.lr_schedule = take_string(p, "schedule", "");
  const std::string returns = take_string(p, "returns", "episode");
  if (returns != "episode" && returns != "discounted")
    throw InputError(fmt::format("method {}: returns must be episode or discounted", name));
  b.returns = returns == "episode" ? ReturnMode::episode : ReturnMode::discounted;
  b.action = take_string(p, "action", "");
  b.with_stage_defaults();  // validates the names now, before any work
  return s;
}

// placeto / gdp: trained inside place() within `calls` simulator calls, or loaded (policy=).
class BaselinePlacer : public Placer {
public:
  BaselinePlacer(BaselineMethod m, BaselineConfig c, std::string policy)
      : method_(m), config_(std::move(c)), policy_(std::move(policy)) {}
  std::string name() const override { return baseline_method_name(method_); }
  Assignment place(const Problem& problem, const PlaceOptions& options) const override {
    const std::int64_t before = problem.simulator().calls();
    Assignment a;
    if (!policy_.empty()) {
      a = place_baseline(method_, problem, policy_);
    } else {
      BaselineConfig c = config_;
      c.seed = options.seed;
      if (options.budget.evaluations > 0 && !calls_given_) c.calls = options.budget.evaluations;
      a = train_baseline(method_, problem, c).best;
    }
    evaluations_ = problem.simulator().calls() - before;
    a.method = name();
    return a;
  }
  bool calls_given_ = false;

private:
  BaselineMethod method_;
  BaselineConfig config_;
  std::string policy_;
};

std::unique_ptr<Placer> make_baseline(const std::string& name, PlacerParams& p) {
  const BaselineMethod method = parse_baseline_method(name);
  const std::string policy = take_string(p, "policy", "");
  if (!policy.empty() && !p.empty())
    throw InputError(fmt::format("method {}: policy= takes no other option", name));
  BaselineConfig c;
  const bool calls_given = p.count("calls") > 0;
  c.calls = take_integer(p, name, "calls", kDefaultBudget, 0, 1'000'000'000);
  c.episodes = static_cast<int>(take_integer(p, name, "episodes", 0, 0, 10'000'000));
  c.hidden = static_cast<int>(take_integer(p, name, "hidden", 0, 0, 4096));
  c.steps = static_cast<int>(take_integer(p, name, "steps", 0, 0, 64));
  c.max_devices = static_cast<int>(take_integer(p, name, "max_devices", c.max_devices, 1, 1 << 20));
  c.heads = static_cast<int>(take_integer(p, name, "heads", c.heads, 1, 64));
  c.layers = static_cast<int>(take_integer(p, name, "layers", c.layers, 1, 64));
  c.segment = static_cast<int>(take_integer(p, name, "segment", c.segment, 1, 1 << 20));
  c.lr = take_number(p, name, "lr", c.lr);
  c.entropy_weight = take_number(p, name, "entropy", c.entropy_weight);
  c.batch = static_cast<int>(take_integer(p, name, "batch", 0, 0, 1 << 20));
  c.ppo_epochs = static_cast<int>(take_integer(p, name, "epochs", 0, 0, 1000));
  c.clip = take_number(p, name, "clip", c.clip);
  auto placer = std::make_unique<BaselinePlacer>(method, c, policy);
  placer->calls_given_ = calls_given;
  return placer;
}

const char* const kTrainedParams =
    "il=300,sim=(budget),samples=64,temperature=1,preset=standard|paper,rollouts=16,lr=3e-4,"
    "entropy,si=0.1,ppo=1,sel=rl|frozen,teacher=critical-path|etf|heft,baseline=loo|mean,"
    "schedule=constant|cosine|linear,rl_temperature=2,returns,action,hidden,mp_steps,policy=CKPT";

const char* const kSearchParams =
    "policy=CKPT|RUN (default "
    "models/doppler-pretrained.pt),samples=64,temperature=1,mix=0.5,focus=0,"
    "train=0; train=F>0 first trains Stages I+II on F of the budget (default 4,000 calls; "
    "--time-budget ignored; policy= initialises them) and takes doppler-sim's training options "
    "(il=300,sim,preset,rollouts,lr,entropy,si,ppo,sel,teacher,baseline,schedule,rl_temperature,"
    "returns,action,hidden,mp_steps), which are errors without it";

// doppler-search: train=0 (default) searches with a loaded policy; train=F > 0 trains first.
std::unique_ptr<Placer> make_doppler_search(PlacerParams& p) {
  const std::string name = "doppler-search";
  PlacerParams peek = p;
  if (take_number(peek, name, "train", 0) > 0)
    return std::make_unique<DopplerTrainedPlacer>(take_trained_spec(name, p));
  for (const char* key :
       {"il", "sim", "preset", "rollouts", "lr", "entropy", "si", "ppo", "sel", "teacher",
        "baseline", "schedule", "rl_temperature", "returns", "action", "hidden", "mp_steps"})
    if (p.count(key))
      throw InputError(fmt::format(
          "method {}: {}= is a training option; it needs train=F > 0 (train=0, the default, "
          "searches with the loaded policy)",
          name, key));
  const double train = take_number(p, name, "train", 0);
  const double mix = take_number(p, name, "mix", 0.5);
  const double focus = take_number(p, name, "focus", 0);
  if (train < 0 || mix < 0 || mix > 1 || focus < 0 || focus > 1)
    throw InputError(fmt::format("method {}: train, mix and focus must be in [0, 1]", name));
  const std::string policy = policy_path(name, take_string(p, "policy", ""));
  return std::make_unique<DopplerSearchPlacer>(policy, take_sample_spec(p, name), mix, focus);
}

}  // namespace

void register_learned_placers() {
  register_placer(
      {"doppler",
       "a trained policy, by default the shipped pretrained one (zero-shot): the best of "
       "samples= rollouts",
       "policy=CKPT|RUN (default models/doppler-pretrained.pt),samples=64,temperature=1", false,
       true},
      [](PlacerParams& p) -> std::unique_ptr<Placer> {
        const std::string policy = policy_path("doppler", take_string(p, "policy", ""));
        return std::make_unique<DopplerPolicyPlacer>(policy, take_sample_spec(p, "doppler"));
      });
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
          return std::make_unique<DopplerTrainedPlacer>(take_trained_spec(name, p));
        });
  register_placer({"doppler-search",
                   "search with the learned prior: local-search's annealer from the best of the "
                   "policy's samples (at most 1/16 of the budget) and local-search's list "
                   "schedulers, reassignments drawn from PLC (mix=); --budget (default 20,000) "
                   "and/or --time-budget, loading and sampling included",
                   kSearchParams, false, true},
                  make_doppler_search);
  for (const std::string name : {"placeto", "gdp"})
    register_placer(
        {name,
         name == "placeto" ? "Placeto: improves a placement op by op, one simulation per step"
                           : "GDP: GraphSAGE + Transformer-XL placer, one-shot placement",
         "calls=(budget),episodes,policy=CKPT,hidden,steps,lr,entropy,batch,epochs,clip,"
         "max_devices,heads,layers,segment",
         false, true},
        [name](PlacerParams& p) { return make_baseline(name, p); });
}

}  // namespace doppler
