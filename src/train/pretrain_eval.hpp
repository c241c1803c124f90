#pragma once
// Evaluation of a pretraining run (private to src/train): the policy's greedy and best-of-K
// placements on the held-out problems and, after a distillation round, on pool problems against
// their labels; and the log lines of updates and evaluations.
#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/nn/agent.hpp"
#include "train/label_store.hpp"
#include "train/pretrain_pool.hpp"

#include "doppler/train/pretrain.hpp"

namespace doppler::detail {

/// Evaluates the current policy of `agent` on the problems of `pool` (which both must outlive
/// it), each problem on its own thread of cfg.threads.
class PretrainEvaluator {
public:
  PretrainEvaluator(const PretrainConfig& cfg, PretrainPool& pool, nn::DualAgent& agent)
      : cfg_(cfg), pool_(pool), agent_(agent) {}

  /// Every held-out problem: the greedy placement, the references (computed at the first call)
  /// and, with `best_of`, the best of cfg.eval_samples rollouts.
  std::vector<HeldOutResult> held_out(bool best_of = false);
  /// After distillation round `round`: the greedy and best-of-K gaps to the `labels` of
  /// cfg.eval_pool problems spread over the pool, and the held-out problems' gaps to local
  /// search; adds the simulator calls made to `calls`. The round's log entry.
  nlohmann::json round(int round, const LabelStore& labels, std::int64_t& calls);

private:
  std::pair<double, double> greedy_and_best(const Problem& p, const nn::GraphTensors& gt,
                                            bool best_of);

  const PretrainConfig& cfg_;
  PretrainPool& pool_;
  nn::DualAgent& agent_;
};

/// The log entry of held-out results: per problem and the mean gaps to local search.
nlohmann::json held_out_json(const std::vector<HeldOutResult>& r);

/// The log line of one update (log.jsonl, before the labels and evaluations it may carry).
nlohmann::json pretrain_stats_json(const PretrainStats& st);

}  // namespace doppler::detail
