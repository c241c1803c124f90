// doppler-search (train=0): local-search's annealer started from the best of the loaded policy's
// samples and local-search's list schedulers (and DSC's clustering with dsc=1, the level
// placer's placement with levels=1), with reassignments drawn from PLC.
#include <algorithm>
#include <cmath>
#include <limits>

#include "learned_support.hpp"

#include "doppler/heuristics/anneal.hpp"
#include "doppler/heuristics/anneal_options.hpp"
#include "doppler/heuristics/levels.hpp"
#include "doppler/heuristics/search_placers.hpp"
#include "doppler/policy/policy_cache.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::learned {

namespace {

// The best placement seen so far.
struct Best {
  std::vector<DeviceId> devices;
  double makespan = std::numeric_limits<double>::infinity();
  void offer(const std::vector<DeviceId>& d, double ms) {
    if (ms < makespan) {
      devices = d;
      makespan = ms;
    }
  }
};

// The better of two sample batches (the first on ties).
SampledPlacement better_of(SampledPlacement a, SampledPlacement b) {
  return b.best_makespan < a.best_makespan ? std::move(b) : std::move(a);
}

// doppler-search's own options beside the sampling ones.
struct SearchKnobs {
  double mix = 0.5;                    // MoveProposal::mix
  double focus = 0;                    // AnnealSettings::focus
  double aim = 0;                      // AnnealSettings::aim
  TieBreak tiebreak = TieBreak::none;  // AnnealSettings::tiebreak
  bool swaps = true;                   // AnnealSettings::swaps
  bool prefix = kPrefixCycles;         // AnnealSettings::prefix_cycles
  double t0 = AnnealSettings{}.t0;
  bool dsc = false;     // DSC's placement is a start too
  bool levels = false;  // the level placer's placement is a start too
};

class DopplerSearchPlacer : public Placer {
public:
  DopplerSearchPlacer(std::string policy, SampleSpec s, SearchKnobs k)
      : policy_(std::move(policy)), s_(s), k_(k) {}
  std::string name() const override { return "doppler-search"; }
  std::int64_t default_calls() const override { return kDefaultSearchCalls; }

  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override {
    const std::int64_t n = eval.limits().evaluations;
    const int samples = n > 0 ? samples_within(s_.samples, n / 16) : s_.samples;
    Best best;
    ListScheduleStart start =
        best_list_schedule(problem, options, eval, static_cast<int>(n > 0 ? n - samples : 5));
    if (k_.dsc) improve_with_dsc(problem, options, eval, start);
    if (k_.levels) improve_start(LevelsPlacer(), problem, options, eval, start);
    best.offer(start.device_of, start.makespan);
    if (problem.devices() > 1 && problem.graph().num_nodes() > 0) {
      const std::shared_ptr<SharedPolicy> policy = shared_policy(policy_);
      const SampledPlacement sp =
          eval.metered([&] { return sample(*policy, problem, options, samples, eval); });
      best.offer(sp.best.device_of, sp.best_makespan);
      if (!eval.spent()) {
        const MoveProposal proposal{sp.proposal, k_.mix};
        AnnealSettings as;
        as.proposal = &proposal;
        as.focus = k_.focus;
        as.aim = k_.aim;
        as.tiebreak = k_.tiebreak;
        as.swaps = k_.swaps;
        as.prefix_cycles = k_.prefix;
        as.t0 = k_.t0;
        as.threads = options.threads;
        as.lanes = options.lanes;
        BudgetedEvaluator rest = eval.part(eval.left());
        AnnealResult ar = anneal(problem, best.devices, best.makespan, rest, as, options.seed);
        best.offer(ar.best, ar.best_makespan);
      }
    }
    return Assignment{problem.devices(), std::move(best.devices), {}, name()};
  }

private:
  // The best of `k` samples (rollout 0 greedy). With a time budget, sampling stops at about a
  // sixteenth of it (the load included): a first batch of 2 rollouts times them, a second batch
  // (its own greedy rollout included) draws as many of the rest as fit.
  SampledPlacement sample(SharedPolicy& policy, const Problem& problem, const PlaceOptions& options,
                          int k, const BudgetedEvaluator& eval) const {
    SampleOptions o;
    o.seed = options.seed;
    o.temperature = s_.temperature;
    const double share = eval.limits().seconds / 16;
    if (share <= 0) {
      o.samples = k;
      return sample_shared(policy, problem, o);
    }
    o.samples = std::min(k, eval.seconds() < share ? 2 : 1);
    const Stopwatch first_batch;
    SampledPlacement first = sample_shared(policy, problem, o);
    const double per_rollout = std::max(1e-9, first_batch.seconds() / o.samples);
    const double fit = o.threads * (share - eval.seconds()) / per_rollout;
    const int more = static_cast<int>(std::min<double>(k - o.samples, std::floor(fit)));
    if (more < 2) return first;
    o.samples = more;
    o.seed = options.seed ^ 0x9e3779b97f4a7c15ULL;
    return better_of(std::move(first), sample_shared(policy, problem, o));
  }

  std::string policy_;
  SampleSpec s_;
  SearchKnobs k_;
};

}  // namespace

std::unique_ptr<Placer> make_search_placer(PlacerParams& p) {
  const std::string name = "doppler-search";
  PlacerParams peek = p;
  if (take_number(peek, name, "train", 0) > 0) return make_trained_placer(name, p);
  for (const char* key :
       {"il", "sim", "preset", "rollouts", "lr", "entropy", "si", "ppo", "sel", "teacher",
        "baseline", "schedule", "rl_temperature", "returns", "action", "hidden", "mp_steps"})
    if (p.count(key))
      throw InputError("method " + name + ": " + key +
                       "= is a training option; it needs train=F > 0 (train=0, the default, "
                       "searches with the loaded policy)");
  take_fraction(p, name, "train", 0);  // > 0 went to training above; here it is 0
  SearchKnobs k;
  k.mix = take_fraction(p, name, "mix", k.mix);
  k.focus = take_fraction(p, name, "focus", k.focus);
  k.aim = take_fraction(p, name, "aim", k.aim);
  k.tiebreak = take_tiebreak(p, name);
  k.t0 = take_start_temperature(p, name, k.t0);
  k.dsc = take_integer(p, name, "dsc", 0, 0, 1) == 1;
  k.levels = take_integer(p, name, "levels", 0, 0, 1) == 1;
  k.swaps = take_integer(p, name, "swaps", 1, 0, 1) == 1;
  k.prefix = take_integer(p, name, "prefix", kPrefixCycles ? 1 : 0, 0, 1) == 1;
  const std::string policy = policy_path(name, take_string(p, "policy", ""));
  return std::make_unique<DopplerSearchPlacer>(policy, take_sample_spec(p, name), k);
}

}  // namespace doppler::learned
