// Evaluation of a pretraining run and its log lines.
#include "train/pretrain_eval.hpp"

#include "policy/nn/sampling.hpp"

#include "doppler/policy/doppler_policy.hpp"

namespace doppler::detail {

using nlohmann::json;

// The greedy placement and the best of eval_samples rollouts of the current policy.
std::pair<double, double> PretrainEvaluator::greedy_and_best(const Problem& p,
                                                             const nn::GraphTensors& gt,
                                                             bool best_of) {
  SampleOptions so;
  so.samples = 1;
  so.threads = 1;
  const double greedy = nn::sample_placement(p, agent_, gt, so).best_makespan;
  if (!best_of) return {greedy, 0.0};
  so.samples = cfg_.eval_samples;
  return {greedy, nn::sample_placement(p, agent_, gt, so).best_makespan};
}

std::vector<HeldOutResult> PretrainEvaluator::held_out(bool best_of) {
  pool_.reference_held_out(cfg_.policy, cfg_.eval_budget, cfg_.threads);
  const auto& held = pool_.held;
  std::vector<HeldOutResult> out(held.size());
  parallel_for(static_cast<int>(held.size()), cfg_.threads, [&](int k) {
    const auto i = static_cast<std::size_t>(k);
    const auto [greedy, best] = greedy_and_best(*held[i].problem, pool_.held_gt[i], best_of);
    out[i] = {held[i].name, greedy, pool_.held_cp[i], pool_.held_ls[i], best};
  });
  return out;
}

json PretrainEvaluator::round(int round, const LabelStore& labels, std::int64_t& calls) {
  const int n = pool_.size();
  const int m = std::min(n, cfg_.eval_pool);
  std::vector<double> greedy(static_cast<std::size_t>(m)), best(greedy.size());
  parallel_for(m, cfg_.threads, [&](int k) {
    const auto i = static_cast<std::size_t>(k * n / m);
    const auto [g, b] = greedy_and_best(*pool_.pool[i].problem, pool_.pool_gt[i], true);
    const double label = labels.label(static_cast<int>(i)).makespan;
    greedy[static_cast<std::size_t>(k)] = g / label - 1;
    best[static_cast<std::size_t>(k)] = b / label - 1;
  });
  calls += static_cast<std::int64_t>(m) * (1 + cfg_.eval_samples);
  const auto mean = [](const std::vector<double>& x) {
    double a = 0;
    for (double v : x) a += v / static_cast<double>(x.size());
    return x.empty() ? 0.0 : a;
  };
  json j = {{"round", round},
            {"pool_evaluated", m},
            {"pool_greedy_gap_label", mean(greedy)},
            {"pool_best_gap_label", mean(best)},
            {"samples", cfg_.eval_samples}};
  if (!pool_.held.empty()) j["held_out"] = held_out_json(held_out(true));
  return j;
}

json held_out_json(const std::vector<HeldOutResult>& r) {
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

json pretrain_stats_json(const PretrainStats& st) {
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

}  // namespace doppler::detail
