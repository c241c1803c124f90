#pragma once
// What the learned placer families share: the sampling options, the policy a method loads, and
// the factories learned_placers.cpp registers.
#include <cstdint>
#include <memory>
#include <string>

#include "doppler/heuristics/placer.hpp"

namespace doppler::learned {

/// Options shared by the methods that sample a policy.
struct SampleSpec {
  int samples = 64;          ///< rollouts drawn; the best is kept
  double temperature = 1.0;  ///< sampling temperature (> 0)
};

/// Reads samples= and temperature= (InputError naming `name` when out of range).
SampleSpec take_sample_spec(PlacerParams& p, const std::string& name);

/// Reads t0= (the annealing start temperature, a fraction of the start makespan; default
/// `fallback`), InputError naming `name` unless it is > 0.
double take_start_temperature(PlacerParams& p, const std::string& name, double fallback);

/// Samples to draw within a share of the budget: min(samples, share), at least 1.
int samples_within(int samples, std::int64_t share);

/// The policy a method loads: `given`, else the shipped one, which must exist (InputError naming
/// it). A given path is read at place() time (DopplerPolicy::load's InputError names it).
std::string policy_path(const std::string& method, const std::string& given);

/// The progress callback of a sampling step metered by `eval`: sampling then goes in waves and
/// ends after the wave in which the run was told to stop or its seconds ran out. Empty (one
/// batch, no waves) when `eval` has neither a watcher nor a time limit.
ProgressCallback sampling_watch(BudgetedEvaluator& eval);

/// doppler: a trained policy (default: the shipped one), best of samples=.
std::unique_ptr<Placer> make_policy_placer(PlacerParams& p);
/// doppler-search: train=0 searches with a loaded policy; train=F > 0 trains first.
std::unique_ptr<Placer> make_search_placer(PlacerParams& p);
/// doppler-il, -sim, -sys, -sel, -plc, -joint and doppler-search:train=F: trained in place().
std::unique_ptr<Placer> make_trained_placer(const std::string& name, PlacerParams& p);
/// placeto, gdp: trained in place() within calls=, or loaded (policy=).
std::unique_ptr<Placer> make_baseline_placer(const std::string& name, PlacerParams& p);

}  // namespace doppler::learned
