#include "doppler/train/policy_gradient.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "doppler/util/enum_names.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

std::vector<double> leave_one_out_advantages(const std::vector<double>& costs, bool normalise) {
  const auto k = costs.size();
  std::vector<double> adv(k, 0.0);
  if (k < 2) return adv;
  double sum = 0, scale = 0;
  for (double c : costs) {
    if (!std::isfinite(c)) throw std::invalid_argument("leave_one_out_advantages: non-finite cost");
    sum += c;
    scale += std::abs(c);
  }
  const auto kd = static_cast<double>(k);
  for (std::size_t i = 0; i < k; ++i) adv[i] = (sum - costs[i]) / (kd - 1) - costs[i];
  if (!normalise) return adv;
  double mean = 0, var = 0;
  for (double a : adv) mean += a / kd;
  for (double a : adv) var += (a - mean) * (a - mean) / kd;
  const double sd = std::sqrt(var) + 1e-8 * scale / kd;
  if (sd <= 0) return std::vector<double>(k, 0.0);
  for (double& a : adv) a /= sd;
  return adv;
}

namespace {

constexpr std::array<EnumName<LrSchedule>, 3> kSchedules{{{LrSchedule::constant, "constant"},
                                                          {LrSchedule::cosine, "cosine"},
                                                          {LrSchedule::linear, "linear"}}};

}  // namespace

std::string lr_schedule_name(LrSchedule s) {
  return std::string(enum_name(kSchedules, s));
}

LrSchedule parse_lr_schedule(const std::string& name) {
  return parse_enum(kSchedules, name, "learning-rate schedule");
}

double scheduled_lr(LrSchedule s, double lr, double lr_end, int warmup, int step, int total) {
  if (warmup > 0 && step < warmup) return lr * static_cast<double>(step + 1) / warmup;
  if (s == LrSchedule::constant) return lr;
  const int span = std::max(1, total - 1 - std::max(0, warmup));
  const double f = std::clamp(static_cast<double>(step - std::max(0, warmup)) / span, 0.0, 1.0);
  if (s == LrSchedule::linear) return lr + (lr_end - lr) * f;
  return lr_end + 0.5 * (lr - lr_end) * (1 + std::cos(std::numbers::pi * f));
}

}  // namespace doppler
