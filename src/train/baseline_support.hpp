#pragma once
// Internal: what the Placeto and GDP trainers share: the decided ops (input ops follow their
// first consumer), the simulator-call budget, the configuration as JSON, checkpoints (a
// torch::serialize archive holding the network and a JSON meta naming the method) and the run
// directory files.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "policy/nn/checkpoint.hpp"

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/policy_gradient.hpp"
#include "doppler/train/trainer.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::detail {

/// Seconds elapsed since `t0` (steady clock).
inline double since(std::chrono::steady_clock::time_point t0) {
  return Stopwatch::seconds_since(t0);
}

/// The ops a baseline decides, in topological order, and the input ops that follow each one.
struct DecisionPlan {
  std::vector<NodeId> nodes;  ///< decided ops, topological order
  /// followers[v]: input ops (kind input, with consumers) whose first consumer in topological
  /// order is v; they are placed with v and never decided (PolicyConfig::defer_inputs).
  std::vector<std::vector<NodeId>> followers;
  std::vector<NodeId> order;  ///< the topological order (the assignments' priority order)
};

/// The decision plan of `g`.
inline DecisionPlan make_decision_plan(const Graph& g) {
  DecisionPlan p;
  p.order = g.topo_order();
  p.followers.resize(static_cast<std::size_t>(g.num_nodes()));
  const auto& rank = g.topo_rank();
  for (NodeId v : p.order) {
    const auto succ = g.successors(v);
    if (g.node(v).kind == OpKind::input && !succ.empty()) {
      NodeId first = succ[0];
      for (NodeId w : succ)
        if (rank[static_cast<std::size_t>(w)] < rank[static_cast<std::size_t>(first)]) first = w;
      p.followers[static_cast<std::size_t>(first)].push_back(v);
    } else {
      p.nodes.push_back(v);
    }
  }
  return p;
}

/// Puts decided op v (and its followers) on device d.
inline void set_device(const DecisionPlan& p, std::vector<DeviceId>& dev, NodeId v, DeviceId d) {
  dev[static_cast<std::size_t>(v)] = d;
  for (NodeId f : p.followers[static_cast<std::size_t>(v)]) dev[static_cast<std::size_t>(f)] = d;
}

/// Throws InputError unless the configuration can train on `problem`.
inline void check_baseline_config(const BaselineConfig& c, const Problem& problem,
                                  const std::string& method, std::int64_t min_calls) {
  if (c.calls < 0 || c.episodes < 0)
    throw InputError(method + ": calls and episodes must be non-negative");
  if (c.calls == 0 && c.episodes == 0 && !(c.seconds > 0))
    throw InputError(method + ": give a budget (calls > 0, episodes > 0 or seconds > 0)");
  if (c.calls > 0 && c.calls < min_calls)
    throw InputError(method + ": a budget of " + std::to_string(c.calls) +
                     " simulator calls is too small (at least " + std::to_string(min_calls) + ")");
  if (c.max_devices < 1 || c.max_devices > kMaxDevices)
    throw InputError(method + ": max_devices must be in 1.." + std::to_string(kMaxDevices));
  if (problem.devices() > c.max_devices)
    throw InputError(
        method + ": the network places on at most max_devices = " + std::to_string(c.max_devices) +
        " devices, " + std::to_string(problem.devices()) + " requested (raise max_devices)");
  if (c.lr < 0 || c.entropy_weight < 0 || c.grad_clip < 0 || c.gamma < 0 || c.gamma > 1 ||
      c.heads < 1 || c.layers < 1 || c.segment < 1 || c.hidden < 0 || c.steps < 0 || c.batch < 0 ||
      c.ppo_epochs < 0 || c.clip <= 0 || c.clip >= 1)
    throw InputError(method + ": invalid hyper-parameter");
}

/// The architecture and budget as JSON (checkpoint meta and config.json).
inline nlohmann::json baseline_config_json(const BaselineConfig& c) {
  return {{"calls", c.calls},
          {"episodes", c.episodes},
          {"seed", c.seed},
          {"lr", c.lr},
          {"lr_end", c.lr_end},
          {"lr_schedule", lr_schedule_name(c.lr_schedule)},
          {"entropy_weight", c.entropy_weight},
          {"grad_clip", c.grad_clip},
          {"batch", c.batch},
          {"ppo_epochs", c.ppo_epochs},
          {"clip", c.clip},
          {"hidden", c.hidden},
          {"steps", c.steps},
          {"max_devices", c.max_devices},
          {"gamma", c.gamma},
          {"mean_pool", c.mean_pool},
          {"heads", c.heads},
          {"layers", c.layers},
          {"segment", c.segment}};
}

/// The architecture fields of a checkpoint's configuration (the rest keeps its defaults).
inline BaselineConfig baseline_config_from_json(const nlohmann::json& j) {
  BaselineConfig c;
  c.hidden = j.at("hidden").get<int>();
  c.steps = j.at("steps").get<int>();
  c.max_devices = j.at("max_devices").get<int>();
  c.mean_pool = j.at("mean_pool").get<bool>();
  c.heads = j.at("heads").get<int>();
  c.layers = j.at("layers").get<int>();
  c.segment = j.at("segment").get<int>();
  return c;
}

inline constexpr const char* kBaselineFormat = "doppler-baseline-checkpoint";

/// Writes the network and meta (plus format, version and method) to `path` atomically.
inline void write_baseline_checkpoint(const std::filesystem::path& path, torch::nn::Module& net,
                                      BaselineMethod method, nlohmann::json meta) {
  torch::serialize::OutputArchive root, sub;
  net.save(sub);
  root.write("net", sub);
  meta["format"] = kBaselineFormat;
  meta["version"] = 1;
  meta["method"] = baseline_method_name(method);
  root.write("meta", c10::IValue(meta.dump()));
  save_archive_atomic(root, path);
}

/// An opened baseline checkpoint.
struct BaselineCheckpoint {
  nlohmann::json meta;
  BaselineConfig config;  ///< architecture
  torch::serialize::InputArchive net;
};

/// Opens a checkpoint of `method`; InputError naming the file when it is missing, unreadable, a
/// Doppler checkpoint or one of the other baseline.
inline BaselineCheckpoint open_baseline_checkpoint(const std::filesystem::path& path,
                                                   BaselineMethod method) {
  const std::string want = baseline_method_name(method);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw InputError(path.string(), 0, "no such checkpoint file");
  BaselineCheckpoint c;
  torch::serialize::InputArchive root;
  try {
    root.load_from(path.string());
    c10::IValue meta;
    if (!root.try_read("meta", meta) || !meta.isString())
      throw InputError(path.string(), 0, "not a " + want + " checkpoint (no meta record)");
    c.meta = nlohmann::json::parse(meta.toStringRef());
  } catch (const InputError&) {
    throw;
  } catch (const std::exception&) {
    throw InputError(path.string(), 0, "unreadable checkpoint (truncated or not a checkpoint)");
  }
  const std::string format = c.meta.is_object() ? c.meta.value("format", "") : "";
  if (format == "doppler-checkpoint")
    throw InputError(path.string(), 0,
                     "a Doppler policy checkpoint, not a " + want + " checkpoint");
  if (format != kBaselineFormat || c.meta.value("version", 0) != 1)
    throw InputError(path.string(), 0, "not a " + want + " checkpoint");
  const std::string got = c.meta.value("method", "");
  if (got != want)
    throw InputError(path.string(), 0, "a " + got + " checkpoint, not a " + want + " checkpoint");
  try {
    c.config = baseline_config_from_json(c.meta.at("config"));
    root.read("net", c.net);
  } catch (const std::exception&) {
    throw InputError(path.string(), 0, "checkpoint is incomplete");
  }
  return c;
}

/// Loads a checkpoint's weights into `net` (built from its configuration).
inline void load_baseline_net(BaselineCheckpoint& c, torch::nn::Module& net,
                              const std::filesystem::path& path) {
  try {
    net.load(c.net);
  } catch (const std::exception&) {
    throw InputError(path.string(), 0, "checkpoint network does not match its configuration");
  }
}

/// The run directory's files (config.json, log.jsonl, best.json, greedy.json, ckpt.pt).
class BaselineRunFiles {
public:
  /// Inactive when `dir` is empty; otherwise creates it and writes config.json.
  BaselineRunFiles(const std::filesystem::path& dir, BaselineMethod method,
                   const nlohmann::json& config)
      : dir_(dir), method_(method) {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec || !std::filesystem::is_directory(dir_))
      throw InputError(dir_.string(), 0, "cannot create the run directory");
    nlohmann::json j = config;
    j["method"] = baseline_method_name(method);
    write_file_atomic(dir_ / "config.json", j.dump(2) + "\n");
    write_file_atomic(dir_ / "log.jsonl", "");
  }
  /// True when a directory was given.
  bool active() const { return !dir_.empty(); }
  /// Appends one episode to log.jsonl.
  void log(const BaselineEpisode& s) const {
    if (!active()) return;
    const nlohmann::json j = {{"episode", s.episode},     {"method", baseline_method_name(method_)},
                              {"decisions", s.decisions}, {"makespan", s.makespan},
                              {"reward", s.reward},       {"baseline", s.baseline},
                              {"advantage", s.advantage}, {"loss", s.loss},
                              {"entropy", s.entropy},     {"calls", s.calls},
                              {"seconds", s.seconds},     {"best", s.best}};
    std::ofstream out(dir_ / "log.jsonl", std::ios::app);
    out << j.dump() << "\n";
    if (!out) throw InputError((dir_ / "log.jsonl").string(), 0, "cannot append to the log");
  }
  /// Writes best.json, greedy.json and ckpt.pt.
  void finish(const BaselineResult& r, torch::nn::Module& net, const nlohmann::json& meta) const {
    if (!active()) return;
    write_file_atomic(dir_ / "best.json", format_assignment_json(r.best));
    if (!r.greedy.device_of.empty())  // none when a stop came first
      write_file_atomic(dir_ / "greedy.json", format_assignment_json(r.greedy));
    write_baseline_checkpoint(dir_ / "ckpt.pt", net, method_, meta);
  }

private:
  std::filesystem::path dir_;
  BaselineMethod method_;
};

/// Samples an index from `probs` (sum 1) with `rng`; greedy: the first most probable index.
inline int sample_index(const float* probs, int n, bool greedy, std::mt19937_64& rng) {
  int best = 0;
  for (int i = 1; i < n; ++i)
    if (probs[i] > probs[best]) best = i;
  if (greedy) return best;
  const double r = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
  double acc = 0;
  int last = best;
  for (int i = 0; i < n; ++i) {
    if (probs[i] <= 0) continue;
    acc += probs[i];
    last = i;
    if (r < acc) return i;
  }
  return last;  // rounding: r beyond the accumulated mass
}

/// How a run's training rollouts are split into updates: the rollouts the budget allows
/// (`calls_per_rollout` simulator calls each, one call kept for the greedy placement's evaluation
/// and `reserved` more for other evaluations; at most `episodes` when > 0), in as few batches of
/// at most `batch` as possible, of sizes differing by at most one (no tiny last batch).
inline std::vector<int> batch_plan(const BaselineConfig& c, int batch,
                                   std::int64_t calls_per_rollout, std::int64_t reserved) {
  constexpr std::int64_t kTimeOnlyEpisodes = 1'000'000;  // a time limit alone: the plan's length
  std::int64_t total =
      c.calls == 0 && c.episodes == 0 ? kTimeOnlyEpisodes : std::numeric_limits<int>::max();
  if (c.calls > 0)
    total = std::max<std::int64_t>(0, c.calls - 1 - reserved + calls_per_rollout - 1) /
            std::max<std::int64_t>(1, calls_per_rollout);  // a truncated last rollout counts
  if (c.episodes > 0) total = std::min<std::int64_t>(total, c.episodes);
  const std::int64_t b = std::max(1, batch);
  const std::int64_t n = (total + b - 1) / b;
  std::vector<int> sizes;
  for (std::int64_t i = 0; i < n; ++i)
    sizes.push_back(static_cast<int>(total / n + (i < total % n)));
  return sizes;
}

/// The learning rate of update `step` of `total` (the configuration's schedule; lr_end < 0 means
/// lr / 10).
inline double baseline_lr(const BaselineConfig& c, int step, int total) {
  const double end = c.lr_end < 0 ? c.lr / 10 : c.lr_end;
  return scheduled_lr(c.lr_schedule, c.lr, end, 0, step, std::max(1, total));
}

/// The PPO clipped surrogate, summed over decisions: -sum min(r A, clip(r, 1 - eps, 1 + eps) A)
/// with r = exp(logp - old_logp) (all three tensors of the same shape; old_logp and adv without
/// gradient). At the first pass over a batch (r = 1) it is the policy gradient -sum A logp.
inline torch::Tensor ppo_surrogate(const torch::Tensor& logp, const torch::Tensor& old_logp,
                                   const torch::Tensor& adv, double clip) {
  const auto ratio = torch::exp(logp - old_logp);
  return -torch::min(ratio * adv, torch::clamp(ratio, 1 - clip, 1 + clip) * adv).sum();
}

}  // namespace doppler::detail
