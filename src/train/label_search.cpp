#include "train/label_search.hpp"

#include <algorithm>

#include "policy/nn/sampling.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/util/error.hpp"

namespace doppler::detail {

namespace {

// The policy's samples per policy-guided search: a sixteenth of the budget, 4 to 64.
int policy_samples(std::int64_t budget) {
  return static_cast<int>(std::clamp<std::int64_t>(budget / 16, 4, 64));
}

LabelSearchResult first_label(const Problem& p, std::int64_t budget, std::uint64_t seed) {
  const auto placer = make_placer("local-search");
  PlaceOptions o;
  o.seed = seed;
  o.budget.evaluations = budget;
  Assignment a = placer->place(p, o).assignment;
  SimWorkspace ws;
  const double ms = p.simulator().makespan(a.device_of, ws);
  return {std::move(a.device_of), ms, "local-search"};
}

}  // namespace

LabelSource parse_label_source(const std::string& name) {
  if (name == "local-search") return LabelSource::local_search;
  if (name == "doppler-search") return LabelSource::policy_search;
  throw InputError("pretrain: unknown label search '" + name +
                   "' (expected local-search or doppler-search)");
}

std::string label_source_name(LabelSource s) {
  return s == LabelSource::local_search ? "local-search" : "doppler-search";
}

LabelSearchResult search_label(const Problem& p, const Label& label, LabelSource source,
                               std::int64_t budget, std::uint64_t seed, nn::DualAgent& agent,
                               const nn::GraphTensors& gt) {
  if (label.device_of.empty()) return first_label(p, budget, seed);
  LabelSearchResult start{label.device_of, label.makespan, label_source_name(source)};
  MoveProposal proposal;
  AnnealSettings settings;
  if (source == LabelSource::policy_search) {
    SampleOptions so;
    so.samples = static_cast<int>(std::min<std::int64_t>(policy_samples(budget), budget));
    so.seed = seed;
    so.threads = 1;  // the problems run in parallel
    SampledPlacement sp = nn::sample_placement(p, agent, gt, so);
    budget -= sp.calls;
    if (sp.best_makespan < start.makespan) {
      start.device_of = sp.best.device_of;
      start.makespan = sp.best_makespan;
    }
    proposal.weights = std::move(sp.proposal);
    settings.proposal = &proposal;
  }
  if (budget <= 0 || p.devices() == 1) return start;
  BudgetedEvaluator eval(p.simulator(), {budget, 0});
  AnnealResult r = anneal(p, start.device_of, start.makespan, eval, settings, seed);
  if (r.best_makespan < start.makespan) {
    start.device_of = std::move(r.best);
    start.makespan = r.best_makespan;
  }
  return start;
}

}  // namespace doppler::detail
