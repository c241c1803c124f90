#include "doppler/train/trainer.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>

#include <torch/torch.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/rollout.hpp"
#include "policy/nn/sampling.hpp"
#include "train/config_json.hpp"
#include "train/fused_adam.hpp"
#include "train/optimizer_checkpoint.hpp"
#include "train/rollback.hpp"
#include "train/run_files.hpp"
#include "train/update.hpp"
#include "train/update_pace.hpp"

#include "doppler/graph/fingerprint.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/log.hpp"
#include "doppler/util/number_text.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

using nlohmann::json;

// Milliseconds of a steady-clock duration.
double ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double, std::milli>(d).count();
}
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string rng_state(const std::mt19937_64& rng) {
  std::ostringstream ss;
  ss << rng;
  return ss.str();
}

// Mean and population standard deviation.
std::pair<double, double> mean_std(const std::vector<double>& x) {
  if (x.empty()) return {kNaN, kNaN};
  double m = 0, v = 0;
  for (double a : x) m += a / static_cast<double>(x.size());
  for (double a : x) v += (a - m) * (a - m) / static_cast<double>(x.size());
  return {m, std::sqrt(v)};
}

}  // namespace

// An elite: a scored assignment kept as a self-imitation target, with its replayed episode.
struct Elite {
  double cost = 0;
  Assignment assignment;
  nn::Episode episode;
};

struct DopplerTrainer::Impl {
  const Problem& problem;
  TrainConfig cfg;
  nn::GraphTensors gt;
  std::unique_ptr<nn::DualAgent> agent;
  std::unique_ptr<detail::FusedAdam> opt_sel, opt_plc;
  std::mt19937_64 rng;
  CostFunction cost;
  bool simulator_cost = true;  // the cost is the problem's simulator (thread-safe, per rollout)
  int cost_generation = 0;     // bumped by set_cost(); the best remembers its generation
  std::optional<std::filesystem::path> run_dir;
  int episode = 0;  // rollouts of the stage
  int update = 0;   // updates of the stage
  double baseline_sum = 0;
  int baseline_count = 0;
  double best = std::numeric_limits<double>::infinity();
  int best_generation = 0;
  Assignment best_assignment;
  std::vector<Elite> elites;  // lowest cost first, at most cfg.elite
  std::int64_t cost_calls = 0;
  double seconds = 0;        // all stages
  double stage_seconds = 0;  // this stage's updates (the time budget), kept in checkpoints
  std::optional<std::chrono::steady_clock::time_point> update_start;  // of the running update
  detail::UpdatePace pace{0};  // the stage's pace against its time budget (reset_pace)
  std::uint64_t fingerprint = 0;
  double lr_scale = 1;  // halved at every rolled-back divergence
  int divergences = 0;
  detail::Snapshot good;  // last good state (taken at every checkpoint)

  Impl(const Problem& p, TrainConfig c) : problem(p), cfg(c.with_stage_defaults()) {
    use_single_threaded_math();
    fingerprint = graph_fingerprint(p.graph());
    rng.seed(cfg.seed);
    make_agent(cfg.policy);
    reset_pace();
    cost = [this](const Assignment& a) { return problem.simulator().makespan(a.device_of); };
  }

  void make_agent(const PolicyConfig& pc) {
    cfg.policy = pc;
    torch::manual_seed(cfg.seed);
    agent = std::make_unique<nn::DualAgent>(pc);
    make_optimisers();
    gt = nn::problem_tensors(problem, pc);
  }

  void make_optimisers() {
    opt_sel = std::make_unique<detail::FusedAdam>(agent->sel->parameters(), cfg.lr);
    opt_plc = std::make_unique<detail::FusedAdam>(agent->plc->parameters(), cfg.lr);
    good.take(*agent, *opt_sel, *opt_plc);
  }

  bool imitation() const { return cfg.stage == TrainStage::imitation; }
  bool sel_frozen() const { return !imitation() && cfg.sel == SelMode::frozen; }

  double epsilon_now() const {
    const int e = std::max(1, cfg.updates() - 1);
    return cfg.epsilon +
           (cfg.epsilon_end - cfg.epsilon) * std::min(1.0, static_cast<double>(update) / e);
  }

  nn::RolloutOptions rollout_options(double eps, bool greedy_only) const {
    nn::RolloutOptions o;
    o.epsilon = eps;
    o.temperature = greedy_only || imitation() ? 1.0 : cfg.temperature;
    o.mode =
        greedy_only || cfg.action == "greedy" ? nn::ActionMode::greedy : nn::ActionMode::sample;
    o.greedy_sel = sel_frozen();
    o.learned_sel = agent->learns_sel();
    o.learned_plc = agent->learns_plc();
    o.joint = agent->joint();
    o.teacher = true;
    o.teacher_kind = nn::parse_teacher(cfg.teacher);
    return o;
  }

  json meta() const {
    json m;
    m["graph_fingerprint"] = fingerprint_hex(fingerprint);
    m["graph"] = problem.graph().meta().name;
    m["devices"] = problem.devices();
    m["platform"] = problem.platform().name();
    m["train"] = detail::to_json(cfg);
    m["policy"] = detail::to_json(cfg.policy);
    m["episode"] = episode;
    m["update"] = update;
    m["baseline_sum"] = baseline_sum;
    m["baseline_count"] = baseline_count;
    m["best"] = std::isfinite(best) ? json(best) : json(nullptr);
    if (std::isfinite(best)) m["best_assignment"] = detail::assignment_to_json(best_assignment);
    json el = json::array();
    for (const Elite& e : elites)
      el.push_back({{"cost", e.cost}, {"assignment", detail::assignment_to_json(e.assignment)}});
    m["elites"] = el;
    m["cost_calls"] = cost_calls;
    m["seconds"] = seconds;
    m["stage_seconds"] = stage_seconds;
    m["rng"] = rng_state(rng);
    m["lr_scale"] = lr_scale;
    m["divergences"] = divergences;
    return m;
  }

  static double seconds_between(std::chrono::steady_clock::time_point a,
                                std::chrono::steady_clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
  }

  // A fresh pace for the stage's time budget: it reads the stage's seconds (its updates', kept
  // across train() calls and checkpoints) plus the running update's; `updates_done`: the stage's
  // updates before this pace (a resumed stage).
  void reset_pace(int updates_done = 0) {
    pace = detail::UpdatePace(
        cfg.time_budget,
        [this] {
          return stage_seconds + (update_start ? Stopwatch::seconds_since(*update_start) : 0);
        },
        updates_done);
  }

  // K rollouts of the current policy, scored (RL stages). With a time budget they run in waves
  // of 2 x threads, and stop after the wave that ends past the stage's seconds: fewer than K
  // come back then. Each rollout keeps its seed, so the waves change nothing else.
  std::vector<nn::Sampled> roll_out(const nn::Prepared& prep, int k, double eps) {
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(k));
    for (auto& s : seeds) s = rng();
    const bool score = !imitation();
    const int threads = cfg.parallel ? 2 : 1;
    const std::size_t wave = cfg.time_budget > 0 ? static_cast<std::size_t>(2 * threads) : 0;
    std::vector<nn::Sampled> batch = nn::sample_rollouts_in_waves(
        problem, cfg.policy, prep.nets, rollout_options(eps, false), seeds, score && simulator_cost,
        threads, wave, [&](const std::vector<nn::Sampled>&) { return pace.within_limit(); });
    for (auto& b : batch) {
      b.episode.assignment.method = "doppler";
      if (score && !simulator_cost) b.cost = cost(b.episode.assignment);
      if (!score) b.cost = b.episode.estimate;  // for the log only: Stage I scores nothing
    }
    if (score) cost_calls += static_cast<std::int64_t>(batch.size());
    return batch;
  }

  // Advantages of the batch (RL) and the baseline reported.
  std::vector<double> advantages(const std::vector<double>& costs, EpisodeStats& st) {
    std::vector<double> adv(costs.size(), 0.0);
    if (imitation()) return adv;
    if (cfg.baseline == "loo") {
      adv = leave_one_out_advantages(costs, true);
      st.baseline = mean_std(costs).first;
    } else {  // the paper's: relative reward against the running mean of earlier makespans
      for (std::size_t i = 0; i < costs.size(); ++i) {
        const double b = baseline_count > 0 ? baseline_sum / baseline_count : costs[i];
        adv[i] = b > 0 ? (b - costs[i]) / b : 0.0;
        st.baseline = b;
        baseline_sum += costs[i];
        ++baseline_count;
      }
    }
    st.reward = mean_std(adv).first;
    return adv;
  }

  std::vector<double> step_weights(std::size_t steps) const {
    if (cfg.returns != ReturnMode::discounted) return {};
    std::vector<double> w(steps);
    for (std::size_t t = 0; t < steps; ++t)
      w[t] = std::pow(cfg.gamma, static_cast<double>(steps - 1 - t));
    return w;
  }

  detail::UpdateSettings update_settings(std::size_t steps, bool measure) const {
    detail::UpdateSettings u;
    u.imitation = imitation();
    u.learn_sel = agent->learns_sel() && !sel_frozen();
    u.learn_plc = agent->learns_plc();
    u.joint = agent->joint();
    u.entropy = cfg.entropy_weight;
    u.self_imitation = cfg.self_imitation;
    u.temperature = imitation() ? 1.0 : cfg.temperature;
    u.ppo_epochs = cfg.ppo_epochs;
    u.ppo_clip = cfg.ppo_clip;
    u.step_weights = step_weights(steps);
    u.grad_clip = cfg.grad_clip;
    u.grad_norms = measure;
    u.parallel = cfg.parallel;
    u.nodes = problem.graph().num_nodes();
    u.devices = problem.devices();
    return u;
  }

  // Keeps the cfg.elite best distinct assignments (replayed for self-imitation).
  void offer_elite(const nn::Sampled& s) {
    if (cfg.self_imitation <= 0 || agent->joint() || !std::isfinite(s.cost)) return;
    if (elites.size() >= static_cast<std::size_t>(cfg.elite) && s.cost >= elites.back().cost)
      return;
    for (const Elite& e : elites)
      if (e.assignment.device_of == s.episode.assignment.device_of) return;
    elites.push_back({s.cost, s.episode.assignment, s.episode});
    std::stable_sort(elites.begin(), elites.end(),
                     [](const Elite& a, const Elite& b) { return a.cost < b.cost; });
    if (elites.size() > static_cast<std::size_t>(cfg.elite)) elites.pop_back();
  }

  void record_best(const std::vector<nn::Sampled>& batch) {
    for (const auto& b : batch) {
      if (!std::isfinite(b.cost) || b.cost >= best) continue;
      best = b.cost;
      best_assignment = b.episode.assignment;
      best_generation = cost_generation;
    }
  }

  void fill_matches(const std::vector<nn::Sampled>& batch, EpisodeStats& st) const {
    double ms = 0, mp = 0, steps = 0;
    for (const auto& b : batch)
      for (const nn::Step& s : b.episode.steps) {
        ms += s.sel_greedy_match;
        mp += s.plc_greedy_match;
        ++steps;
      }
    st.match_sel = steps > 0 ? ms / steps : 1.0;
    st.match_plc = steps > 0 ? mp / steps : 1.0;
  }

  void copy_update_stats(const detail::UpdateStats& u, EpisodeStats& st) {
    st.loss_sel = u.loss_sel;
    st.loss_plc = u.loss_plc;
    st.entropy_sel = u.entropy_sel;
    st.entropy_plc = u.entropy_plc;
    st.pg_norm_sel = u.pg_norm_sel;
    st.pg_norm_plc = u.pg_norm_plc;
    st.entropy_norm_sel = u.entropy_norm_sel;
    st.entropy_norm_plc = u.entropy_norm_plc;
    st.si_norm_sel = u.si_norm_sel;
    st.si_norm_plc = u.si_norm_plc;
  }

  void handle_divergence(EpisodeStats& st) {
    good.restore(*agent, *opt_sel, *opt_plc);
    lr_scale *= 0.5;
    ++divergences;
    st.diverged = true;
    log_warning("update " + std::to_string(update) + ": diverging update (makespan " +
                shortest_text(st.makespan) + ", losses " + shortest_text(st.loss_sel) + " / " +
                shortest_text(st.loss_plc) +
                "); rolled back to the last good checkpoint, learning rate scaled by " +
                shortest_text(lr_scale));
  }

  EpisodeStats run_update() {
    const auto t0 = std::chrono::steady_clock::now();
    update_start = t0;
    EpisodeStats st;
    st.update = update;
    const int k = std::min(cfg.rollouts, cfg.episodes - episode);
    st.rollouts = k;
    st.lr = scheduled_lr(parse_lr_schedule(cfg.lr_schedule), cfg.lr, cfg.lr_end, cfg.warmup, update,
                         cfg.updates()) *
            lr_scale;
    st.epsilon = epsilon_now();
    opt_sel->set_lr(st.lr);
    opt_plc->set_lr(st.lr);
    const nn::Prepared prep = agent->prepare(gt, /*grad=*/true, cfg.parallel);
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<nn::Sampled> batch = roll_out(prep, k, st.epsilon);
    st.rollouts = static_cast<int>(batch.size());
    const auto t2 = std::chrono::steady_clock::now();
    const double rolled = seconds_between(t0, t2);  // preparing and rolling out
    // Cut by the time budget (a part batch, or a learning step that would end past it): the
    // batch's best rollouts are kept, nothing is learnt from it.
    const bool cut = static_cast<int>(batch.size()) < k || pace.learning_overruns(rolled);
    double learnt = 0;  // the learning step's seconds
    std::vector<double> costs;
    for (const auto& b : batch) costs.push_back(b.cost);
    bool ok = std::all_of(costs.begin(), costs.end(), [](double c) { return std::isfinite(c); });
    std::tie(st.makespan, st.makespan_std) = mean_std(costs);
    st.makespan_min = *std::min_element(costs.begin(), costs.end());
    if (ok && !cut) {
      const std::vector<double> adv = advantages(costs, st);
      agent->exact_sum_gradient = cfg.exact_gradient;
      std::vector<const nn::Episode*> targets;
      for (Elite& e : elites) {
        if (agent->learns_plc() && !cfg.exact_gradient)
          nn::refresh_device_sums(e.episode, prep.nets, problem.devices());
        targets.push_back(&e.episode);
      }
      const bool measure = cfg.grad_norm_every > 0 && update % cfg.grad_norm_every == 0;
      const detail::UpdateStats u =
          detail::update_networks(*agent, gt, prep, *opt_sel, *opt_plc, batch, adv, targets,
                                  update_settings(batch.front().episode.steps.size(), measure));
      copy_update_stats(u, st);
      ok = u.ok;
      learnt = Stopwatch::seconds_since(t2);
      if (std::getenv("DOPPLER_PROFILE"))
        std::cerr << "prepare " << fixed_text(ms(t1 - t0), 1) << " ms, rollouts "
                  << fixed_text(ms(t2 - t1), 1) << " ms, update "
                  << fixed_text(ms(std::chrono::steady_clock::now() - t2), 1) << " ms\n";
    }
    if (!ok) handle_divergence(st);
    fill_matches(batch, st);
    if (ok && !imitation()) {
      record_best(batch);
      for (const auto& b : batch) offer_elite(b);
    }
    st.best = std::isfinite(best) ? best : kNaN;
    st.calls = cost_calls;
    st.seconds = Stopwatch::seconds_since(t0);
    seconds += st.seconds;
    stage_seconds += st.seconds;
    update_start.reset();
    pace.record(st.seconds - learnt, learnt);
    episode += st.rollouts;
    st.episode = episode - 1;
    ++update;
    return st;
  }

  void write_run_files(bool checkpoint_now) {
    if (checkpoint_now) {
      if (!detail::all_finite(*agent->sel) || !detail::all_finite(*agent->plc)) {
        good.restore(*agent, *opt_sel, *opt_plc);  // never save a diverged state
        log_warning("non-finite weights at a checkpoint: rolled back to the last good checkpoint");
      }
      good.take(*agent, *opt_sel, *opt_plc);
    }
    if (!run_dir || !checkpoint_now) return;
    detail::write_checkpoint(*run_dir / "ckpt.pt", *agent, opt_sel.get(), opt_plc.get(), meta());
    if (std::isfinite(best))
      write_file_atomic(*run_dir / "best.json", format_assignment_json(best_assignment));
  }

  Assignment greedy_rollout() {
    torch::NoGradGuard no_grad;
    const nn::Prepared prep = agent->prepare(gt, false, cfg.parallel);
    std::mt19937_64 local(0);  // unused: epsilon 0 and greedy choices draw nothing
    nn::Episode ep = nn::rollout(problem, cfg.policy, prep.nets, rollout_options(0.0, true), local);
    ep.assignment.method = "doppler";
    return ep.assignment;
  }

  // Re-scores the carried-over best with the current cost function (start of a stage).
  void rescore_best() {
    if (!std::isfinite(best) || best_generation == cost_generation) return;
    best = cost(best_assignment);
    ++cost_calls;
    best_generation = cost_generation;
    for (Elite& e : elites) {  // elites must be comparable with the new costs too
      e.cost = cost(e.assignment);
      ++cost_calls;
    }
    std::stable_sort(elites.begin(), elites.end(),
                     [](const Elite& a, const Elite& b) { return a.cost < b.cost; });
    if (!std::isfinite(best)) best = std::numeric_limits<double>::infinity();
  }

  void restore_elites(const json& el) {
    elites.clear();
    const nn::Teacher t = nn::parse_teacher(cfg.teacher);
    for (const json& e : el) {
      Elite x;
      x.cost = e.at("cost").get<double>();
      x.assignment = detail::assignment_from_json(e.at("assignment"), "doppler");
      x.episode = nn::replay(problem, cfg.policy, x.assignment, t);
      elites.push_back(std::move(x));
    }
  }
};

DopplerTrainer::DopplerTrainer(const Problem& problem, TrainConfig config)
    : impl_(std::make_unique<Impl>(problem, std::move(config))) {}

DopplerTrainer::~DopplerTrainer() = default;

void DopplerTrainer::load_weights(const std::filesystem::path& path) {
  const auto checkpoint = checkpoint_path(path);
  const detail::Checkpoint c = detail::open_checkpoint(checkpoint);
  PolicyConfig pc;
  try {
    pc = detail::policy_config_from_json(c.meta.at("policy"));
  } catch (const std::exception&) {
    throw InputError(checkpoint.string(), 0, "checkpoint meta has no valid policy configuration");
  }
  pc.variant = impl_->cfg.policy.variant;  // the variant of this run decides what is learned
  impl_->make_agent(pc);
  detail::load_networks(c, *impl_->agent, checkpoint);
  impl_->good.take(*impl_->agent, *impl_->opt_sel, *impl_->opt_plc);
}

void DopplerTrainer::set_cost(CostFunction f) {
  impl_->cost = std::move(f);
  impl_->simulator_cost = false;
  ++impl_->cost_generation;
}

void DopplerTrainer::start_stage(TrainConfig next) {
  Impl& s = *impl_;
  next.policy = s.cfg.policy;
  s.cfg = next.with_stage_defaults();
  s.make_optimisers();
  s.episode = 0;
  s.update = 0;
  s.baseline_sum = 0;
  s.baseline_count = 0;
  s.lr_scale = 1;
  s.stage_seconds = 0;
  s.reset_pace();
  s.rescore_best();
}

namespace {

// Creates the run directory `dir` if needed; InputError when it cannot.
void make_run_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(dir.string(), 0, "cannot create the run directory");
}

}  // namespace

void DopplerTrainer::set_run_dir(const std::filesystem::path& dir) {
  make_run_dir(dir);
  impl_->run_dir = dir;
  // A fresh run: the log of an earlier run (or of one killed before its first checkpoint) in
  // the same directory must not stay in front of this run's updates.
  write_file_atomic(dir / "log.jsonl", "");
}

void DopplerTrainer::resume(const std::filesystem::path& dir) {
  const auto path = dir / "ckpt.pt";
  const detail::Checkpoint c = detail::open_checkpoint(path);
  Impl& s = *impl_;
  try {
    if (c.meta.at("graph_fingerprint").get<std::string>() != fingerprint_hex(s.fingerprint))
      throw InputError(path.string(), 0,
                       "checkpoint was made for another graph (fingerprint " +
                           c.meta.at("graph_fingerprint").get<std::string>() + ", this graph " +
                           fingerprint_hex(s.fingerprint) + ")");
    if (c.meta.at("devices").get<int>() != s.problem.devices())
      throw InputError(path.string(), 0,
                       "checkpoint is for " + std::to_string(c.meta.at("devices").get<int>()) +
                           " devices, " + std::to_string(s.problem.devices()) + " requested");
    s.cfg = detail::train_config_from_json(c.meta.at("train"));
    s.make_agent(detail::policy_config_from_json(c.meta.at("policy")));
    detail::load_networks(c, *s.agent, path);
    detail::load_optimizers(c, *s.opt_sel, *s.opt_plc, path);
    s.lr_scale = c.meta.value("lr_scale", 1.0);
    s.divergences = c.meta.value("divergences", 0);
    s.good.take(*s.agent, *s.opt_sel, *s.opt_plc);
    s.episode = c.meta.at("episode").get<int>();
    s.update = c.meta.value("update", s.episode);
    s.baseline_sum = c.meta.at("baseline_sum").get<double>();
    s.baseline_count = c.meta.at("baseline_count").get<int>();
    if (!c.meta.at("best").is_null()) {
      s.best = c.meta.at("best").get<double>();
      s.best_assignment = detail::assignment_from_json(c.meta.at("best_assignment"), "doppler");
    }
    s.restore_elites(c.meta.value("elites", json::array()));
    s.cost_calls = c.meta.at("cost_calls").get<std::int64_t>();
    s.seconds = c.meta.at("seconds").get<double>();
    s.stage_seconds = c.meta.value("stage_seconds", s.seconds);
    s.reset_pace(s.update);
    std::istringstream rs(c.meta.at("rng").get<std::string>());
    rs >> s.rng;
    if (!rs) throw InputError(path.string(), 0, "checkpoint has a corrupt RNG state");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0, std::string("checkpoint meta is incomplete: ") + e.what());
  }
  make_run_dir(dir);
  impl_->run_dir = dir;
  detail::truncate_log(dir / "log.jsonl", s.update);
}

TrainResult DopplerTrainer::train(const std::function<void(const EpisodeStats&)>& on_episode) {
  Impl& s = *impl_;
  if (s.run_dir)
    write_file_atomic(*s.run_dir / "config.json", detail::to_json(s.cfg).dump(2) + "\n");
  while (s.episode < s.cfg.episodes && s.pace.may_start_update()) {
    if (s.cfg.on_update && !s.cfg.on_update(s.best)) break;  // the caller stops the run
    const EpisodeStats st = s.run_update();
    if (s.run_dir)
      detail::append_log_line(*s.run_dir / "log.jsonl", detail::stats_json(st, s.cfg.stage));
    const bool ckpt = s.cfg.checkpoint_every > 0 && s.update % s.cfg.checkpoint_every == 0;
    s.write_run_files(ckpt || s.episode >= s.cfg.episodes);
    if (on_episode) on_episode(st);
  }
  TrainResult r;
  r.greedy = s.greedy_rollout();
  if (s.imitation()) {  // Stage I scores nothing
    r.greedy_makespan = kNaN;
  } else {
    r.greedy_makespan = s.cost(r.greedy);
    ++s.cost_calls;
    if (r.greedy_makespan < s.best) {
      s.best = r.greedy_makespan;
      s.best_assignment = r.greedy;
      s.best_generation = s.cost_generation;
    }
  }
  r.best = std::isfinite(s.best) ? s.best_assignment : r.greedy;
  r.best_makespan = std::isfinite(s.best) ? s.best : kNaN;
  r.episodes = s.episode;
  r.cost_calls = s.cost_calls;
  r.seconds = s.seconds;
  s.write_run_files(true);
  return r;
}

Assignment DopplerTrainer::greedy() {
  return impl_->greedy_rollout();
}

SampledPlacement DopplerTrainer::sample(const SampleOptions& o) {
  Impl& s = *impl_;
  if (o.samples < 1) throw InputError("doppler: samples must be at least 1");
  SampledPlacement r =
      nn::sample_placement(s.problem, *s.agent, s.gt, o, nn::parse_teacher(s.cfg.teacher));
  s.cost_calls += r.calls;
  return r;
}

std::int64_t DopplerTrainer::cost_calls() const {
  return impl_->cost_calls;
}

void DopplerTrainer::save_checkpoint(const std::filesystem::path& path) const {
  detail::write_checkpoint(path, *impl_->agent, impl_->opt_sel.get(), impl_->opt_plc.get(),
                           impl_->meta());
}

const TrainConfig& DopplerTrainer::config() const {
  return impl_->cfg;
}

int DopplerTrainer::episodes_done() const {
  return impl_->episode;
}

}  // namespace doppler
