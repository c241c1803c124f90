// doppler train GRAPH: Stage I (imitation) or Stage II (simulator RL) training of the Doppler
// policies.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

struct TrainCmdOptions {
  std::string graph, hardware, output, resume, init, stage = "sim", returns = "episode", action,
                                                     variant = "dual";
  int devices = 4;
  TrainConfig cfg;
  bool json = false, sequential = false;
};

void run_train(TrainCmdOptions o) {
  const Graph g = load_graph_logged(o.graph);
  const Problem problem(g, platform_for(g, o.hardware, o.devices));
  o.cfg.stage = parse_train_stage(o.stage);
  if (o.cfg.stage == TrainStage::real)
    throw InputError("--stage real trains on the engine: it needs --engine (see docs/training.md)");
  o.cfg.returns = o.returns == "discounted" ? ReturnMode::discounted : ReturnMode::episode;
  o.cfg.action = o.action;
  o.cfg.parallel = !o.sequential;
  o.cfg.policy.variant = parse_policy_variant(o.variant);
  if (o.output.empty() && o.resume.empty())
    throw InputError("train: pass -o RUN_DIR (or --resume RUN_DIR)");
  DopplerTrainer trainer(problem, o.cfg);
  if (!o.init.empty()) trainer.load_weights(o.init);
  if (!o.resume.empty()) {
    trainer.resume(o.resume);
  } else {
    trainer.set_run_dir(o.output);
  }
  const TrainConfig& cfg = trainer.config();
  Progress progress(fmt::format("train {}", train_stage_name(cfg.stage)), cfg.episodes);
  const TrainResult r = trainer.train([&](const EpisodeStats& s) {
    progress.update(s.episode + 1, fmt::format("makespan {}  best {}  match {:.0f}%/{:.0f}%",
                                               format_sig(s.makespan), format_sig(s.best),
                                               100 * s.match_sel, 100 * s.match_plc));
  });
  progress.finish();
  const std::string dir = o.resume.empty() ? o.output : o.resume;
  write_file_atomic(std::filesystem::path(dir) / "greedy.json", format_assignment_json(r.greedy));
  const double lb = problem.lower_bound();
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["devices"] = o.devices;
    j["model"] = problem.platform().name();
    j["stage"] = train_stage_name(cfg.stage);
    j["variant"] = policy_variant_name(cfg.policy.variant);
    j["episodes"] = r.episodes;
    j["best_makespan"] = r.best_makespan;
    j["greedy_makespan"] = r.greedy_makespan;
    j["lower_bound"] = lb;
    j["cost_calls"] = r.cost_calls;
    j["seconds"] = r.seconds;
    j["seconds_per_episode"] = r.episodes ? r.seconds / r.episodes : 0.0;
    j["run_dir"] = dir;
    print_json(j);
    return;
  }
  const auto t = [&](double x) {
    return problem.platform().unit() == CostUnit::seconds ? format_time(x, CostUnit::seconds)
                                                          : format_sig(x);
  };
  std::cout << fmt::format("{:<22}{} on {} devices ({}), stage {}, variant {}\n", "graph",
                           g.meta().name, o.devices, problem.platform().name(),
                           train_stage_name(cfg.stage), policy_variant_name(cfg.policy.variant));
  std::cout << fmt::format("{:<22}{} ({:.1f} ms per episode, {} cost calls)\n", "episodes",
                           r.episodes, r.episodes ? 1e3 * r.seconds / r.episodes : 0.0,
                           r.cost_calls);
  std::cout << fmt::format("{:<22}{}\n", "greedy makespan", t(r.greedy_makespan));
  std::cout << fmt::format("{:<22}{}   (gap to lower bound {:.1f}%)\n", "best makespan",
                           t(r.best_makespan), lb > 0 ? 100 * (r.best_makespan / lb - 1) : 0.0);
  std::cout << fmt::format("{:<22}{}/ckpt.pt, log.jsonl, best.json, greedy.json\n", "written", dir);
}

}  // namespace

void add_train(CLI::App& app) {
  auto o = std::make_shared<TrainCmdOptions>();
  auto* cmd = app.add_subcommand("train",
                                 "Train the Doppler policies: Stage I imitation of the "
                                 "critical-path placer (--stage il) or Stage II "
                                 "REINFORCE on the simulator (--stage sim)");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  add_devices_option(*cmd, o->devices, false)->capture_default_str();
  add_hardware_option(*cmd, o->hardware);
  cmd->add_option("--stage", o->stage, "il (imitation) or sim (simulator RL)")
      ->check(CLI::IsMember({"il", "sim", "real"}))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output,
                  "run directory: ckpt.pt, log.jsonl, best.json, greedy.json, config.json");
  cmd->add_option("--resume", o->resume,
                  "continue the run in this directory from its last checkpoint");
  cmd->add_option("--init", o->init,
                  "start from the weights of this checkpoint (e.g. Stage I's ckpt.pt)");
  cmd->add_option("--episodes", o->cfg.episodes, "episodes (default: il 300, sim 2000)");
  cmd->add_option("--lr", o->cfg.lr,
                  "Adam learning rate at the start (default: il 1e-3, sim 1e-4)");
  cmd->add_option("--lr-end", o->cfg.lr_end,
                  "learning rate at the last episode, linear decay (default: il = lr, sim 1e-6)");
  cmd->add_option("--epsilon", o->cfg.epsilon,
                  "exploration rate at the start, decayed linearly to --epsilon-end (default: il "
                  "1.0, sim 0.2)");
  cmd->add_option("--epsilon-end", o->cfg.epsilon_end, "exploration rate at the last episode")
      ->capture_default_str();
  cmd->add_option("--entropy", o->cfg.entropy_weight,
                  "entropy weight (default: il 1e-3, sim 1e-2)");
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
  cmd->add_option("-s,--seed", o->cfg.seed, "seed of the initialisation and every random choice")
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", o->cfg.checkpoint_every, "episodes between checkpoints")
      ->capture_default_str();
  cmd->add_flag("--sequential", o->sequential,
                "run SEL and PLC on one thread (default: two threads)");
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] { run_train(*o); });
}

}  // namespace doppler::cli
