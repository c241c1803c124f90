#pragma once
// Distillation by expert iteration (private to src/train): rounds of label searches on every
// pool problem (shared between the data-parallel ranks), the labels' expert form the rollouts
// imitate, and the distillation loss.
#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "policy/nn/agent.hpp"
#include "policy/nn/expert_label.hpp"
#include "policy/nn/sampling.hpp"
#include "train/label_search.hpp"
#include "train/label_store.hpp"
#include "train/pretrain_pool.hpp"
#include "train/update.hpp"

#include "doppler/train/pretrain.hpp"

namespace doppler::detail {

/// The labels of a distilling run and its round schedule: after cfg.il_updates Stage I updates,
/// cfg.rounds rounds of cfg.round_updates updates, the labels searched before each round.
class Distiller {
public:
  /// A run on `pool` (which must outlive it), no labels yet and none recorded to a file.
  Distiller(const PretrainConfig& cfg, const DataParallel& dp, const PretrainPool& pool);

  /// The round of update `u` (0-based, counted from the first update after Stage I).
  int round_of(int u) const { return (u - cfg_.il_updates) / cfg_.round_updates; }
  /// True when update `u` is a distillation update (after Stage I).
  bool distilling(int u) const { return u >= cfg_.il_updates; }
  /// True when `u` is the first update of a round (its labels are due first).
  bool round_starts(int u) const {
    return distilling(u) && (u - cfg_.il_updates) % cfg_.round_updates == 0;
  }
  /// True when `done` updates complete a round.
  bool round_ended(int done) const {
    return done > cfg_.il_updates && (done - cfg_.il_updates) % cfg_.round_updates == 0;
  }

  /// Replaces the labels (a store recording to the run's labels.jsonl, or one loaded from it),
  /// then rebuilds the expert form of those that changed.
  void set_labels(std::unique_ptr<LabelStore> labels);
  /// The labels.
  const LabelStore& labels() const { return *labels_; }
  /// The labels' expert form (start times), one per pool problem: what the rollouts imitate.
  const std::vector<nn::ExpertLabel>& experts() const { return experts_; }

  /// Round `round`'s label searches on every pool problem (resuming after the recorded ones),
  /// this rank's share on the threads, every rank's results exchanged; its log entry.
  nlohmann::json generate_labels(int round, nn::DualAgent& agent);

private:
  std::uint64_t label_seed(int round, int i) const;
  std::vector<LabelSearchResult> search_chunk(int round, LabelSource source, int a, int b,
                                              nn::DualAgent& agent);
  void exchange(std::vector<LabelSearchResult>& out, LabelSource source, int a);
  void refresh_experts();

  const PretrainConfig& cfg_;
  const DataParallel& dp_;
  const PretrainPool& pool_;
  std::unique_ptr<LabelStore> labels_;
  std::vector<nn::ExpertLabel> experts_;
};

/// The distillation loss of one problem's rollouts `batch` (of problem `p`), per step: the
/// imitation of the experts by the networks cfg.distill_nets names, plus cfg.pg_weight x the
/// policy gradient with leave-one-out advantages. Fills the entropies of `us`.
torch::Tensor distill_objective(nn::DualAgent& agent, const PretrainConfig& cfg, const Problem& p,
                                const nn::Prepared& prep, const std::vector<nn::Sampled>& batch,
                                UpdateStats& us);

}  // namespace doppler::detail
