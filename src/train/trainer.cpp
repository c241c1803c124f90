#include "doppler/train/trainer.hpp"

#include <chrono>
#include <cmath>
#include <fstream>
#include <future>
#include <limits>
#include <sstream>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/rollout.hpp"
#include "train/checkpoint.hpp"
#include "train/config_json.hpp"
#include "train/fused_adam.hpp"

#include "doppler/graph/fingerprint.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/policy/features.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

extern "C" void openblas_set_num_threads(int);

namespace doppler {

namespace {

using nlohmann::json;

std::string rng_state(const std::mt19937_64& rng) {
  std::ostringstream ss;
  ss << rng;
  return ss.str();
}

json assignment_json(const Assignment& a) {
  return {{"devices", a.devices}, {"device_of", a.device_of}, {"order", a.order}};
}

Assignment assignment_from_json(const json& j, const std::string& method) {
  Assignment a;
  a.devices = j.at("devices").get<int>();
  a.device_of = j.at("device_of").get<std::vector<DeviceId>>();
  a.order = j.at("order").get<std::vector<NodeId>>();
  a.method = method;
  return a;
}

}  // namespace

void use_single_threaded_math() {
  torch::set_num_threads(1);
  static bool interop_set = false;
  if (!interop_set) {
    try {
      torch::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // already initialised by an earlier parallel call; harmless
    }
    interop_set = true;
  }
  openblas_set_num_threads(1);
}

// The last good state of both networks and their optimisers, for rolling back a diverged update.
struct Snapshot {
  std::vector<torch::Tensor> sel, plc;
  detail::FusedAdam::State opt_sel, opt_plc;
};

std::vector<torch::Tensor> clone_params(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

void restore_params(torch::nn::Module& m, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  auto params = m.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
}

bool all_finite(torch::nn::Module& m) {
  for (const auto& p : m.parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

struct DopplerTrainer::Impl {
  const Problem& problem;
  TrainConfig cfg;
  nn::GraphTensors gt;
  std::unique_ptr<nn::DualAgent> agent;
  std::unique_ptr<detail::FusedAdam> opt_sel, opt_plc;
  std::mt19937_64 rng;
  CostFunction cost;
  std::optional<std::filesystem::path> run_dir;
  int episode = 0;
  double baseline_sum = 0;
  int baseline_count = 0;
  double best = std::numeric_limits<double>::infinity();
  Assignment best_assignment;
  std::int64_t cost_calls = 0;
  double seconds = 0;
  std::uint64_t fingerprint = 0;
  double lr_scale = 1;  // halved at every rolled-back divergence
  int divergences = 0;
  Snapshot good;  // last good state (taken at every checkpoint)

  void take_snapshot() {
    good.sel = clone_params(*agent->sel);
    good.plc = clone_params(*agent->plc);
    good.opt_sel = opt_sel->state();
    good.opt_plc = opt_plc->state();
  }

  void roll_back() {
    restore_params(*agent->sel, good.sel);
    restore_params(*agent->plc, good.plc);
    opt_sel->set_state(good.opt_sel);
    opt_plc->set_state(good.opt_plc);
  }

  Impl(const Problem& p, TrainConfig c) : problem(p), cfg(c.with_stage_defaults()) {
    use_single_threaded_math();
    fingerprint = graph_fingerprint(p.graph());
    rng.seed(cfg.seed);
    make_agent(cfg.policy);
    cost = [this](const Assignment& a) { return problem.simulator().makespan(a); };
  }

  void make_agent(const PolicyConfig& pc) {
    cfg.policy = pc;
    torch::manual_seed(cfg.seed);
    agent = std::make_unique<nn::DualAgent>(pc);
    opt_sel = std::make_unique<detail::FusedAdam>(agent->sel->parameters(), cfg.lr);
    opt_plc = std::make_unique<detail::FusedAdam>(agent->plc->parameters(), cfg.lr);
    const GraphFeatures f = graph_features(problem.graph(), problem.cost(), problem.analysis());
    gt = nn::make_graph_tensors(f, pc.max_levels);
    take_snapshot();
  }

  double schedule(double start, double end) const {
    const int e = std::max(1, cfg.episodes - 1);
    return start + (end - start) * std::min(1.0, static_cast<double>(episode) / e);
  }

  nn::RolloutOptions rollout_options(double eps, bool greedy_only) const {
    nn::RolloutOptions o;
    o.epsilon = eps;
    o.mode =
        greedy_only || cfg.action == "greedy" ? nn::ActionMode::greedy : nn::ActionMode::sample;
    o.learned_sel = agent->learns_sel();
    o.learned_plc = agent->learns_plc();
    o.joint = agent->joint();
    o.teacher = true;
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
    m["baseline_sum"] = baseline_sum;
    m["baseline_count"] = baseline_count;
    m["best"] = std::isfinite(best) ? json(best) : json(nullptr);
    if (std::isfinite(best)) m["best_assignment"] = assignment_json(best_assignment);
    m["cost_calls"] = cost_calls;
    m["seconds"] = seconds;
    m["rng"] = rng_state(rng);
    m["lr_scale"] = lr_scale;
    m["divergences"] = divergences;
    return m;
  }

  EpisodeStats run_episode() {
    const auto t0 = std::chrono::steady_clock::now();
    EpisodeStats st;
    st.episode = episode;
    st.lr = schedule(cfg.lr, cfg.lr_end) * lr_scale;
    st.epsilon = schedule(cfg.epsilon, cfg.epsilon_end);
    opt_sel->set_lr(st.lr);
    opt_plc->set_lr(st.lr);
    const nn::Prepared prep = agent->prepare(gt, /*grad=*/true, cfg.parallel);
    nn::Episode ep =
        nn::rollout(problem, cfg.policy, prep.nets, rollout_options(st.epsilon, false), rng);
    ep.assignment.method = "doppler";
    st.makespan = cost(ep.assignment);
    ++cost_calls;
    const bool il = cfg.stage == TrainStage::imitation;
    const auto steps = static_cast<int64_t>(ep.steps.size());
    torch::Tensor returns;
    if (!il) {
      st.baseline = baseline_count > 0 ? baseline_sum / baseline_count : st.makespan;
      st.reward = st.baseline > 0 ? (st.baseline - st.makespan) / st.baseline : 0.0;
      returns = torch::full({steps}, st.reward, torch::kFloat);
      if (cfg.returns == ReturnMode::discounted)
        returns = returns * torch::pow(torch::full({steps}, cfg.gamma),
                                       torch::arange(steps - 1, -1, -1, torch::kFloat));
    }
    baseline_sum += st.makespan;
    ++baseline_count;
    const int n = problem.graph().num_nodes(), p = problem.devices();
    const double beta = cfg.entropy_weight;
    const auto update = [&](bool sel, double& loss_out, double& entropy_out) {
      nn::StepTerms t =
          sel ? agent->sel_terms(prep, ep, n)
              : (agent->joint() ? agent->joint_terms(prep, ep, p) : agent->plc_terms(prep, ep, p));
      const auto objective = il ? t.teacher.sum() : (returns * t.logp).sum();
      const auto loss = -objective - beta * t.entropy.sum();
      auto& opt = sel ? *opt_sel : *opt_plc;
      torch::nn::Module& net = sel ? static_cast<torch::nn::Module&>(*agent->sel)
                                   : static_cast<torch::nn::Module&>(*agent->plc);
      loss_out = loss.item<double>();
      if (!std::isfinite(loss_out)) return false;  // diverged: no update
      opt.zero_grad();
      loss.backward();
      const double norm = torch::nn::utils::clip_grad_norm_(
          net.parameters(), cfg.grad_clip > 0 ? cfg.grad_clip : 1e300);
      if (!std::isfinite(norm)) return false;
      opt.step();
      entropy_out = steps > 0 ? t.entropy.mean().item<double>() : 0.0;
      return all_finite(net);
    };
    bool ok = std::isfinite(st.makespan) && st.makespan >= 0;
    if (steps > 0 && ok) {
      const bool both = agent->learns_sel() && agent->learns_plc();
      bool ok_sel = true, ok_plc = true;
      if (both && cfg.parallel) {
        auto f = std::async(std::launch::async,
                            [&] { return update(true, st.loss_sel, st.entropy_sel); });
        ok_plc = update(false, st.loss_plc, st.entropy_plc);
        ok_sel = f.get();
      } else {
        if (agent->learns_sel()) ok_sel = update(true, st.loss_sel, st.entropy_sel);
        if (agent->learns_plc()) ok_plc = update(false, st.loss_plc, st.entropy_plc);
      }
      ok = ok_sel && ok_plc;
    }
    if (!ok) {
      // A diverging update (non-finite cost, loss, gradient or weight): roll back to the last
      // good checkpoint and continue with half the learning rate.
      roll_back();
      lr_scale *= 0.5;
      ++divergences;
      st.diverged = true;
      spdlog::warn(
          "episode {}: diverging update (makespan {}, losses {} / {}); rolled back to the last "
          "good "
          "checkpoint, learning rate scaled by {}",
          episode, st.makespan, st.loss_sel, st.loss_plc, lr_scale);
      baseline_sum -= st.makespan;  // keep a non-finite cost out of the baseline
      --baseline_count;
    }
    int ms = 0, mp = 0;
    for (const nn::Step& s : ep.steps) {
      ms += s.sel_greedy_match;
      mp += s.plc_greedy_match;
    }
    st.match_sel = steps ? static_cast<double>(ms) / static_cast<double>(steps) : 1.0;
    st.match_plc = steps ? static_cast<double>(mp) / static_cast<double>(steps) : 1.0;
    if (ok && st.makespan < best) {
      best = st.makespan;
      best_assignment = ep.assignment;
    }
    st.best = best;
    st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    seconds += st.seconds;
    ++episode;
    return st;
  }

  void write_run_files(bool checkpoint_now) {
    if (checkpoint_now) {
      if (!all_finite(*agent->sel) || !all_finite(*agent->plc)) {  // never save a diverged state
        roll_back();
        spdlog::warn("non-finite weights at a checkpoint: rolled back to the last good checkpoint");
      }
      take_snapshot();
    }
    if (!run_dir) return;
    if (checkpoint_now) {
      detail::write_checkpoint(*run_dir / "ckpt.pt", *agent, opt_sel.get(), opt_plc.get(), meta());
      if (std::isfinite(best))
        write_file_atomic(*run_dir / "best.json", format_assignment_json(best_assignment));
    }
  }

  void append_log(const EpisodeStats& s) {
    if (!run_dir) return;
    const json j = {{"episode", s.episode},
                    {"stage", train_stage_name(cfg.stage)},
                    {"makespan", s.makespan},
                    {"reward", s.reward},
                    {"baseline", s.baseline},
                    {"loss_sel", s.loss_sel},
                    {"loss_plc", s.loss_plc},
                    {"entropy_sel", s.entropy_sel},
                    {"entropy_plc", s.entropy_plc},
                    {"match_sel", s.match_sel},
                    {"match_plc", s.match_plc},
                    {"lr", s.lr},
                    {"epsilon", s.epsilon},
                    {"seconds", s.seconds},
                    {"best", s.best}};
    std::ofstream out(*run_dir / "log.jsonl", std::ios::app);
    out << j.dump() << "\n";
    if (!out) throw InputError((*run_dir / "log.jsonl").string(), 0, "cannot append to the log");
  }

  Assignment greedy_rollout() {
    torch::NoGradGuard no_grad;
    const nn::Prepared prep = agent->prepare(gt, false, cfg.parallel);
    std::mt19937_64 local(0);  // unused: epsilon 0 and greedy choices draw nothing
    nn::Episode ep = nn::rollout(problem, cfg.policy, prep.nets, rollout_options(0.0, true), local);
    ep.assignment.method = "doppler";
    return ep.assignment;
  }
};

DopplerTrainer::DopplerTrainer(const Problem& problem, TrainConfig config)
    : impl_(std::make_unique<Impl>(problem, std::move(config))) {}

DopplerTrainer::~DopplerTrainer() = default;

void DopplerTrainer::load_weights(const std::filesystem::path& checkpoint) {
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
  impl_->take_snapshot();
}

void DopplerTrainer::set_cost(CostFunction f) {
  impl_->cost = std::move(f);
}

void DopplerTrainer::start_stage(TrainConfig next) {
  Impl& s = *impl_;
  next.policy = s.cfg.policy;
  s.cfg = next.with_stage_defaults();
  s.opt_sel = std::make_unique<detail::FusedAdam>(s.agent->sel->parameters(), s.cfg.lr);
  s.opt_plc = std::make_unique<detail::FusedAdam>(s.agent->plc->parameters(), s.cfg.lr);
  s.episode = 0;
  s.baseline_sum = 0;
  s.baseline_count = 0;
  s.lr_scale = 1;
  s.take_snapshot();
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
  // the same directory must not stay in front of this run's episodes.
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
                       fmt::format("checkpoint is for {} devices, {} requested",
                                   c.meta.at("devices").get<int>(), s.problem.devices()));
    s.cfg = detail::train_config_from_json(c.meta.at("train"));
    s.make_agent(detail::policy_config_from_json(c.meta.at("policy")));
    detail::load_networks(c, *s.agent, path);
    detail::load_optimizers(c, *s.opt_sel, *s.opt_plc, path);
    s.lr_scale = c.meta.value("lr_scale", 1.0);
    s.divergences = c.meta.value("divergences", 0);
    s.take_snapshot();
    s.episode = c.meta.at("episode").get<int>();
    s.baseline_sum = c.meta.at("baseline_sum").get<double>();
    s.baseline_count = c.meta.at("baseline_count").get<int>();
    if (!c.meta.at("best").is_null()) {
      s.best = c.meta.at("best").get<double>();
      s.best_assignment = assignment_from_json(c.meta.at("best_assignment"), "doppler");
    }
    s.cost_calls = c.meta.at("cost_calls").get<std::int64_t>();
    s.seconds = c.meta.at("seconds").get<double>();
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
  // Cut the log back to the checkpoint's episodes (later lines belong to lost work).
  const auto log = dir / "log.jsonl";
  std::ifstream in(log);
  std::string line, kept;
  for (int i = 0; i < s.episode && std::getline(in, line); ++i) kept += line + "\n";
  in.close();
  write_file_atomic(log, kept);
}

TrainResult DopplerTrainer::train(const std::function<void(const EpisodeStats&)>& on_episode) {
  Impl& s = *impl_;
  if (s.run_dir) {
    json cfg = detail::to_json(s.cfg);
    write_file_atomic(*s.run_dir / "config.json", cfg.dump(2) + "\n");
  }
  while (s.episode < s.cfg.episodes && (s.cfg.time_budget <= 0 || s.seconds < s.cfg.time_budget)) {
    const EpisodeStats st = s.run_episode();
    s.append_log(st);
    const bool ckpt = s.cfg.checkpoint_every > 0 && s.episode % s.cfg.checkpoint_every == 0;
    s.write_run_files(ckpt || s.episode == s.cfg.episodes);
    if (on_episode) on_episode(st);
  }
  TrainResult r;
  r.greedy = s.greedy_rollout();
  r.greedy_makespan = s.cost(r.greedy);
  ++s.cost_calls;
  if (r.greedy_makespan < s.best) {
    s.best = r.greedy_makespan;
    s.best_assignment = r.greedy;
  }
  r.best = s.best_assignment;
  r.best_makespan = s.best;
  r.episodes = s.episode;
  r.cost_calls = s.cost_calls;
  r.seconds = s.seconds;
  s.write_run_files(true);
  return r;
}

Assignment DopplerTrainer::greedy() {
  return impl_->greedy_rollout();
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

struct DopplerPolicy::Impl {
  PolicyConfig config;
  std::unique_ptr<nn::DualAgent> agent;
};

DopplerPolicy::DopplerPolicy() : impl_(std::make_unique<Impl>()) {}
DopplerPolicy::DopplerPolicy(DopplerPolicy&&) noexcept = default;
DopplerPolicy& DopplerPolicy::operator=(DopplerPolicy&&) noexcept = default;
DopplerPolicy::~DopplerPolicy() = default;

DopplerPolicy DopplerPolicy::load(const std::filesystem::path& checkpoint) {
  use_single_threaded_math();
  const detail::Checkpoint c = detail::open_checkpoint(checkpoint);
  DopplerPolicy p;
  try {
    p.impl_->config = detail::policy_config_from_json(c.meta.at("policy"));
  } catch (const std::exception&) {
    throw InputError(checkpoint.string(), 0, "checkpoint meta has no valid policy configuration");
  }
  p.impl_->agent = std::make_unique<nn::DualAgent>(p.impl_->config);
  detail::load_networks(c, *p.impl_->agent, checkpoint);
  return p;
}

Assignment DopplerPolicy::place(const Problem& problem) {
  torch::NoGradGuard no_grad;
  const GraphFeatures f = graph_features(problem.graph(), problem.cost(), problem.analysis());
  const nn::GraphTensors gt = nn::make_graph_tensors(f, impl_->config.max_levels);
  const nn::Prepared prep = impl_->agent->prepare(gt, false, false);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::greedy;
  o.learned_sel = impl_->agent->learns_sel();
  o.learned_plc = impl_->agent->learns_plc();
  o.joint = impl_->agent->joint();
  o.teacher = !o.learned_sel || !o.learned_plc;
  std::mt19937_64 rng(0);
  nn::Episode ep = nn::rollout(problem, impl_->config, prep.nets, o, rng);
  ep.assignment.method = "doppler";
  return ep.assignment;
}

const PolicyConfig& DopplerPolicy::config() const {
  return impl_->config;
}

}  // namespace doppler
