// doppler pretrain: one policy trained over a distribution of problems (docs/pretraining.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"
#include "learned_commands.hpp"

#include "doppler/engine/mpi_world.hpp"
#include "doppler/train/pretrain.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cli {

namespace {

struct PretrainOptions {
  std::string spec, output, resume, export_path;
  std::vector<std::string> held_out;
  int held_out_devices = 4;
  PretrainConfig cfg;
  int hidden = 0, edge_hidden = 0, mp_steps = 0;
  bool json = false;
};

PretrainSpec load_spec(const PretrainOptions& o) {
  PretrainSpec s = o.spec.empty()
                       ? parse_pretrain_spec(default_pretrain_spec_text(),
                                             "(default spec models/pretrain-spec.json)", ".")
                       : load_pretrain_spec(o.spec);
  for (const std::string& f : o.held_out) {
    if (!std::filesystem::is_regular_file(f)) throw InputError(f, 0, "held-out graph not found");
    s.held_out.push_back(held_out_file(f, o.held_out_devices));
  }
  return s;
}

DataParallel data_parallel(const std::unique_ptr<MpiWorld>& world) {
  DataParallel dp;
  if (!world) return dp;
  dp.rank = world->rank();
  dp.ranks = world->size();
  MpiWorld* w = world.get();
  dp.average = [w](std::vector<float>& v) { w->average(v); };
  dp.agree = [w](double x) { return w->agree(x); };
  return dp;
}

void print_summary(Pretrainer& p, const std::string& dir, double seconds, bool as_json) {
  const std::vector<HeldOutResult> held = p.evaluate_held_out();
  if (as_json) {
    ojson j;
    j["run_dir"] = dir;
    j["updates"] = p.updates_done();
    j["finished"] = p.finished();
    j["pool"] = p.pool_names().size();
    j["seconds"] = seconds;
    j["held_out"] = ojson::array();
    for (const auto& h : held)
      j["held_out"].push_back({{"name", h.name},
                               {"greedy", h.greedy},
                               {"critical_path", h.critical_path},
                               {"local_search", h.local_search}});
    print_json(j);
    return;
  }
  std::cout << fmt::format("run {}: {} updates{} on a pool of {} problems, {:.0f} s\n", dir,
                           p.updates_done(), p.finished() ? "" : " (not finished: --resume)",
                           p.pool_names().size(), seconds);
  if (held.empty()) return;
  std::cout << fmt::format("{:<44}{:>12}{:>12}{:>12}{:>9}\n", "held-out (greedy, zero-shot)",
                           "doppler", "crit.path", "local-srch", "vs LS");
  for (const auto& h : held)
    std::cout << fmt::format("{:<44}{:>12.4g}{:>12.4g}{:>12.4g}{:>+8.1f}%\n", h.name, h.greedy,
                             h.critical_path, h.local_search,
                             100 * (h.greedy / h.local_search - 1));
}

void run_pretrain(PretrainOptions& o) {
  if (o.output.empty() == o.resume.empty())
    throw InputError("pretrain: pass exactly one of -o RUN_DIR and --resume RUN_DIR");
  if (o.hidden > 0) o.cfg.policy.hidden = o.hidden;
  if (o.edge_hidden > 0) o.cfg.policy.edge_hidden = o.edge_hidden;
  if (o.mp_steps > 0) o.cfg.policy.steps = o.mp_steps;
  std::unique_ptr<MpiWorld> world;
  if (launched_by_mpi()) world = std::make_unique<MpiWorld>();
  std::unique_ptr<Pretrainer> p;
  const std::string dir = o.resume.empty() ? o.output : o.resume;
  if (!o.resume.empty()) {
    p = Pretrainer::resume(o.resume, o.cfg.updates, data_parallel(world));
  } else {
    p = std::make_unique<Pretrainer>(load_spec(o), o.cfg, data_parallel(world));
    p->set_run_dir(o.output);
  }
  double seconds = 0;
  p->run([&](const PretrainStats& s) { seconds += s.seconds; });
  if (world && world->rank() != 0) return;
  if (!o.export_path.empty()) p->export_policy(o.export_path);
  print_summary(*p, dir, seconds, o.json);
}

}  // namespace

void learned::add_pretrain(CLI::App& app) {
  auto o = std::make_shared<PretrainOptions>();
  o->cfg.updates = -1;  // "not given" (resume keeps the run's)
  auto* cmd = app.add_subcommand("pretrain", learned::kPretrainSummary);
  cmd->add_option("--spec", o->spec,
                  "problem distribution (JSON, docs/pretraining.md); default: the shipped model's "
                  "(models/pretrain-spec.json)");
  cmd->add_option("--held-out", o->held_out,
                  "graph files evaluated every --eval-every updates and never trained on "
                  "(repeatable; graphs identical to them are removed from the pool)");
  cmd->add_option("--held-out-devices", o->held_out_devices, "devices of the --held-out graphs")
      ->check(CLI::Range(1, kMaxDevices))
      ->capture_default_str();
  cmd->add_option("-o,--output", o->output, "new run directory");
  cmd->add_option("--resume", o->resume,
                  "continue the run in this directory from its checkpoint (same spec and "
                  "settings; --updates may extend it)");
  cmd->add_option("--export", o->export_path,
                  "also write the final weights alone (no optimiser state) to this file");
  PretrainConfig& c = o->cfg;
  cmd->add_option("--il-updates", c.il_updates,
                  "Stage I updates (imitation of --teacher; no simulator call)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--updates", c.updates,
                  "policy-gradient updates after Stage I (default 2000; with --resume: the new "
                  "total)");
  cmd->add_option("--batch", c.batch, "problems per update (per rank)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--rollouts", c.rollouts, "rollouts per problem and update (>= 2)")
      ->check(CLI::Range(2, 100000))
      ->capture_default_str();
  cmd->add_option("--lr", c.lr, "Adam learning rate after warm-up (cosine decay)")
      ->capture_default_str();
  cmd->add_option("--lr-end", c.lr_end, "learning rate at the last update")->capture_default_str();
  cmd->add_option("--warmup", c.warmup, "warm-up updates")->capture_default_str();
  cmd->add_option("--temperature", c.temperature, "rollouts sample from softmax(scores / T)")
      ->capture_default_str();
  cmd->add_option("--entropy", c.entropy_weight, "entropy bonus weight")->capture_default_str();
  cmd->add_option("--grad-clip", c.grad_clip, "gradient-norm clip per network (0: none)")
      ->capture_default_str();
  cmd->add_option("--teacher", c.teacher, "Stage I teacher")
      ->check(CLI::IsMember({"critical-path", "etf", "heft"}))
      ->capture_default_str();
  cmd->add_option("--eval-every", c.eval_every,
                  "held-out evaluation every N updates (0: at the end only)")
      ->capture_default_str();
  cmd->add_option("--eval-budget", c.eval_budget,
                  "simulator calls of the held-out local-search reference")
      ->capture_default_str();
  cmd->add_option("--checkpoint-every", c.checkpoint_every, "updates between checkpoints")
      ->check(CLI::Range(1, 1000000))
      ->capture_default_str();
  cmd->add_option("--threads", c.threads, "rollout threads (results do not depend on it)")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--time-budget", c.time_budget,
                  "stop after this many seconds (checkpointed; continue with --resume)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--init", c.init,
                  "start from this policy's weights (checkpoint or run directory, e.g. "
                  "models/doppler-pretrained.pt; its architecture is kept)");
  cmd->add_option("--distill", c.distill,
                  "distillation from search (expert iteration): Stage II becomes --rounds rounds "
                  "of label search on every pool problem (round 0: local-search; later rounds: "
                  "this search, from the label: local-search, or doppler-search guided by the "
                  "current policy), then --round-updates DAgger updates imitating the labels "
                  "(RUN/labels.jsonl; --updates is ignored)")
      ->check(CLI::IsMember({"local-search", "doppler-search"}));
  cmd->add_option("--label-budget", c.label_budget, "simulator calls of each label search")
      ->check(CLI::Range(std::int64_t{1}, std::int64_t{1'000'000'000}))
      ->capture_default_str();
  cmd->add_option("--rounds", c.rounds, "expert-iteration rounds (with --distill)")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--round-updates", c.round_updates, "imitation updates per round")
      ->check(CLI::Range(1, 10000000))
      ->capture_default_str();
  cmd->add_option("--pg-weight", c.pg_weight,
                  "weight of the policy-gradient term beside the imitation loss (0: imitation "
                  "only; > 0 simulates every rollout)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--expert-mix", c.expert_mix,
                  "probability that a distillation rollout step takes the label's action instead "
                  "of the policy's (DAgger's mixture; 0: the policy's own states only)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--distill-nets", c.distill_nets,
                  "the networks that imitate the labels (the other keeps its weights unless "
                  "--pg-weight trains it)")
      ->check(CLI::IsMember({"both", "sel", "plc"}))
      ->capture_default_str();
  cmd->add_option("--eval-pool", c.eval_pool,
                  "pool problems on which each round's policy is evaluated (greedy and best of "
                  "--eval-samples, gaps to the labels)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--eval-samples", c.eval_samples, "K of the rounds' best-of-K evaluations")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--hidden", o->hidden, "node embedding size (default 64)");
  cmd->add_option("--edge-hidden", o->edge_hidden, "edge network width (default 32)");
  cmd->add_option("--mp-steps", o->mp_steps, "message-passing steps (default 4)");
  cmd->add_option("-s,--seed", c.seed, "seed of the initialisation and every random choice")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->callback([o] {
    if (o->cfg.updates < 0 && o->resume.empty()) o->cfg.updates = 2000;
    if (o->cfg.updates < 0) o->cfg.updates = 0;
    run_pretrain(*o);
  });
}

}  // namespace doppler::cli
