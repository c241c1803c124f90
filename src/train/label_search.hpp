#pragma once
// Internal: the searches that produce distillation labels (docs/pretraining.md "Distillation"):
// `local-search` from the list schedulers for a problem without a label, then, in later rounds,
// the annealer started from the label (plain moves), or policy-guided search: the best of the
// label and of the current policy's samples, annealed with reassignment moves proposed by PLC.
#include <cstdint>
#include <string>
#include <vector>

#include "policy/nn/agent.hpp"
#include "policy/nn/graph_tensors.hpp"
#include "train/label_store.hpp"

#include "doppler/heuristics/problem.hpp"

namespace doppler::detail {

/// Which search improves the labels after round 0.
enum class LabelSource {
  local_search,   ///< the annealer of local-search, from the label
  policy_search,  ///< doppler-search: from the best of the label and the policy's samples
};

/// "local-search" or "doppler-search"; InputError otherwise.
LabelSource parse_label_source(const std::string& name);
/// The inverse.
std::string label_source_name(LabelSource s);

/// One search's result.
struct LabelSearchResult {
  std::vector<DeviceId> device_of;
  double makespan = 0;
  std::string source;  ///< what found it
};

/// Searches problem `p` within `budget` simulator calls, deterministically in `seed`: without a
/// label, local-search; else as `source` says, started from `label` (never worse than it).
/// `agent` and `gt` are used by policy_search only (no gradient; safe from several threads).
LabelSearchResult search_label(const Problem& p, const Label& label, LabelSource source,
                               std::int64_t budget, std::uint64_t seed, nn::DualAgent& agent,
                               const nn::GraphTensors& gt);

}  // namespace doppler::detail
