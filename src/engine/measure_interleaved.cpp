#include "doppler/engine/measure_interleaved.hpp"

#include <algorithm>
#include <random>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler {

namespace {

// Hash of a placement's device vector.
std::size_t placement_hash(const Assignment& a) {
  const std::string_view bytes(reinterpret_cast<const char*>(a.device_of.data()),
                               a.device_of.size() * sizeof(DeviceId));
  return std::hash<std::string_view>{}(bytes) ^ static_cast<std::size_t>(a.devices);
}

bool same_placement(const Assignment& a, const Assignment& b) {
  return a.devices == b.devices && a.device_of == b.device_of;
}

// The measured runs of one distinct placement so far.
struct Runs {
  std::vector<double> makespans;
  double spent = 0;  // seconds of measured runs

  bool wants_more(const RepeatPolicy& p) const {
    const int n = static_cast<int>(makespans.size());
    if (n < p.min_repeat) return true;
    if (n >= p.max_repeat || (p.max_seconds > 0 && spent >= p.max_seconds)) return false;
    return p.target > 0 && median_interval(makespans).relative_halfwidth() > p.target;
  }
};

}  // namespace

std::vector<std::size_t> first_identical_placement(const std::vector<Assignment>& as) {
  std::unordered_multimap<std::size_t, std::size_t> seen;  // hash -> index of a first one
  std::vector<std::size_t> first(as.size());
  for (std::size_t i = 0; i < as.size(); ++i) {
    const std::size_t h = placement_hash(as[i]);
    first[i] = i;
    const auto [lo, hi] = seen.equal_range(h);
    for (auto it = lo; it != hi; ++it)
      if (same_placement(as[it->second], as[i])) first[i] = it->second;
    if (first[i] == i) seen.emplace(h, i);
  }
  return first;
}

InterleavedMeasurements measure_interleaved(
    const std::function<EngineResult(const Assignment&)>& run, const std::vector<Assignment>& as,
    const RepeatPolicy& policy, int warmup) {
  if (policy.min_repeat < 1 || policy.max_repeat < policy.min_repeat)
    throw InputError(fmt::format("measure: need 1 <= min repeat ({}) <= max repeat ({})",
                                 policy.min_repeat, policy.max_repeat));
  const std::vector<std::size_t> first = first_identical_placement(as);
  std::vector<std::size_t> distinct;
  for (std::size_t i = 0; i < as.size(); ++i)
    if (first[i] == i) distinct.push_back(i);
  for (int w = 0; w < warmup; ++w)
    for (std::size_t i : distinct) run(as[i]);
  std::vector<Runs> runs(as.size());
  std::mt19937_64 rng(kRoundOrderSeed);
  for (bool any = true; any;) {  // one round: each placement that wants more runs once
    any = false;
    std::shuffle(distinct.begin(), distinct.end(), rng);
    for (std::size_t i : distinct) {
      if (!runs[i].wants_more(policy)) continue;
      const double s = run(as[i]).makespan_seconds;
      runs[i].makespans.push_back(s);
      runs[i].spent += s;
      any = true;
    }
  }
  std::vector<Measurement> out(as.size());
  for (std::size_t i : distinct) out[i] = summarize_makespans(runs[i].makespans);
  for (std::size_t i = 0; i < as.size(); ++i) out[i] = out[first[i]];
  return {std::move(out), first};
}

}  // namespace doppler
