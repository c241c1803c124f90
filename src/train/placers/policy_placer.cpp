// doppler: a trained policy (by default the shipped pretrained one), best of K samples.
#include <algorithm>

#include "learned_support.hpp"

#include "doppler/policy/policy_cache.hpp"

namespace doppler::learned {

namespace {

class DopplerPolicyPlacer : public Placer {
public:
  DopplerPolicyPlacer(std::string policy, SampleSpec s) : policy_(std::move(policy)), s_(s) {}
  std::string name() const override { return "doppler"; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override {
    const std::shared_ptr<SharedPolicy> policy = shared_policy(policy_);
    SampleOptions o;
    o.samples = s_.samples;
    if (eval.limits().evaluations > 0)
      o.samples = static_cast<int>(std::min<std::int64_t>(o.samples, eval.calls_left()));
    o.seed = options.seed;
    o.temperature = s_.temperature;
    o.progress = sampling_watch(eval);
    SampledPlacement r = eval.metered([&] { return sample_shared(*policy, problem, o); });
    r.best.method = name();
    return r.best;
  }

private:
  std::string policy_;
  SampleSpec s_;
};

}  // namespace

std::unique_ptr<Placer> make_policy_placer(PlacerParams& p) {
  const std::string policy = policy_path("doppler", take_string(p, "policy", ""));
  return std::make_unique<DopplerPolicyPlacer>(policy, take_sample_spec(p, "doppler"));
}

}  // namespace doppler::learned
