#include "learned_support.hpp"

#include <algorithm>
#include <filesystem>

#include "doppler/policy/doppler_policy.hpp"
#include "doppler/util/error.hpp"

namespace doppler::learned {

SampleSpec take_sample_spec(PlacerParams& p, const std::string& name) {
  SampleSpec s;
  s.samples = static_cast<int>(take_integer(p, name, "samples", s.samples, 1, 1'000'000));
  s.temperature = take_number(p, name, "temperature", s.temperature);
  if (!(s.temperature > 0)) throw InputError("method " + name + ": temperature must be positive");
  return s;
}

double take_start_temperature(PlacerParams& p, const std::string& name, double fallback) {
  const double t0 = take_number(p, name, "t0", fallback);
  if (!(t0 > 0)) throw InputError("method " + name + ": t0 must be > 0");
  return t0;
}

int samples_within(int samples, std::int64_t share) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(samples, share)));
}

std::string policy_path(const std::string& method, const std::string& given) {
  if (!given.empty()) return given;
  const std::string path = default_policy_path().string();
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    throw InputError("method " + method + ": the shipped policy " + path +
                     " is missing (set DOPPLER_MODEL, pass policy=PATH, or run "
                     "scripts/pretrain.sh)");
  return path;
}

ProgressCallback sampling_watch(BudgetedEvaluator& eval) {
  if (!eval.watched() && !(eval.limits().seconds > 0)) return {};
  return
      [&eval](const ProgressPoint&) { return !eval.stop_requested() && eval.seconds_left() > 0; };
}

}  // namespace doppler::learned
