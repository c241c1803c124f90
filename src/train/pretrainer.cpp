// doppler pretrain: the orchestration of a pretraining run (Pretrainer::Impl): its stages, the
// distillation rounds, evaluations, checkpoints and run files. The parts: the problems
// (pretrain_pool), one update (pretrain_update), distillation (pretrain_distill) and evaluation
// (pretrain_eval).
#include <chrono>
#include <optional>
#include <string>

#include <torch/torch.h>

#include "train/config_json.hpp"
#include "train/optimizer_checkpoint.hpp"
#include "train/pretrain_distill.hpp"
#include "train/pretrain_eval.hpp"
#include "train/pretrain_pool.hpp"
#include "train/pretrain_update.hpp"
#include "train/run_files.hpp"

#include "doppler/policy/doppler_policy.hpp"
#include "doppler/policy/math_threads.hpp"
#include "doppler/train/policy_gradient.hpp"
#include "doppler/train/pretrain.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/log.hpp"
#include "doppler/util/number_text.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr double kIlLr = 1e-3;

json to_json(const PretrainConfig& c) {
  return {{"il_updates", c.il_updates},
          {"updates", c.updates},
          {"batch", c.batch},
          {"rollouts", c.rollouts},
          {"lr", c.lr},
          {"lr_end", c.lr_end},
          {"warmup", c.warmup},
          {"temperature", c.temperature},
          {"entropy_weight", c.entropy_weight},
          {"grad_clip", c.grad_clip},
          {"teacher", c.teacher},
          {"eval_every", c.eval_every},
          {"checkpoint_every", c.checkpoint_every},
          {"eval_budget", c.eval_budget},
          {"seed", c.seed},
          {"threads", c.threads},
          {"time_budget", c.time_budget},
          {"policy", detail::to_json(c.policy)},
          {"init", c.init},
          {"distill", c.distill},
          {"label_budget", c.label_budget},
          {"rounds", c.rounds},
          {"round_updates", c.round_updates},
          {"pg_weight", c.pg_weight},
          {"expert_mix", c.expert_mix},
          {"distill_nets", c.distill_nets},
          {"eval_pool", c.eval_pool},
          {"eval_samples", c.eval_samples}};
}

PretrainConfig pretrain_config_from_json(const json& j) {
  PretrainConfig c;
  c.il_updates = j.at("il_updates").get<int>();
  c.updates = j.at("updates").get<int>();
  c.batch = j.at("batch").get<int>();
  c.rollouts = j.at("rollouts").get<int>();
  c.lr = j.at("lr").get<double>();
  c.lr_end = j.at("lr_end").get<double>();
  c.warmup = j.at("warmup").get<int>();
  c.temperature = j.at("temperature").get<double>();
  c.entropy_weight = j.at("entropy_weight").get<double>();
  c.grad_clip = j.at("grad_clip").get<double>();
  c.teacher = j.at("teacher").get<std::string>();
  c.eval_every = j.at("eval_every").get<int>();
  c.checkpoint_every = j.at("checkpoint_every").get<int>();
  c.eval_budget = j.at("eval_budget").get<std::int64_t>();
  c.seed = j.at("seed").get<std::uint64_t>();
  c.threads = j.at("threads").get<int>();
  c.time_budget = j.at("time_budget").get<double>();
  c.policy = detail::policy_config_from_json(j.at("policy"));
  c.init = j.value("init", c.init);  // absent in runs made before distillation
  c.distill = j.value("distill", c.distill);
  c.label_budget = j.value("label_budget", c.label_budget);
  c.rounds = j.value("rounds", c.rounds);
  c.round_updates = j.value("round_updates", c.round_updates);
  c.pg_weight = j.value("pg_weight", c.pg_weight);
  c.expert_mix = j.value("expert_mix", c.expert_mix);
  c.distill_nets = j.value("distill_nets", c.distill_nets);
  c.eval_pool = j.value("eval_pool", c.eval_pool);
  c.eval_samples = j.value("eval_samples", c.eval_samples);
  return c;
}
// The weights to start from (PretrainConfig::init), whose policy configuration replaces
// c.policy.
detail::Checkpoint open_init(const std::filesystem::path& path, PretrainConfig& c) {
  detail::Checkpoint init = detail::open_checkpoint(path);
  try {
    c.policy = detail::policy_config_from_json(init.meta.at("policy"));
  } catch (const std::exception&) {
    throw InputError(path.string(), 0, "checkpoint meta has no valid policy configuration");
  }
  return init;
}

}  // namespace

PolicyConfig pretrain_policy_defaults() {
  PolicyConfig p;
  p.hidden = 64;
  p.edge_hidden = 32;
  p.steps = 4;
  p.mlp_hidden = 64;
  p.features = FeatureMode::scaled;
  return p;
}

void PretrainConfig::validate() const {
  const auto bad = [](const std::string& what) { throw InputError("pretrain: " + what); };
  if (il_updates < 0 || updates < 0) bad("update counts must be non-negative");
  if (batch < 1) bad("batch must be at least 1");
  if (rollouts < 2) bad("rollouts must be at least 2 (the baseline leaves one out)");
  if (!(lr > 0) || !(lr_end >= 0)) bad("learning rates must be positive");
  if (!(temperature > 0)) bad("temperature must be positive");
  if (threads < 1) bad("threads must be at least 1");
  if (checkpoint_every < 1) bad("checkpoint_every must be at least 1");
  nn::parse_teacher(teacher);
  if (!distilling()) return;
  detail::parse_label_source(distill);
  if (label_budget < 1) bad("label budget must be at least 1");
  if (rounds < 1 || round_updates < 1) bad("rounds and round updates must be at least 1");
  if (pg_weight < 0) bad("pg weight must be non-negative");
  if (!(expert_mix >= 0 && expert_mix <= 1)) bad("expert mix must be in [0, 1]");
  if (distill_nets != "both" && distill_nets != "sel" && distill_nets != "plc")
    bad("distill nets must be both, sel or plc");
  if (eval_pool < 0 || eval_samples < 1) bad("eval pool must be >= 0 and eval samples >= 1");
}
struct Pretrainer::Impl {
  PretrainSpec spec;
  PretrainConfig cfg;
  DataParallel dp;
  detail::PretrainPool problems;
  detail::PretrainNets nets;
  std::unique_ptr<detail::Distiller> distiller;  // when distilling
  std::optional<std::filesystem::path> run_dir;
  int update = 0;
  std::int64_t calls = 0;
  double seconds = 0, lr_scale = 1;
  int divergences = 0;

  void build(PretrainSpec s, PretrainConfig c, DataParallel d, bool resuming = false) {
    use_single_threaded_math();
    c.validate();
    if (c.distilling()) c.updates = c.rounds * c.round_updates;
    std::filesystem::path init_path;
    std::optional<detail::Checkpoint> init;
    if (!c.init.empty() && !resuming) {
      init_path = checkpoint_path(c.init);
      init = open_init(init_path, c);
    }
    spec = std::move(s);
    spec.text = spec_json_text(spec);
    cfg = c;
    dp = std::move(d);
    calls += problems.draw(spec, cfg.policy, cfg.threads);
    nets.build(cfg.policy, cfg.seed, cfg.lr, init ? &*init : nullptr, init_path);
    if (cfg.distilling()) distiller = std::make_unique<detail::Distiller>(cfg, dp, problems);
  }

  int total_updates() const { return cfg.il_updates + cfg.updates; }
  bool imitation() const { return update < cfg.il_updates; }
  bool distill_stage() const { return distiller && distiller->distilling(update); }

  double lr_now() const {
    if (imitation()) return kIlLr * lr_scale;
    return scheduled_lr(LrSchedule::cosine, cfg.lr, cfg.lr_end, cfg.warmup, update - cfg.il_updates,
                        cfg.updates) *
           lr_scale;
  }

  // Simulator calls so far: rollouts, references and evaluations, and the recorded label searches
  // (every rank counts all of those).
  std::int64_t total_calls() const { return calls + (distiller ? distiller->labels().calls() : 0); }

  json meta() const {
    json m;
    m["kind"] = "pretrain";
    m["policy"] = detail::to_json(cfg.policy);
    m["pretrain"] = to_json(cfg);
    m["spec"] = json::parse(spec.text);
    m["update"] = update;
    m["calls"] = calls;
    m["seconds"] = seconds;
    m["lr_scale"] = lr_scale;
    m["divergences"] = divergences;
    m["ranks"] = dp.ranks;
    return m;
  }

  // RUN/round-R.pt: the weights after round R (rank 0), to place with or to compare rounds.
  void export_round() const {
    if (!run_dir || dp.rank != 0) return;
    json m = meta();
    m["kind"] = "policy";
    const std::string name = "round-" + std::to_string(distiller->round_of(update - 1)) + ".pt";
    detail::write_checkpoint(*run_dir / name, *nets.agent, nullptr, nullptr, m);
  }

  // One update; a diverged one is rolled back and halves the learning rate.
  PretrainStats run_update() {
    const auto t0 = Clock::now();
    detail::UpdatePlan plan;
    plan.update = update;
    plan.imitation = imitation();
    plan.distill = distill_stage();
    plan.lr = lr_now();
    if (distiller) plan.experts = &distiller->experts();
    detail::UpdateOutcome out = detail::run_update(nets, problems, cfg, dp, plan);
    calls += out.simulations;
    if (!out.stepped) {
      nets.roll_back();
      lr_scale *= 0.5;
      ++divergences;
      log_warning("update " + std::to_string(update) +
                  ": diverging update; rolled back, learning rate scaled by " +
                  shortest_text(lr_scale));
    }
    ++update;
    PretrainStats& st = out.stats;
    st.calls = total_calls();
    st.seconds = Stopwatch::seconds_since(t0);
    seconds += st.seconds;
    return st;
  }

  detail::PretrainEvaluator evaluator() { return {cfg, problems, *nets.agent}; }

  // One update with what comes with it: the round's labels before it, the round's evaluation
  // after it (distillation), the held-out evaluation when due; its log line.
  std::pair<PretrainStats, json> step() {
    json round_labels;
    if (distiller && distiller->round_starts(update)) {  // after a checkpoint of the weights used
      checkpoint();
      round_labels = distiller->generate_labels(distiller->round_of(update), *nets.agent);
    }
    const PretrainStats st = run_update();
    json line = detail::pretrain_stats_json(st);
    if (!round_labels.is_null()) line["labels"] = round_labels;
    if (distiller && distiller->round_ended(update)) {
      line["round_eval"] =
          evaluator().round(distiller->round_of(update - 1), distiller->labels(), calls);
      export_round();
    }
    const bool last = update == total_updates();
    if (dp.rank == 0 && !problems.held.empty() &&
        ((cfg.eval_every > 0 && update % cfg.eval_every == 0) || last))
      line["held_out"] = detail::held_out_json(evaluator().held_out());
    if (dp.ranks > 1) line["ranks"] = dp.ranks;
    return {st, line};
  }

  // True when the time budget is spent (on any rank: every rank stops at the same update).
  bool over_time(Clock::time_point start) const {
    double over =
        cfg.time_budget > 0 && Stopwatch::seconds_since(start) > cfg.time_budget ? 1.0 : 0.0;
    if (dp.ranks > 1 && dp.average) {
      std::vector<float> v = {static_cast<float>(over)};
      dp.average(v);
      over = v[0];
    }
    return over > 0;
  }

  void checkpoint() {
    nets.keep_good();
    if (dp.ranks > 1 && dp.agree && !dp.agree(nets.weight_checksum()))
      throw std::runtime_error(
          "pretrain: the ranks' weights differ (data-parallel replicas diverged)");
    if (!run_dir || dp.rank != 0) return;
    detail::write_checkpoint(*run_dir / "ckpt.pt", *nets.agent, nets.opt_sel.get(),
                             nets.opt_plc.get(), meta());
  }
};

Pretrainer::Pretrainer(PretrainSpec spec, PretrainConfig config, DataParallel dp)
    : impl_(std::make_unique<Impl>()) {
  impl_->build(std::move(spec), config, std::move(dp));
}

Pretrainer::~Pretrainer() = default;

void Pretrainer::set_run_dir(const std::filesystem::path& dir) {
  Impl& s = *impl_;
  s.run_dir = dir;
  if (s.dp.rank != 0) return;
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw InputError(dir.string(), 0, "cannot create the run directory");
  write_file_atomic(dir / "log.jsonl", "");
  json names = {{"pool", pool_names()}, {"held_out", held_out_names()}};
  write_file_atomic(dir / "problems.json", names.dump(2) + "\n");
  write_file_atomic(dir / "spec.json", json::parse(s.spec.text).dump(2) + "\n");
  write_file_atomic(dir / "config.json", to_json(s.cfg).dump(2) + "\n");
  if (s.distiller)
    s.distiller->set_labels(
        std::make_unique<detail::LabelStore>(s.problems.size(), dir / "labels.jsonl"));
}

std::unique_ptr<Pretrainer> Pretrainer::resume(const std::filesystem::path& dir, int updates,
                                               DataParallel dp) {
  const auto path = dir / "ckpt.pt";
  const detail::Checkpoint c = detail::open_checkpoint(path);
  std::unique_ptr<Pretrainer> p(new Pretrainer());
  p->impl_ = std::make_unique<Impl>();
  Impl& s = *p->impl_;
  PretrainConfig cfg;
  PretrainSpec spec;
  try {
    if (c.meta.value("kind", "") != "pretrain")
      throw InputError(path.string(), 0, "not a pretraining checkpoint (doppler train's?)");
    cfg = pretrain_config_from_json(c.meta.at("pretrain"));
    spec = parse_pretrain_spec(c.meta.at("spec").dump(), path.string() + " (spec)", "/");
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string(), 0, std::string("checkpoint meta is incomplete: ") + e.what());
  }
  if (updates > 0) cfg.updates = updates;
  s.build(std::move(spec), cfg, std::move(dp), /*resuming=*/true);
  detail::load_networks(c, *s.nets.agent, path);
  detail::load_optimizers(c, *s.nets.opt_sel, *s.nets.opt_plc, path);
  s.update = c.meta.at("update").get<int>();
  s.calls = c.meta.at("calls").get<std::int64_t>();
  s.seconds = c.meta.at("seconds").get<double>();
  s.lr_scale = c.meta.value("lr_scale", 1.0);
  s.divergences = c.meta.value("divergences", 0);
  s.nets.keep_good();
  s.run_dir = dir;
  if (s.dp.rank == 0) detail::truncate_log(dir / "log.jsonl", s.update);
  if (s.distiller)  // the labels found so far (rank 0 keeps appending to the file)
    s.distiller->set_labels(std::make_unique<detail::LabelStore>(
        detail::LabelStore::load(s.problems.size(), dir / "labels.jsonl", s.dp.rank == 0)));
  return p;
}

void Pretrainer::run(const std::function<void(const PretrainStats&)>& on_update) {
  Impl& s = *impl_;
  const auto start = Clock::now();
  Progress progress("pretrain", s.total_updates());
  while (s.update < s.total_updates()) {
    const auto [st, line] = s.step();
    if (s.run_dir && s.dp.rank == 0) detail::append_log_line(*s.run_dir / "log.jsonl", line);
    if (on_update) on_update(st);
    progress.update(s.update, "ratio " + fixed_text(st.ratio, 3));
    const bool last = s.update == s.total_updates();
    const bool over = s.over_time(start);
    if (last || over || s.update % s.cfg.checkpoint_every == 0) s.checkpoint();
    if (over) break;
  }
}

std::vector<HeldOutResult> Pretrainer::evaluate_held_out() {
  return impl_->evaluator().held_out();
}

void Pretrainer::export_policy(const std::filesystem::path& path) const {
  json m = impl_->meta();
  m["kind"] = "policy";
  detail::write_checkpoint(path, *impl_->nets.agent, nullptr, nullptr, m);
}

std::vector<std::string> Pretrainer::pool_names() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->problems.pool) out.push_back(p.name);
  return out;
}

std::vector<std::string> Pretrainer::held_out_names() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->problems.held) out.push_back(p.name);
  return out;
}

int Pretrainer::updates_done() const {
  return impl_->update;
}

bool Pretrainer::finished() const {
  return impl_->update >= impl_->total_updates();
}

}  // namespace doppler
