// The Doppler methods trained inside place(): doppler-il, -sim, -sys, -sel, -plc, -joint and
// doppler-search:train=F (Stages I + II within the budget, Stage III on the CPU engine).
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>

#include "learned_support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/heuristics/anneal.hpp"
#include "doppler/train/pipeline.hpp"
#include "doppler/train/stage3_guard.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/log.hpp"
#include "doppler/util/number_text.hpp"

namespace doppler::learned {

namespace {

// Everything a trained-inside Doppler method is configured with.
struct TrainedSpec {
  std::string name;
  PipelineSpec pipeline;
  bool sim_given = false;
  SampleSpec sample;
  bool search = false;  // doppler-search
  double train_fraction = 0.5;
  double mix = 0.5;                 // share of learned moves among reassignments
  double t0 = AnnealSettings{}.t0;  // the search's start temperature (doppler-search)
};

// The Doppler methods that train inside place().
class DopplerTrainedPlacer : public Placer {
public:
  explicit DopplerTrainedPlacer(TrainedSpec s) : s_(std::move(s)) {}
  std::string name() const override { return s_.name; }

  std::int64_t default_calls() const override {
    // Given sim= rollouts and no budget, the budget is what they need.
    if (!s_.sim_given) return kDefaultTrainingCalls;
    return std::max<std::int64_t>(kDefaultTrainingCalls,
                                  std::int64_t{s_.pipeline.sim} + 1 + s_.sample.samples);
  }

  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override {
    const Plan plan = plan_budget(eval.limits());
    PipelineSpec spec = s_.pipeline;
    spec.sim = plan.sim;
    // The training stages (IL, SIM) share their part of the seconds; what Stage I leaves goes
    // to Stage II.
    if (eval.limits().seconds > 0)
      spec.seconds = (s_.search ? s_.train_fraction : 0.9) * eval.seconds_left();
    spec.base.seed = options.seed;
    // A stop asked through the progress callback ends training at the next update and
    // sampling at the next wave (calls are recorded when the stages end).
    spec.base.on_update = [&eval](double) { return !eval.stop_requested(); };
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
      // Simulator calls only: the engine measurements of Stage III are not simulations.
      Assignment out =
          eval.metered([&] { return stage3_answer(trainer, spec, measured, *engine); });
      out.method = name();
      return out;
    }
    Answer a = eval.metered(
        [&] { return train_and_sample(trainer, spec, measured, plan, options, eval); });
    if (s_.search && plan.search > 0 && plan.samples > 0 && !eval.spent()) {
      MoveProposal proposal{a.proposal, s_.mix};
      AnnealSettings as;
      as.proposal = &proposal;
      as.t0 = s_.t0;
      BudgetedEvaluator rest = eval.part({plan.search, 0});
      AnnealResult ar = anneal(problem, a.best.device_of, a.makespan, rest, as, options.seed);
      if (ar.best_makespan < a.makespan) a.best = {problem.devices(), ar.best, {}, name()};
    }
    a.best.method = name();
    return a.best;
  }

private:
  struct Plan {
    int sim = 0, samples = 0;
    std::int64_t search = 0;
  };
  // The best of training and sampling, with the sampled move proposal.
  struct Answer {
    Assignment best;
    double makespan = 0;
    std::vector<std::vector<double>> proposal;
  };

  // Stages I + II, then the best of plan.samples samples when it is better.
  Answer train_and_sample(DopplerTrainer& trainer, const PipelineSpec& spec,
                          const CostFunction& measured, const Plan& plan,
                          const PlaceOptions& options, BudgetedEvaluator& eval) const {
    const TrainResult tr = run_pipeline(trainer, spec, measured);
    Answer a{tr.best, tr.best_makespan, {}};
    if (plan.samples == 0) return a;
    SampleOptions so;
    so.samples = plan.samples;
    so.seed = options.seed;
    so.temperature = s_.sample.temperature;
    so.progress = sampling_watch(eval);
    SampledPlacement sp = trainer.sample(so);
    if (!(sp.best_makespan >= a.makespan)) {  // also when the makespan is NaN (Stage I only)
      a.best = sp.best;
      a.makespan = sp.best_makespan;
    }
    a.proposal = std::move(sp.proposal);
    return a;
  }

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
      log_info("Stage III's best measured " + sig_text(c.stage3.median, 4) +
               " s against Stage II's " + sig_text(c.stage2.median, 4) +
               " s on re-measurement, not significantly faster: Stage II's placement kept");
    return c.keep_stage3 ? three.best : two.best;
  }

  // Splits the budget (see learned_placers.hpp).
  Plan plan_budget(const Budget& limits) const {
    // A time limit alone: as many calls as the time allows (the stages' time limits end them).
    constexpr std::int64_t kTimeOnlyCalls = 10'000'000;
    const bool given = limits.evaluations > 0;
    const std::int64_t n = given                ? limits.evaluations
                           : limits.seconds > 0 ? kTimeOnlyCalls
                                                : kDefaultTrainingCalls;
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
        throw InputError("method " + s_.name + ": sim=" + std::to_string(s_.pipeline.sim) +
                         " rollouts and " + std::to_string(p.samples) +
                         " samples do not fit in a budget of " + std::to_string(n) +
                         " simulator calls");
      p.sim = s_.pipeline.sim;
      if (s_.search) p.search = std::max<std::int64_t>(0, n - p.sim - 1 - p.samples);
    }
    if (p.sim == 0 && s_.pipeline.il == 0 && s_.pipeline.init.empty())
      throw InputError("method " + s_.name + ": a budget of " + std::to_string(n) +
                       " calls leaves nothing to train on");
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
    throw InputError("method " + name + ": Stage III (real=) is doppler-sys's");
  s.pipeline.repeat = static_cast<int>(take_integer(p, name, "repeat", 3, 1, 1000));
  s.pipeline.init = take_string(p, "policy", "");
  s.sample = take_sample_spec(p, name);
  s.train_fraction = take_fraction(p, name, "train", 0.5);
  s.mix = take_fraction(p, name, "mix", 0.5);
  if (name == "doppler-search") s.t0 = take_start_temperature(p, name, s.t0);
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
    throw InputError("method " + name + ": sel must be rl or frozen");
  b.sel = sel == "frozen" ? SelMode::frozen : SelMode::rl;
  b.baseline = take_string(p, "baseline", "");
  b.lr_schedule = take_string(p, "schedule", "");
  const std::string returns = take_string(p, "returns", "episode");
  if (returns != "episode" && returns != "discounted")
    throw InputError("method " + name + ": returns must be episode or discounted");
  b.returns = returns == "episode" ? ReturnMode::episode : ReturnMode::discounted;
  b.action = take_string(p, "action", "");
  b.with_stage_defaults();  // validates the names now, before any work
  return s;
}

}  // namespace

std::unique_ptr<Placer> make_trained_placer(const std::string& name, PlacerParams& p) {
  return std::make_unique<DopplerTrainedPlacer>(take_trained_spec(name, p));
}

}  // namespace doppler::learned
