// placeto and gdp as placers: trained inside place() within calls= (default: the budget), or
// loaded (policy=).
#include <algorithm>
#include <cmath>
#include <memory>

#include "learned_support.hpp"

#include "doppler/train/baselines.hpp"
#include "doppler/util/error.hpp"

namespace doppler::learned {

namespace {

// placeto / gdp: trained inside place() within `calls` simulator calls, or loaded (policy=).
class BaselinePlacer : public Placer {
public:
  BaselinePlacer(BaselineMethod m, BaselineConfig c, std::string policy, bool calls_given)
      : method_(m), config_(std::move(c)), policy_(std::move(policy)), calls_given_(calls_given) {}
  std::string name() const override { return baseline_method_name(method_); }
  std::int64_t default_calls() const override { return policy_.empty() ? config_.calls : 0; }
  PlaceResult place_within(const Problem& problem, const PlaceOptions& options,
                           BudgetedEvaluator& eval) const override {
    if (!policy_.empty()) {
      Assignment a = eval.metered([&] { return place_baseline(method_, problem, policy_); });
      a.method = name();
      return a;
    }
    // Calls are recorded after every update, so that progress is told and a stop (the
    // progress callback's) ends training at the next update.
    std::int64_t counted = problem.simulator().calls();
    const auto record_calls = [&] {
      const std::int64_t now = problem.simulator().calls();
      eval.record(now - counted);
      counted = now;
    };
    Assignment a = [&] {
      BaselineConfig c = config_;
      c.seed = options.seed;
      // Without calls=, the budget's calls; with it, calls= within the budget.
      if (eval.limits().evaluations > 0)
        c.calls = calls_given_ ? std::min(c.calls, eval.calls_left()) : eval.calls_left();
      else if (eval.limits().seconds > 0 && !calls_given_)
        c.calls = 0;  // a time limit alone: train until it (the greedy placement after)
      // Training paces its updates and its greedy placement to end within the seconds; 5% stay
      // for loading and the caller's own evaluation.
      if (eval.limits().seconds > 0) c.seconds = 0.95 * eval.seconds_left();
      c.on_update = [&](double best) {
        record_calls();
        if (std::isfinite(best)) eval.improved(best);
        return !eval.stop_requested();
      };
      return train_baseline(method_, problem, c).best;
    }();
    record_calls();
    a.method = name();
    return a;
  }

private:
  BaselineMethod method_;
  BaselineConfig config_;
  std::string policy_;
  bool calls_given_;  // calls= was given (else the budget sets the calls)
};

}  // namespace

std::unique_ptr<Placer> make_baseline_placer(const std::string& name, PlacerParams& p) {
  const BaselineMethod method = parse_baseline_method(name);
  const std::string policy = take_string(p, "policy", "");
  if (!policy.empty() && !p.empty())
    throw InputError("method " + name + ": policy= takes no other option");
  BaselineConfig c;
  const bool calls_given = p.count("calls") > 0;
  c.calls = take_integer(p, name, "calls", kDefaultTrainingCalls, 0, 1'000'000'000);
  c.episodes = static_cast<int>(take_integer(p, name, "episodes", 0, 0, 10'000'000));
  c.hidden = static_cast<int>(take_integer(p, name, "hidden", 0, 0, 4096));
  c.steps = static_cast<int>(take_integer(p, name, "steps", 0, 0, 64));
  c.max_devices = static_cast<int>(take_integer(p, name, "max_devices", c.max_devices, 1, 1 << 20));
  c.heads = static_cast<int>(take_integer(p, name, "heads", c.heads, 1, 64));
  c.layers = static_cast<int>(take_integer(p, name, "layers", c.layers, 1, 64));
  c.segment = static_cast<int>(take_integer(p, name, "segment", c.segment, 1, 1 << 20));
  c.lr = take_number(p, name, "lr", c.lr);
  c.entropy_weight = take_number(p, name, "entropy", c.entropy_weight);
  c.batch = static_cast<int>(take_integer(p, name, "batch", 0, 0, 1 << 20));
  c.ppo_epochs = static_cast<int>(take_integer(p, name, "epochs", 0, 0, 1000));
  c.clip = take_number(p, name, "clip", c.clip);
  return std::make_unique<BaselinePlacer>(method, c, policy, calls_given);
}

}  // namespace doppler::learned
