// doppler train GRAPH: Stage I (imitation) or Stage II (simulator RL) training of the Doppler
// policies.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "engine_options.hpp"
#include "learned_commands.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/mpi_backend.hpp"
#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

struct TrainCmdOptions {
  std::string graph, hardware, output, resume, init, stage = "sim", returns = "episode", action,
                                                     variant = "dual", engine = "cpu",
                                                     preset = "standard", sel = "rl";
  int devices = 4, repeat = 3;
  TrainConfig cfg;
  EngineCliOptions engine_flags;
  bool json = false, sequential = false;
  std::string method = "doppler";  // doppler, or a learned baseline: placeto, gdp
  std::int64_t calls = 0;          // the baselines' budget of simulator calls
};

// Measured makespans for Stage III: a local Engine, or an MpiEngine driven by rank 0.
class MeasuredCost {
public:
  MeasuredCost(const Graph& g, const TrainCmdOptions& o) : repeat_(o.repeat) {
    const EngineOptions eo = engine_options(o.engine_flags, o.devices,
                                            o.engine == "cuda" ? Backend::cuda : Backend::cpu);
    if (o.engine == "mpi") {
      mpi_ = std::make_unique<MpiEngine>(g, eo);
      for (const auto& w : mpi_->warnings()) spdlog::warn("{}", w);
    } else {
      local_ = std::make_unique<Engine>(g, eo);
      for (const auto& w : local_->warnings()) spdlog::warn("{}", w);
    }
  }
  /// True on MPI ranks other than 0: they only serve measurements.
  bool worker() const { return mpi_ && mpi_->rank() != 0; }
  /// Median measured makespan of `a` (seconds) over `repeat` runs (default --repeat); the
  /// first call warms the engine up.
  double operator()(const Assignment& a, int repeat = 0) {
    const int warmup = warm_ ? 0 : 1;
    warm_ = true;
    const int r = repeat > 0 ? repeat : repeat_;
    if (local_) return local_->measure(a, DispatchRule::fifo, r, warmup).median;
    mpi_->share(a);
    return mpi_->measure(a, DispatchRule::fifo, r, warmup).median;
  }
  /// A fresh measurement for reporting: the median of 2 x --repeat runs.
  double remeasure(const Assignment& a) { return (*this)(a, 2 * repeat_); }
  /// Rank > 0: run what rank 0 shares until it says stop.
  void serve() {
    bool warm = false;
    while (const auto a = mpi_->share(std::nullopt)) {
      mpi_->measure(*a, DispatchRule::fifo, repeat_, warm ? 0 : 1);
      warm = true;
    }
  }
  /// Rank 0: tells the workers to stop.
  void stop() {
    if (mpi_) mpi_->share(std::nullopt);
  }

private:
  int repeat_;
  bool warm_ = false;
  std::unique_ptr<Engine> local_;
  std::unique_ptr<MpiEngine> mpi_;
};

// doppler train --method placeto|gdp: a learned baseline (docs/baselines.md), no imitation stage.
void run_train_baseline(const Graph& g, const Problem& problem, const TrainCmdOptions& o) {
  if (!o.resume.empty() || !o.init.empty() || o.output.empty())
    throw InputError("train --method " + o.method + ": pass -o RUN_DIR (no --resume, no --init)");
  BaselineConfig c;
  c.seed = o.cfg.seed;
  c.episodes = std::max(0, o.cfg.episodes);
  c.calls = o.calls > 0 ? o.calls : (c.episodes > 0 ? 0 : 1302);
  if (o.cfg.lr > 0) c.lr = o.cfg.lr;
  if (o.cfg.entropy_weight >= 0) c.entropy_weight = o.cfg.entropy_weight;
  c.grad_clip = o.cfg.grad_clip;
  c.run_dir = o.output;
  Progress progress("train " + o.method, c.calls > 0 ? static_cast<int>(c.calls) : c.episodes);
  const BaselineResult r =
      train_baseline(parse_baseline_method(o.method), problem, c, [&](const BaselineEpisode& s) {
        progress.update(
            c.calls > 0 ? static_cast<int>(s.calls) : s.episode + 1,
            fmt::format("makespan {}  best {}", format_sig(s.makespan), format_sig(s.best)));
      });
  progress.finish();
  // Per-episode time: a truncated last episode (placeto, budget spent) counts pro rata.
  const double per_episode =
      r.decisions > 0 ? r.seconds * r.decisions_per_episode / static_cast<double>(r.decisions)
                      : 0.0;
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["devices"] = o.devices;
    j["model"] = problem.platform().name();
    j["method"] = o.method;
    j["episodes"] = r.episodes;
    j["decisions_per_episode"] = r.decisions_per_episode;
    j["best_makespan"] = r.best_makespan;
    j["greedy_makespan"] = r.greedy_makespan;
    j["lower_bound"] = problem.lower_bound();
    j["cost_calls"] = r.cost_calls;
    j["seconds"] = r.seconds;
    j["seconds_per_episode"] = per_episode;
    j["greedy_seconds"] = r.greedy_seconds;
    j["run_dir"] = o.output;
    print_json(j);
    return;
  }
  std::cout << fmt::format("{:<22}{} on {} devices ({}), method {} (no imitation stage)\n", "graph",
                           g.meta().name, o.devices, problem.platform().name(), o.method);
  std::cout << fmt::format("{:<22}{} ({:.1f} ms per episode, {} simulator calls)\n", "episodes",
                           r.episodes, 1e3 * per_episode, r.cost_calls);
  std::cout << fmt::format("{:<22}{}\n", "greedy makespan", format_sig(r.greedy_makespan));
  std::cout << fmt::format("{:<22}{}\n", "best makespan", format_sig(r.best_makespan));
  std::cout << fmt::format("{:<22}{}/ckpt.pt, log.jsonl, best.json, greedy.json\n", "written",
                           o.output);
}

void run_train(TrainCmdOptions o) {
  const Graph g = load_graph_logged(o.graph);
  const Problem problem(g, platform_for(g, o.hardware, o.devices));
  if (o.method != "doppler") return run_train_baseline(g, problem, o);
  o.cfg.stage = parse_train_stage(o.stage);
  o.cfg.preset = parse_train_preset(o.preset);
  o.cfg.sel = o.sel == "frozen" ? SelMode::frozen : SelMode::rl;
  o.cfg.returns = o.returns == "discounted" ? ReturnMode::discounted : ReturnMode::episode;
  o.cfg.action = o.action;
  o.cfg.parallel = !o.sequential;
  o.cfg.policy.variant = parse_policy_variant(o.variant);
  if (o.output.empty() && o.resume.empty())
    throw InputError("train: pass -o RUN_DIR (or --resume RUN_DIR)");
  const bool real = o.cfg.stage == TrainStage::real;
  std::unique_ptr<MeasuredCost> measured;
  if (real) {
    measured = std::make_unique<MeasuredCost>(g, o);
    if (measured->worker()) {
      measured->serve();
      return;
    }
  }
  DopplerTrainer trainer(problem, o.cfg);
  if (!o.init.empty()) trainer.load_weights(o.init);
  if (!o.resume.empty()) {
    trainer.resume(o.resume);
  } else {
    trainer.set_run_dir(o.output);
  }
  if (real) trainer.set_cost([&](const Assignment& a) { return (*measured)(a); });
  const TrainConfig& cfg = trainer.config();
  Progress progress(fmt::format("train {}", train_stage_name(cfg.stage)), cfg.episodes);
  std::vector<std::pair<double, double>> matches;  // greedy teacher match per episode
  TrainResult r = trainer.train([&](const EpisodeStats& s) {
    matches.push_back({s.match_sel, s.match_plc});
    progress.update(s.episode + 1, fmt::format("makespan {}  best {}  match {:.0f}%/{:.0f}%",
                                               format_sig(s.makespan), format_sig(s.best),
                                               100 * s.match_sel, 100 * s.match_plc));
  });
  progress.finish();
  const std::string dir = o.resume.empty() ? o.output : o.resume;
  if (real) {
    // Measurements are noisy: measure the best and the greedy assignments again before
    // reporting (the median of 2 x --repeat fresh runs each).
    r.best_makespan = measured->remeasure(r.best);
    r.greedy_makespan = measured->remeasure(r.greedy);
    if (r.greedy_makespan < r.best_makespan) {
      r.best = r.greedy;
      r.best_makespan = r.greedy_makespan;
    }
    measured->stop();
    write_file_atomic(std::filesystem::path(dir) / "best.json", format_assignment_json(r.best));
  }
  write_file_atomic(std::filesystem::path(dir) / "greedy.json", format_assignment_json(r.greedy));
  if (cfg.stage == TrainStage::imitation) {  // Stage I scores nothing: simulate for the report
    r.greedy_makespan = problem.simulator().makespan(r.greedy);
    r.best = r.greedy;
    r.best_makespan = r.greedy_makespan;
    write_file_atomic(std::filesystem::path(dir) / "best.json", format_assignment_json(r.best));
  }
  const double lb = problem.lower_bound();
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["devices"] = o.devices;
    j["model"] = real ? "engine:" + o.engine : problem.platform().name();
    j["stage"] = train_stage_name(cfg.stage);
    j["variant"] = policy_variant_name(cfg.policy.variant);
    j["episodes"] = r.episodes;
    j["best_makespan"] = r.best_makespan;
    j["greedy_makespan"] = r.greedy_makespan;
    if (!real) j["lower_bound"] = lb;
    j["cost_calls"] = r.cost_calls;
    j["seconds"] = r.seconds;
    j["seconds_per_episode"] = r.episodes ? r.seconds / r.episodes : 0.0;
    if (!matches.empty()) {  // teacher agreement of the greedy policy over the last 10 episodes
      const std::size_t k = std::min<std::size_t>(10, matches.size());
      double ms = 0, mp = 0;
      for (std::size_t i = matches.size() - k; i < matches.size(); ++i) {
        ms += matches[i].first / static_cast<double>(k);
        mp += matches[i].second / static_cast<double>(k);
      }
      j["teacher_match_sel_last10"] = ms;
      j["teacher_match_plc_last10"] = mp;
    }
    j["run_dir"] = dir;
    print_json(j);
    return;
  }
  const auto t = [&](double x) {
    return real || problem.platform().unit() == CostUnit::seconds
               ? format_time(x, CostUnit::seconds)
               : format_sig(x);
  };
  std::cout << fmt::format(
      "{:<22}{} on {} devices ({}), stage {}, variant {}\n", "graph", g.meta().name, o.devices,
      real ? "measured on the " + o.engine + " engine" : problem.platform().name(),
      train_stage_name(cfg.stage), policy_variant_name(cfg.policy.variant));
  std::cout << fmt::format("{:<22}{} ({:.1f} ms per rollout, {} cost calls)\n", "episodes",
                           r.episodes, r.episodes ? 1e3 * r.seconds / r.episodes : 0.0,
                           r.cost_calls);
  std::cout << fmt::format("{:<22}{}\n", "greedy makespan", t(r.greedy_makespan));
  if (real)
    std::cout << fmt::format("{:<22}{}   (re-measured)\n", "best makespan", t(r.best_makespan));
  else
    std::cout << fmt::format("{:<22}{}   (gap to lower bound {:.1f}%)\n", "best makespan",
                             t(r.best_makespan), lb > 0 ? 100 * (r.best_makespan / lb - 1) : 0.0);
  std::cout << fmt::format("{:<22}{}/ckpt.pt, log.jsonl, best.json, greedy.json\n", "written", dir);
}

}  // namespace

void learned::add_train(CLI::App& app) {
  auto o = std::make_shared<TrainCmdOptions>();
  auto* cmd = app.add_subcommand("train", learned::kTrainSummary);
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
  add_hardware_option(*cmd, o->hardware);
  cmd->add_option("--method", o->method,
                  "doppler (SEL + PLC), or a learned baseline trained by REINFORCE without "
                  "imitation: placeto, gdp (docs/baselines.md)")
      ->check(CLI::IsMember({"doppler", "placeto", "gdp"}))
      ->capture_default_str();
  cmd->add_option("--calls", o->calls,
                  "placeto/gdp: simulator calls to spend (default 1302, Doppler-SIM's budget; "
                  "0 with --episodes: no limit)")
      ->check(non_negative());
  cmd->add_option(
         "--stage", o->stage,
         "il (imitation), sim (REINFORCE on the simulator) or real (REINFORCE on the engine)")
      ->check(CLI::IsMember({"il", "sim", "real"}))
      ->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "Stage III engine: cpu (threads), mpi (start the command with mpirun -np R) "
                  "or cuda (GPU partitions or GPUs: --gpu-partitions, --gpus)")
      ->check(CLI::IsMember({"cpu", "mpi", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat,
                  "Stage III: measured runs per episode (the reward is their median)")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--time-budget", o->cfg.time_budget,
                  "stop training after this many seconds (0: none)")
      ->check(non_negative());
  add_engine_options(*cmd, o->engine_flags);
  cmd->add_option("-o,--output", o->output,
                  "run directory: ckpt.pt, log.jsonl, best.json, greedy.json, config.json");
  cmd->add_option("--resume", o->resume,
                  "continue the run in this directory from its last checkpoint");
  cmd->add_option("--init", o->init,
                  "start from the weights of this checkpoint or run directory (e.g. Stage I's)");
  cmd->add_option("--preset", o->preset,
                  "defaults of the unset hyper-parameters: standard (K=16 rollouts per update, "
                  "leave-one-out baseline, sampling, self-imitation; docs/training.md) or paper "
                  "(one rollout per update, running-mean baseline, epsilon 0.2, linear lr decay)")
      ->check(CLI::IsMember({"standard", "paper"}))
      ->capture_default_str();
  cmd->add_option("--episodes", o->cfg.episodes,
                  "rollouts in all (default: il 300, sim 2000, real 100); each is one simulator "
                  "call in Stage II, none in Stage I");
  cmd->add_option("--rollouts", o->cfg.rollouts,
                  "rollouts per update K (default: il 1, standard 16, paper 1)");
  cmd->add_option("--baseline", o->cfg.baseline,
                  "loo (leave-one-out over the K rollouts, normalised advantages) or mean "
                  "(running mean, relative reward; the paper's)")
      ->check(CLI::IsMember({"loo", "mean"}));
  cmd->add_option("--temperature", o->cfg.temperature,
                  "RL rollouts sample from softmax(scores / T) (default: standard 2, paper 1)");
  cmd->add_option("--ppo-epochs", o->cfg.ppo_epochs,
                  "passes over each batch with the PPO clipped objective (1: plain policy "
                  "gradient)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--ppo-clip", o->cfg.ppo_clip, "PPO ratio clip")->capture_default_str();
  cmd->add_option("--self-imitation", o->cfg.self_imitation,
                  "weight of the best assignments' log-likelihood (expert iteration; default: "
                  "standard 0.1, paper 0)");
  cmd->add_option("--elite", o->cfg.elite, "best assignments kept as self-imitation targets")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->add_option("--teacher", o->cfg.teacher, "Stage I teacher")
      ->check(CLI::IsMember({"critical-path", "etf", "heft"}))
      ->capture_default_str();
  cmd->add_option("--sel", o->sel,
                  "SEL in the RL stages: rl (sampled and trained) or frozen (Stage I weights, "
                  "most probable op)")
      ->check(CLI::IsMember({"rl", "frozen"}))
      ->capture_default_str();
  cmd->add_option("--lr", o->cfg.lr,
                  "Adam learning rate after warm-up (default: il 1e-3, standard 3e-4, paper 1e-4)");
  cmd->add_option("--lr-schedule", o->cfg.lr_schedule,
                  "constant, cosine or linear (to --lr-end; default: standard constant, paper "
                  "linear)")
      ->check(CLI::IsMember({"constant", "cosine", "linear"}));
  cmd->add_option("--warmup", o->cfg.warmup,
                  "warm-up updates, linear from lr/warmup (default: standard 5, paper 0)");
  cmd->add_option("--lr-end", o->cfg.lr_end,
                  "learning rate at the last update for cosine/linear (default 1e-6)");
  cmd->add_option("--epsilon", o->cfg.epsilon,
                  "uniform-exploration rate at the start, decayed linearly to --epsilon-end; the "
                  "gradient is corrected by the behaviour probability (default: il 1.0, standard "
                  "0, paper 0.2)");
  cmd->add_option("--epsilon-end", o->cfg.epsilon_end, "exploration rate at the last update")
      ->capture_default_str();
  cmd->add_option("--entropy", o->cfg.entropy_weight,
                  "entropy weight (default: il 1e-3, standard 1e-3, paper 1e-2)");
  cmd->add_flag("--exact-gradient", o->cfg.exact_gradient,
                "differentiate PLC's loss through the device sums into the encoder (slower; "
                "default: the sums are an observed state)");
  cmd->add_option("--grad-norm-every", o->cfg.grad_norm_every,
                  "log the gradient norms of the loss terms every N updates (0: never)")
      ->capture_default_str();
  cmd->add_option("--grad-clip", o->cfg.grad_clip, "gradient-norm clip per network (0: none)")
      ->capture_default_str();
  cmd->add_option("--returns", o->returns,
                  "episode (every step gets the reward) or discounted (gamma^(T-1-t))")
      ->check(CLI::IsMember({"episode", "discounted"}))
      ->capture_default_str();
  cmd->add_option("--gamma", o->cfg.gamma, "discount of --returns discounted")
      ->capture_default_str();
  cmd->add_option("--action", o->action,
                  "sample (from the policy) or greedy (argmax), each with epsilon-uniform "
                  "exploration (default: il greedy, sim sample)")
      ->check(CLI::IsMember({"sample", "greedy"}));
  cmd->add_option("--variant", o->variant,
                  "dual (SEL + PLC), sel (learned SEL + critical-path PLC), plc (critical-path SEL "
                  "+ learned PLC)")
      ->check(CLI::IsMember({"dual", "sel", "plc", "joint"}))
      ->capture_default_str();
  cmd->add_option("--hidden", o->cfg.policy.hidden, "node embedding size")->capture_default_str();
  cmd->add_option("--mp-steps", o->cfg.policy.steps, "message-passing steps")
      ->capture_default_str();
  cmd->add_option("--edge-hidden", o->cfg.policy.edge_hidden,
                  "hidden size of the edge network (its output is hidden x hidden)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option_function<std::string>(
         "--features",
         [o](const std::string& m) { o->cfg.policy.features = parse_feature_mode(m); },
         "input normalisation: zscore (the paper's, per graph) or scaled (scale-aware, with "
         "global features; what doppler pretrain uses); --init takes the checkpoint's")
      ->check(CLI::IsMember({"zscore", "scaled"}))
      ->default_str("zscore");
  cmd->add_option("-s,--seed", o->cfg.seed, "seed of the initialisation and every random choice")
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", o->cfg.checkpoint_every, "updates between checkpoints")
      ->capture_default_str();
  cmd->add_flag("--sequential", o->sequential,
                "run SEL and PLC on one thread (default: two threads)");
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] { run_train(*o); });
}

}  // namespace doppler::cli
