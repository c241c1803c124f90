#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "policy/nn/agent.hpp"
#include "policy/nn/rollout.hpp"
#include "policy/nn/sampling.hpp"
#include "train/config_json.hpp"
#include "train/fused_adam.hpp"
#include "train/label_search.hpp"
#include "train/label_store.hpp"
#include "train/optimizer_checkpoint.hpp"
#include "train/rollback.hpp"
#include "train/run_files.hpp"
#include "train/update.hpp"

#include "doppler/graph/fingerprint.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/train/policy_gradient.hpp"
#include "doppler/train/pretrain.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"

namespace doppler {

namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;
constexpr double kIlLr = 1e-3;

// Runs fn(0 .. n-1) on up to `threads` threads (each index once).
void parallel_for(int n, int threads, const std::function<void(int)>& fn) {
  const int t = std::max(1, std::min(threads, n));
  if (t == 1) {
    for (int i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int> next{0};
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex error_mutex;
  for (int k = 0; k < t; ++k)
    pool.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        try {
          fn(i);
        } catch (...) {
          std::lock_guard lock(error_mutex);
          if (!error) error = std::current_exception();
        }
      }
    });
  for (auto& th : pool) th.join();
  if (error) std::rethrow_exception(error);
}

// The RNG of one update on one rank: a function of (seed, update, rank) only, so that a resumed
// run draws exactly what the uninterrupted one drew.
std::mt19937_64 update_rng(std::uint64_t seed, int update, int rank) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(update), static_cast<std::uint32_t>(rank), 0x5eedu};
  return std::mt19937_64(seq);
}

// `k` distinct indices of [0, n) (all of them when k >= n), in draw order.
std::vector<int> choose_distinct(int n, int k, std::mt19937_64& rng) {
  std::vector<int> idx(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) idx[static_cast<std::size_t>(i)] = i;
  const int m = std::min(n, k);
  for (int i = 0; i < m; ++i) {
    const int j = std::uniform_int_distribution<int>(i, n - 1)(rng);
    std::swap(idx[static_cast<std::size_t>(i)], idx[static_cast<std::size_t>(j)]);
  }
  idx.resize(static_cast<std::size_t>(m));
  return idx;
}

// Makespans of `spec` on every problem, on the threads (one placer each: the registry and a
// placer's counters are not shared across threads).
std::vector<double> simulate_placer(const std::vector<PoolProblem>& problems,
                                    const std::string& spec, std::int64_t budget, int threads) {
  std::vector<std::unique_ptr<Placer>> placers;
  for (std::size_t i = 0; i < problems.size(); ++i) placers.push_back(make_placer(spec));
  std::vector<double> out(problems.size());
  parallel_for(static_cast<int>(problems.size()), threads, [&](int i) {
    const auto k = static_cast<std::size_t>(i);
    PlaceOptions o;
    o.budget.evaluations = budget;
    const Problem& p = *problems[k].problem;
    SimWorkspace ws;
    out[k] = p.simulator().makespan(placers[k]->place(p, o).device_of, ws);
  });
  return out;
}

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
  std::vector<PoolProblem> pool, held;
  std::vector<nn::GraphTensors> pool_gt;
  std::vector<double> pool_cp;  // critical-path list scheduling's makespan (the ratio's unit)
  std::vector<nn::GraphTensors> held_gt;  // built with the references, at the first evaluation
  std::vector<double> held_cp, held_ls;
  std::unique_ptr<nn::DualAgent> agent;
  std::unique_ptr<detail::FusedAdam> opt_sel, opt_plc;
  detail::Snapshot good;
  std::optional<std::filesystem::path> run_dir;
  int update = 0;
  std::int64_t calls = 0;
  double seconds = 0, lr_scale = 1;
  int divergences = 0;
  // Distillation: the labels and their prepared form (start times).
  std::unique_ptr<detail::LabelStore> labels;
  std::vector<nn::ExpertLabel> experts;

  void build(PretrainSpec s, PretrainConfig c, DataParallel d, bool resuming = false) {
    use_single_threaded_math();
    c.validate();
    if (c.distilling()) c.updates = c.rounds * c.round_updates;
    std::optional<detail::Checkpoint> init;
    if (!c.init.empty() && !resuming) {
      const auto path = checkpoint_path(c.init);
      init = detail::open_checkpoint(path);
      try {
        c.policy = detail::policy_config_from_json(init->meta.at("policy"));
      } catch (const std::exception&) {
        throw InputError(path.string(), 0, "checkpoint meta has no valid policy configuration");
      }
    }
    spec = std::move(s);
    spec.text = spec_json_text(spec);
    cfg = c;
    dp = std::move(d);
    held = held_out_problems(spec);
    std::vector<std::uint64_t> excluded;
    for (const auto& h : held) excluded.push_back(graph_fingerprint(*h.graph));
    pool = draw_pool(spec, excluded);
    pool_gt.resize(pool.size());
    parallel_for(static_cast<int>(pool.size()), cfg.threads, [&](int i) {
      pool_gt[static_cast<std::size_t>(i)] =
          nn::problem_tensors(*pool[static_cast<std::size_t>(i)].problem, cfg.policy);
    });
    pool_cp = simulate_placer(pool, "critical-path", 0, cfg.threads);
    calls += static_cast<std::int64_t>(pool.size());
    torch::manual_seed(cfg.seed);
    agent = std::make_unique<nn::DualAgent>(cfg.policy);
    if (init) detail::load_networks(*init, *agent, checkpoint_path(cfg.init));
    if (cfg.distilling()) {
      labels = std::make_unique<detail::LabelStore>(static_cast<int>(pool.size()), std::nullopt);
      experts.resize(pool.size());
    }
    opt_sel = std::make_unique<detail::FusedAdam>(agent->sel->parameters(), cfg.lr);
    opt_plc = std::make_unique<detail::FusedAdam>(agent->plc->parameters(), cfg.lr);
    good.take(*agent, *opt_sel, *opt_plc);
  }

  int total_updates() const { return cfg.il_updates + cfg.updates; }
  bool imitation() const { return update < cfg.il_updates; }

  double lr_now() const {
    if (imitation()) return kIlLr * lr_scale;
    return scheduled_lr(LrSchedule::cosine, cfg.lr, cfg.lr_end, cfg.warmup, update - cfg.il_updates,
                        cfg.updates) *
           lr_scale;
  }

  // --- Distillation (expert iteration) -------------------------------------------------------
  bool distill_stage() const { return cfg.distilling() && !imitation(); }
  int round_of(int u) const { return (u - cfg.il_updates) / cfg.round_updates; }
  // True before the first update of a round (labels are due) / after the last one.
  bool round_starts() const {
    return distill_stage() && (update - cfg.il_updates) % cfg.round_updates == 0;
  }
  bool round_ended() const {
    return cfg.distilling() && update > cfg.il_updates &&
           (update - cfg.il_updates) % cfg.round_updates == 0;
  }

  std::uint64_t label_seed(int round, int i) const {
    std::seed_seq seq{static_cast<std::uint32_t>(cfg.seed),
                      static_cast<std::uint32_t>(cfg.seed >> 32), static_cast<std::uint32_t>(round),
                      static_cast<std::uint32_t>(i), 0x1abe1u};
    return std::mt19937_64(seq)();
  }

  // The searches of problems [a, b) of a round: this rank's share on the threads, then (MPI) every
  // rank's shares exchanged, so that every rank holds every result.
  std::vector<detail::LabelSearchResult> search_chunk(int round, detail::LabelSource source, int a,
                                                      int b) {
    std::vector<detail::LabelSearchResult> out(static_cast<std::size_t>(b - a));
    std::vector<int> mine;
    for (int i = a; i < b; ++i)
      if ((i - a) % dp.ranks == dp.rank) mine.push_back(i);
    parallel_for(static_cast<int>(mine.size()), cfg.threads, [&](int k) {
      const int i = mine[static_cast<std::size_t>(k)];
      const auto u = static_cast<std::size_t>(i);
      out[static_cast<std::size_t>(i - a)] =
          detail::search_label(*pool[u].problem, labels->label(i), source, cfg.label_budget,
                               label_seed(round, i), *agent, pool_gt[u]);
    });
    if (dp.ranks > 1 && dp.average) exchange(out, source, a);
    return out;
  }

  // MPI: device ids of every rank's results averaged (zeros elsewhere), so x ranks is exact.
  void exchange(std::vector<detail::LabelSearchResult>& out, detail::LabelSource source, int a) {
    std::vector<float> flat;
    for (std::size_t k = 0; k < out.size(); ++k) {
      const auto n =
          static_cast<std::size_t>(pool[k + static_cast<std::size_t>(a)].graph->num_nodes());
      const bool own = static_cast<int>(k) % dp.ranks == dp.rank;
      for (std::size_t v = 0; v < n; ++v)
        flat.push_back(own ? static_cast<float>(out[k].device_of[v]) : 0.0f);
    }
    dp.average(flat);
    std::size_t at = 0;
    SimWorkspace ws;
    for (std::size_t k = 0; k < out.size(); ++k) {
      const int i = static_cast<int>(k) + a;
      const Problem& p = *pool[static_cast<std::size_t>(i)].problem;
      auto& r = out[k];
      r.device_of.resize(static_cast<std::size_t>(p.graph().num_nodes()));
      for (auto& d : r.device_of) d = static_cast<DeviceId>(std::lround(flat[at++] * dp.ranks));
      r.makespan = p.simulator().makespan(r.device_of, ws);
      r.source =
          labels->label(i).device_of.empty() ? "local-search" : detail::label_source_name(source);
    }
  }

  // Simulator calls so far: rollouts, references and evaluations, and the recorded label searches
  // (every rank counts all of those).
  std::int64_t total_calls() const { return calls + (labels ? labels->calls() : 0); }

  // RUN/round-R.pt: the weights after round R (rank 0), to place with or to compare rounds.
  void export_round() const {
    if (!run_dir || dp.rank != 0) return;
    json m = meta();
    m["kind"] = "policy";
    detail::write_checkpoint(*run_dir / fmt::format("round-{}.pt", round_of(update - 1)), *agent,
                             nullptr, nullptr, m);
  }

  // Rebuilds the expert form (start times) of every label that changed.
  void refresh_experts() {
    std::vector<int> stale;
    for (int i = 0; i < labels->size(); ++i)
      if (!labels->label(i).device_of.empty() &&
          experts[static_cast<std::size_t>(i)].device_of != labels->label(i).device_of)
        stale.push_back(i);
    parallel_for(static_cast<int>(stale.size()), cfg.threads, [&](int k) {
      const auto i = static_cast<std::size_t>(stale[static_cast<std::size_t>(k)]);
      experts[i] =
          nn::make_expert_label(*pool[i].problem, labels->label(static_cast<int>(i)).device_of);
    });
  }

  // Round `round`'s label searches on every pool problem (resuming after the recorded ones).
  json generate_labels(int round) {
    const auto t0 = Clock::now();
    const auto source =
        round == 0 ? detail::LabelSource::local_search : detail::parse_label_source(cfg.distill);
    const int n = static_cast<int>(pool.size());
    const int chunk = std::max(1, cfg.threads) * 4 * dp.ranks;
    Progress progress(fmt::format("labels, round {}", round), n);
    for (int a = labels->recorded(round); a < n; a += chunk) {
      const int b = std::min(n, a + chunk);
      const auto results = search_chunk(round, source, a, b);
      for (int i = a; i < b; ++i) {
        const auto& r = results[static_cast<std::size_t>(i - a)];
        labels->offer(round, i, r.source, r.makespan, r.device_of, cfg.label_budget);
      }
      progress.update(b);
    }
    refresh_experts();
    double gap_cp = 0;
    int found = 0;
    for (int i = 0; i < n; ++i) {
      gap_cp += (labels->label(i).makespan / pool_cp[static_cast<std::size_t>(i)] - 1) / n;
      found += labels->label(i).round == round ? 1 : 0;
    }
    return {{"round", round},
            {"source", detail::label_source_name(source)},
            {"label_gap_critical_path", gap_cp},
            {"improved", found},
            {"label_calls", labels->calls(round)},
            {"label_seconds", std::chrono::duration<double>(Clock::now() - t0).count()}};
  }

  // The imitation (+ policy-gradient) loss of one problem's rollouts, per step.
  torch::Tensor distill_objective(int i, const nn::Prepared& prep,
                                  const std::vector<nn::Sampled>& batch, detail::UpdateStats& us) {
    detail::UpdateSettings s;
    s.imitation = true;
    s.learn_sel = cfg.distill_nets != "plc";
    s.learn_plc = cfg.distill_nets != "sel";
    s.entropy = cfg.entropy_weight;
    s.nodes = pool[static_cast<std::size_t>(i)].problem->graph().num_nodes();
    s.devices = pool[static_cast<std::size_t>(i)].problem->devices();
    double steps = 0;
    for (const auto& b : batch) steps += static_cast<double>(b.episode.steps.size()) / batch.size();
    torch::Tensor loss =
        detail::batch_objective(*agent, prep, batch, {}, s, us) / std::max(1.0, steps);
    if (cfg.pg_weight <= 0) return loss;
    std::vector<double> costs;
    for (const auto& b : batch) costs.push_back(b.cost);
    s.imitation = false;
    s.entropy = 0;
    s.temperature = cfg.temperature;
    detail::UpdateStats pg;
    return loss + cfg.pg_weight * detail::batch_objective(*agent, prep, batch,
                                                          leave_one_out_advantages(costs, true), s,
                                                          pg);
  }

  nn::RolloutOptions rollout_options(bool il) const {
    nn::RolloutOptions o;
    o.epsilon = il ? 1.0 : 0.0;  // Stage I visits the states of uniform actions (as train)
    o.temperature = il ? 1.0 : cfg.temperature;
    o.mode = il ? nn::ActionMode::greedy : nn::ActionMode::sample;
    o.teacher = true;
    o.teacher_kind = nn::parse_teacher(cfg.teacher);
    return o;
  }

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

  // All gradients of both networks, flattened (zeros where a parameter has none).
  std::vector<torch::Tensor> parameters() const {
    auto p = agent->sel->parameters();
    for (auto& t : agent->plc->parameters()) p.push_back(t);
    return p;
  }

  void average_gradients() {
    if (dp.ranks <= 1 || !dp.average) return;
    auto params = parameters();
    std::size_t n = 0;
    for (auto& p : params) n += static_cast<std::size_t>(p.numel());
    std::vector<float> flat(n);
    std::size_t at = 0;
    for (auto& p : params) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      const auto g = p.grad().contiguous();
      std::copy_n(g.data_ptr<float>(), g.numel(), flat.begin() + static_cast<std::ptrdiff_t>(at));
      at += static_cast<std::size_t>(g.numel());
    }
    dp.average(flat);
    at = 0;
    for (auto& p : params) {
      auto g = p.mutable_grad();
      std::copy_n(flat.begin() + static_cast<std::ptrdiff_t>(at), g.numel(), g.data_ptr<float>());
      at += static_cast<std::size_t>(g.numel());
    }
  }

  double weight_checksum() const {
    double s = 0, k = 1;
    for (const auto& p : parameters()) s += (k++) * p.to(torch::kDouble).sum().item<double>();
    return s;
  }

  // One problem's batch: rollouts (already done), advantages, objective.
  torch::Tensor objective(int i, const nn::Prepared& prep, const std::vector<nn::Sampled>& batch,
                          bool il, detail::UpdateStats& us) const {
    std::vector<double> costs;
    for (const auto& b : batch) costs.push_back(b.cost);
    const std::vector<double> adv =
        il ? std::vector<double>(costs.size(), 0.0) : leave_one_out_advantages(costs, true);
    detail::UpdateSettings s;
    s.imitation = il;
    s.entropy = cfg.entropy_weight;
    s.temperature = il ? 1.0 : cfg.temperature;
    s.nodes = pool[static_cast<std::size_t>(i)].problem->graph().num_nodes();
    s.devices = pool[static_cast<std::size_t>(i)].problem->devices();
    return detail::batch_objective(*agent, prep, batch, adv, s, us);
  }

  bool step_networks(torch::Tensor loss, PretrainStats& st) {
    opt_sel->zero_grad();
    opt_plc->zero_grad();
    st.loss = loss.item<double>();
    if (!std::isfinite(st.loss)) return false;
    loss.backward();
    average_gradients();
    for (torch::nn::Module* net : {static_cast<torch::nn::Module*>(agent->sel.get()),
                                   static_cast<torch::nn::Module*>(agent->plc.get())})
      if (cfg.grad_clip > 0 &&
          !std::isfinite(torch::nn::utils::clip_grad_norm_(net->parameters(), cfg.grad_clip)))
        return false;
    opt_sel->set_lr(st.lr);
    opt_plc->set_lr(st.lr);
    opt_sel->step();
    opt_plc->step();
    return detail::all_finite(*agent->sel) && detail::all_finite(*agent->plc);
  }

  PretrainStats run_update() {
    const auto t0 = Clock::now();
    PretrainStats st;
    st.update = update;
    st.imitation = imitation();
    st.lr = lr_now();
    std::mt19937_64 rng = update_rng(cfg.seed, update, dp.rank);
    const std::vector<int> chosen = choose_distinct(static_cast<int>(pool.size()), cfg.batch, rng);
    const int b = static_cast<int>(chosen.size());
    const int k = cfg.rollouts;
    std::vector<std::uint64_t> seeds(static_cast<std::size_t>(b * k));
    for (auto& s : seeds) s = rng();
    // Encoders of every chosen problem (with autograd), one problem after the other, SEL and PLC
    // on two threads. Not one problem per thread: autograd orders the backward pass by per-thread
    // sequence numbers, so problems taken by whichever thread is free would make the gradient
    // sums (and the run) depend on the scheduling.
    std::vector<nn::Prepared> prep(static_cast<std::size_t>(b));
    for (int j = 0; j < b; ++j)
      prep[static_cast<std::size_t>(j)] =
          agent->prepare(pool_gt[static_cast<std::size_t>(chosen[static_cast<std::size_t>(j)])],
                         true, cfg.threads > 1);
    // Rollouts of every problem on the threads; RL rollouts are simulated.
    const bool il = st.imitation;
    const bool distill = distill_stage();
    st.distill = distill;
    const bool simulate = !il && (!distill || cfg.pg_weight > 0);
    const nn::RolloutOptions ro = rollout_options(il);
    std::vector<std::vector<nn::Sampled>> batches(
        static_cast<std::size_t>(b), std::vector<nn::Sampled>(static_cast<std::size_t>(k)));
    parallel_for(b * k, cfg.threads, [&](int job) {
      const int j = job / k;
      const PoolProblem& pp = pool[static_cast<std::size_t>(chosen[static_cast<std::size_t>(j)])];
      std::mt19937_64 r(seeds[static_cast<std::size_t>(job)]);
      nn::Sampled& out = batches[static_cast<std::size_t>(j)][static_cast<std::size_t>(job % k)];
      nn::RolloutOptions o = ro;
      if (distill) {
        o.expert = &experts[static_cast<std::size_t>(chosen[static_cast<std::size_t>(j)])];
        o.expert_mix = cfg.expert_mix;
      }
      out.episode =
          nn::rollout(*pp.problem, cfg.policy, prep[static_cast<std::size_t>(j)].nets, o, r);
      thread_local SimWorkspace ws;  // a simulator's own workspace is not for concurrent calls
      out.cost = simulate ? pp.problem->simulator().makespan(out.episode.assignment.device_of, ws)
                          : out.episode.estimate;
    });
    if (simulate) calls += static_cast<std::int64_t>(b * k);
    // One loss over all problems (each problem its own baseline), one backward, one step.
    torch::Tensor loss = torch::zeros({});
    double ratio = 0, best_ratio = 0;
    for (int j = 0; j < b; ++j) {
      const int i = chosen[static_cast<std::size_t>(j)];
      const auto& batch = batches[static_cast<std::size_t>(j)];
      detail::UpdateStats us;
      const nn::Prepared& pj = prep[static_cast<std::size_t>(j)];
      loss = loss +
             (distill ? distill_objective(i, pj, batch, us) : objective(i, pj, batch, il, us)) / b;
      double mean = 0, best = std::numeric_limits<double>::infinity();
      for (const auto& s : batch) {
        mean += s.cost / k;
        best = std::min(best, s.cost);
      }
      ratio += mean / pool_cp[static_cast<std::size_t>(i)] / b;
      best_ratio += best / pool_cp[static_cast<std::size_t>(i)] / b;
      st.entropy_sel += us.entropy_sel / b;
      st.entropy_plc += us.entropy_plc / b;
      st.problems.push_back(pool[static_cast<std::size_t>(i)].name);
    }
    st.ratio = ratio;
    st.best_ratio = best_ratio;
    if (!step_networks(loss, st)) {
      good.restore(*agent, *opt_sel, *opt_plc);
      lr_scale *= 0.5;
      ++divergences;
      spdlog::warn("update {}: diverging update; rolled back, learning rate scaled by {}", update,
                   lr_scale);
    }
    ++update;
    st.calls = total_calls();
    st.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    seconds += st.seconds;
    return st;
  }

  void reference_held_out() {
    if (held_cp.size() == held.size()) return;
    for (const auto& h : held) held_gt.push_back(nn::problem_tensors(*h.problem, cfg.policy));
    held_cp = simulate_placer(held, "critical-path", 0, cfg.threads);
    held_ls = simulate_placer(held, "local-search", cfg.eval_budget, cfg.threads);
  }

  // The greedy placement and the best of eval_samples rollouts of the current policy.
  std::pair<double, double> greedy_and_best(const Problem& p, const nn::GraphTensors& gt,
                                            bool best_of) {
    SampleOptions so;
    so.samples = 1;
    so.threads = 1;
    const double greedy = nn::sample_placement(p, *agent, gt, so).best_makespan;
    if (!best_of) return {greedy, 0.0};
    so.samples = cfg.eval_samples;
    return {greedy, nn::sample_placement(p, *agent, gt, so).best_makespan};
  }

  std::vector<HeldOutResult> evaluate(bool best_of = false) {
    reference_held_out();
    std::vector<HeldOutResult> out(held.size());
    parallel_for(static_cast<int>(held.size()), cfg.threads, [&](int k) {
      const auto i = static_cast<std::size_t>(k);
      const auto [greedy, best] = greedy_and_best(*held[i].problem, held_gt[i], best_of);
      out[i] = {held[i].name, greedy, held_cp[i], held_ls[i], best};
    });
    return out;
  }

  // After a round: the policy's greedy and best-of-K gaps to the labels on eval_pool problems
  // spread over the pool, and the held-out problems' gaps to local search.
  json evaluate_round() {
    const int n = static_cast<int>(pool.size());
    const int m = std::min(n, cfg.eval_pool);
    std::vector<double> greedy(static_cast<std::size_t>(m)), best(greedy.size());
    parallel_for(m, cfg.threads, [&](int k) {
      const auto i = static_cast<std::size_t>(k * n / m);
      const auto [g, b] = greedy_and_best(*pool[i].problem, pool_gt[i], true);
      const double label = labels->label(static_cast<int>(i)).makespan;
      greedy[static_cast<std::size_t>(k)] = g / label - 1;
      best[static_cast<std::size_t>(k)] = b / label - 1;
    });
    calls += static_cast<std::int64_t>(m) * (1 + cfg.eval_samples);
    const auto mean = [](const std::vector<double>& x) {
      double a = 0;
      for (double v : x) a += v / static_cast<double>(x.size());
      return x.empty() ? 0.0 : a;
    };
    json j = {{"round", round_of(update - 1)},
              {"pool_evaluated", m},
              {"pool_greedy_gap_label", mean(greedy)},
              {"pool_best_gap_label", mean(best)},
              {"samples", cfg.eval_samples}};
    if (!held.empty()) j["held_out"] = held_out_json(evaluate(true));
    return j;
  }

  json stats_json(const PretrainStats& st) const {
    return {{"update", st.update},
            {"stage", st.imitation ? "il" : (st.distill ? "distill" : "rl")},
            {"problems", st.problems},
            {"ratio", st.ratio},
            {"best_ratio", st.best_ratio},
            {"loss", st.loss},
            {"entropy_sel", st.entropy_sel},
            {"entropy_plc", st.entropy_plc},
            {"lr", st.lr},
            {"calls", st.calls},
            {"seconds", st.seconds}};
  }

  json held_out_json(const std::vector<HeldOutResult>& r) const {
    json a = json::array();
    double gap = 0, best_gap = 0;
    for (const auto& h : r) {
      a.push_back({{"name", h.name},
                   {"greedy", h.greedy},
                   {"critical_path", h.critical_path},
                   {"local_search", h.local_search},
                   {"gap_local_search", h.greedy / h.local_search - 1},
                   {"gap_critical_path", h.greedy / h.critical_path - 1}});
      gap += (h.greedy / h.local_search - 1) / static_cast<double>(r.size());
      if (h.best_of > 0) {
        a.back()["best_of"] = h.best_of;
        a.back()["best_gap_local_search"] = h.best_of / h.local_search - 1;
        best_gap += (h.best_of / h.local_search - 1) / static_cast<double>(r.size());
      }
    }
    json out = {{"problems", a}, {"mean_gap_local_search", gap}};
    if (!r.empty() && r.front().best_of > 0) out["mean_best_gap_local_search"] = best_gap;
    return out;
  }

  void checkpoint() {
    good.take(*agent, *opt_sel, *opt_plc);
    if (dp.ranks > 1 && dp.agree && !dp.agree(weight_checksum()))
      throw std::runtime_error(
          "pretrain: the ranks' weights differ (data-parallel replicas diverged)");
    if (!run_dir || dp.rank != 0) return;
    detail::write_checkpoint(*run_dir / "ckpt.pt", *agent, opt_sel.get(), opt_plc.get(), meta());
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
  if (s.cfg.distilling())
    s.labels =
        std::make_unique<detail::LabelStore>(static_cast<int>(s.pool.size()), dir / "labels.jsonl");
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
  detail::load_networks(c, *s.agent, path);
  detail::load_optimizers(c, *s.opt_sel, *s.opt_plc, path);
  s.update = c.meta.at("update").get<int>();
  s.calls = c.meta.at("calls").get<std::int64_t>();
  s.seconds = c.meta.at("seconds").get<double>();
  s.lr_scale = c.meta.value("lr_scale", 1.0);
  s.divergences = c.meta.value("divergences", 0);
  s.good.take(*s.agent, *s.opt_sel, *s.opt_plc);
  s.run_dir = dir;
  if (s.dp.rank == 0) detail::truncate_log(dir / "log.jsonl", s.update);
  if (s.cfg.distilling()) {  // the labels found so far (rank 0 keeps appending to the file)
    s.labels = std::make_unique<detail::LabelStore>(detail::LabelStore::load(
        static_cast<int>(s.pool.size()), dir / "labels.jsonl", s.dp.rank == 0));
    s.refresh_experts();
  }
  return p;
}

void Pretrainer::run(const std::function<void(const PretrainStats&)>& on_update) {
  Impl& s = *impl_;
  const auto start = Clock::now();
  Progress progress("pretrain", s.total_updates());
  while (s.update < s.total_updates()) {
    json round_labels;
    if (s.round_starts()) {  // labels of the round, after a checkpoint of the weights they use
      s.checkpoint();
      round_labels = s.generate_labels(s.round_of(s.update));
    }
    const PretrainStats st = s.run_update();
    json line = s.stats_json(st);
    if (!round_labels.is_null()) line["labels"] = round_labels;
    if (s.round_ended()) {
      line["round_eval"] = s.evaluate_round();
      s.export_round();
    }
    const bool last = s.update == s.total_updates();
    if (s.dp.rank == 0 && !s.held.empty() &&
        ((s.cfg.eval_every > 0 && s.update % s.cfg.eval_every == 0) || last))
      line["held_out"] = s.held_out_json(s.evaluate());
    if (s.dp.ranks > 1) line["ranks"] = s.dp.ranks;
    if (s.run_dir && s.dp.rank == 0) detail::append_log_line(*s.run_dir / "log.jsonl", line);
    if (on_update) on_update(st);
    progress.update(s.update, fmt::format("ratio {:.3f}", st.ratio));
    double over =
        s.cfg.time_budget > 0 &&
                std::chrono::duration<double>(Clock::now() - start).count() > s.cfg.time_budget
            ? 1.0
            : 0.0;
    if (s.dp.ranks > 1 && s.dp.average) {  // every rank stops at the same update
      std::vector<float> v = {static_cast<float>(over)};
      s.dp.average(v);
      over = v[0];
    }
    if (last || over > 0 || s.update % s.cfg.checkpoint_every == 0) s.checkpoint();
    if (over > 0) break;
  }
}

std::vector<HeldOutResult> Pretrainer::evaluate_held_out() {
  return impl_->evaluate();
}

void Pretrainer::export_policy(const std::filesystem::path& path) const {
  json m = impl_->meta();
  m["kind"] = "policy";
  detail::write_checkpoint(path, *impl_->agent, nullptr, nullptr, m);
}

std::vector<std::string> Pretrainer::pool_names() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->pool) out.push_back(p.name);
  return out;
}

std::vector<std::string> Pretrainer::held_out_names() const {
  std::vector<std::string> out;
  for (const auto& p : impl_->held) out.push_back(p.name);
  return out;
}

int Pretrainer::updates_done() const {
  return impl_->update;
}

bool Pretrainer::finished() const {
  return impl_->update >= impl_->total_updates();
}

}  // namespace doppler
