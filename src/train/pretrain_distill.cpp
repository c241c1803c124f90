// Distillation by expert iteration: the rounds' label searches and the distillation loss.
#include "train/pretrain_distill.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string>

#include "doppler/train/policy_gradient.hpp"
#include "doppler/util/progress.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::detail {

using nlohmann::json;

Distiller::Distiller(const PretrainConfig& cfg, const DataParallel& dp, const PretrainPool& pool)
    : cfg_(cfg),
      dp_(dp),
      pool_(pool),
      labels_(std::make_unique<LabelStore>(pool.size(), std::nullopt)),
      experts_(pool.pool.size()) {}

void Distiller::set_labels(std::unique_ptr<LabelStore> labels) {
  labels_ = std::move(labels);
  refresh_experts();
}

std::uint64_t Distiller::label_seed(int round, int i) const {
  std::seed_seq seq{static_cast<std::uint32_t>(cfg_.seed),
                    static_cast<std::uint32_t>(cfg_.seed >> 32), static_cast<std::uint32_t>(round),
                    static_cast<std::uint32_t>(i), 0x1abe1u};
  return std::mt19937_64(seq)();
}

// The searches of problems [a, b) of a round: this rank's share on the threads, then (MPI) every
// rank's shares exchanged, so that every rank holds every result.
std::vector<LabelSearchResult> Distiller::search_chunk(int round, LabelSource source, int a, int b,
                                                       nn::DualAgent& agent) {
  std::vector<LabelSearchResult> out(static_cast<std::size_t>(b - a));
  std::vector<int> mine;
  for (int i = a; i < b; ++i)
    if ((i - a) % dp_.ranks == dp_.rank) mine.push_back(i);
  parallel_for(static_cast<int>(mine.size()), cfg_.threads, [&](int k) {
    const int i = mine[static_cast<std::size_t>(k)];
    const auto u = static_cast<std::size_t>(i);
    out[static_cast<std::size_t>(i - a)] =
        search_label(*pool_.pool[u].problem, labels_->label(i), source, cfg_.label_budget,
                     label_seed(round, i), agent, pool_.pool_gt[u]);
  });
  if (dp_.ranks > 1 && dp_.average) exchange(out, source, a);
  return out;
}

// MPI: device ids of every rank's results averaged (zeros elsewhere), so x ranks is exact.
void Distiller::exchange(std::vector<LabelSearchResult>& out, LabelSource source, int a) {
  std::vector<float> flat;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const auto n =
        static_cast<std::size_t>(pool_.pool[k + static_cast<std::size_t>(a)].graph->num_nodes());
    const bool own = static_cast<int>(k) % dp_.ranks == dp_.rank;
    for (std::size_t v = 0; v < n; ++v)
      flat.push_back(own ? static_cast<float>(out[k].device_of[v]) : 0.0f);
  }
  dp_.average(flat);
  std::size_t at = 0;
  SimWorkspace ws;
  for (std::size_t k = 0; k < out.size(); ++k) {
    const int i = static_cast<int>(k) + a;
    const Problem& p = *pool_.pool[static_cast<std::size_t>(i)].problem;
    auto& r = out[k];
    r.device_of.resize(static_cast<std::size_t>(p.graph().num_nodes()));
    for (auto& d : r.device_of) d = static_cast<DeviceId>(std::lround(flat[at++] * dp_.ranks));
    r.makespan = p.simulator().makespan(r.device_of, ws);
    r.source = labels_->label(i).device_of.empty() ? "local-search" : label_source_name(source);
  }
}

// Rebuilds the expert form (start times) of every label that changed.
void Distiller::refresh_experts() {
  std::vector<int> stale;
  for (int i = 0; i < labels_->size(); ++i)
    if (!labels_->label(i).device_of.empty() &&
        experts_[static_cast<std::size_t>(i)].device_of != labels_->label(i).device_of)
      stale.push_back(i);
  parallel_for(static_cast<int>(stale.size()), cfg_.threads, [&](int k) {
    const auto i = static_cast<std::size_t>(stale[static_cast<std::size_t>(k)]);
    experts_[i] = nn::make_expert_label(*pool_.pool[i].problem,
                                        labels_->label(static_cast<int>(i)).device_of);
  });
}

json Distiller::generate_labels(int round, nn::DualAgent& agent) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto source = round == 0 ? LabelSource::local_search : parse_label_source(cfg_.distill);
  const int n = pool_.size();
  const int chunk = std::max(1, cfg_.threads) * 4 * dp_.ranks;
  Progress progress("labels, round " + std::to_string(round), n);
  for (int a = labels_->recorded(round); a < n; a += chunk) {
    const int b = std::min(n, a + chunk);
    const auto results = search_chunk(round, source, a, b, agent);
    for (int i = a; i < b; ++i) {
      const auto& r = results[static_cast<std::size_t>(i - a)];
      labels_->offer(round, i, r.source, r.makespan, r.device_of, cfg_.label_budget);
    }
    progress.update(b);
  }
  refresh_experts();
  double gap_cp = 0;
  int found = 0;
  for (int i = 0; i < n; ++i) {
    gap_cp += (labels_->label(i).makespan / pool_.pool_cp[static_cast<std::size_t>(i)] - 1) / n;
    found += labels_->label(i).round == round ? 1 : 0;
  }
  return {{"round", round},
          {"source", label_source_name(source)},
          {"label_gap_critical_path", gap_cp},
          {"improved", found},
          {"label_calls", labels_->calls(round)},
          {"label_seconds", Stopwatch::seconds_since(t0)}};
}

torch::Tensor distill_objective(nn::DualAgent& agent, const PretrainConfig& cfg, const Problem& p,
                                const nn::Prepared& prep, const std::vector<nn::Sampled>& batch,
                                UpdateStats& us) {
  UpdateSettings s;
  s.imitation = true;
  s.learn_sel = cfg.distill_nets != "plc";
  s.learn_plc = cfg.distill_nets != "sel";
  s.entropy = cfg.entropy_weight;
  s.nodes = p.graph().num_nodes();
  s.devices = p.devices();
  double steps = 0;
  for (const auto& b : batch) steps += static_cast<double>(b.episode.steps.size()) / batch.size();
  torch::Tensor loss = batch_objective(agent, prep, batch, {}, s, us) / std::max(1.0, steps);
  if (cfg.pg_weight <= 0) return loss;
  std::vector<double> costs;
  for (const auto& b : batch) costs.push_back(b.cost);
  s.imitation = false;
  s.entropy = 0;
  s.temperature = cfg.temperature;
  UpdateStats pg;
  return loss + cfg.pg_weight * batch_objective(agent, prep, batch,
                                                leave_one_out_advantages(costs, true), s, pg);
}

}  // namespace doppler::detail
