#include "doppler/policy/doppler_policy.hpp"

#include <cstdlib>

#include "policy/nn/agent.hpp"
#include "policy/nn/checkpoint.hpp"
#include "policy/nn/policy_config_json.hpp"
#include "policy/nn/sampling.hpp"

#include "doppler/policy/math_threads.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

struct DopplerPolicy::Impl {
  PolicyConfig config;
  std::unique_ptr<nn::DualAgent> agent;
};

std::filesystem::path default_policy_path() {
  if (const char* env = std::getenv("DOPPLER_MODEL"); env && *env) return env;
  return std::filesystem::path(DOPPLER_MODELS_DIR) / "doppler-pretrained.pt";
}

std::filesystem::path checkpoint_path(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::is_directory(path, ec) ? path / "ckpt.pt" : path;
}

DopplerPolicy::DopplerPolicy() : impl_(std::make_unique<Impl>()) {}
DopplerPolicy::DopplerPolicy(DopplerPolicy&&) noexcept = default;
DopplerPolicy& DopplerPolicy::operator=(DopplerPolicy&&) noexcept = default;
DopplerPolicy::~DopplerPolicy() = default;

DopplerPolicy DopplerPolicy::load(const std::filesystem::path& path) {
  use_single_threaded_math();
  const auto checkpoint = checkpoint_path(path);
  const detail::Checkpoint c = detail::open_checkpoint(checkpoint);
  DopplerPolicy p;
  try {
    p.impl_->config = detail::policy_config_from_json(c.meta.at("policy"));
  } catch (const std::exception&) {
    throw InputError(checkpoint.string(), 0, "checkpoint meta has no valid policy configuration");
  }
  p.impl_->agent = std::make_unique<nn::DualAgent>(p.impl_->config);
  detail::load_networks(c, *p.impl_->agent, checkpoint);
  return p;
}

Assignment DopplerPolicy::place(const Problem& problem) {
  torch::NoGradGuard no_grad;
  const nn::Prepared prep =
      impl_->agent->prepare(nn::problem_tensors(problem, impl_->config), false, false);
  nn::RolloutOptions o;
  o.mode = nn::ActionMode::greedy;
  o.learned_sel = impl_->agent->learns_sel();
  o.learned_plc = impl_->agent->learns_plc();
  o.joint = impl_->agent->joint();
  o.teacher = !o.learned_sel || !o.learned_plc;
  o.record_states = false;
  std::mt19937_64 rng(0);
  nn::Episode ep = nn::rollout(problem, impl_->config, prep.nets, o, rng);
  ep.assignment.method = "doppler";
  return ep.assignment;
}

SampledPlacement DopplerPolicy::sample(const Problem& problem, const SampleOptions& options) {
  if (options.samples < 1) throw InputError("doppler: samples must be at least 1");
  return nn::sample_placement(problem, *impl_->agent, nn::problem_tensors(problem, impl_->config),
                              options);
}

const PolicyConfig& DopplerPolicy::config() const {
  return impl_->config;
}

}  // namespace doppler
