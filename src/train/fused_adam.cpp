#include "train/fused_adam.hpp"

#include <cmath>
#include <string>

#include "doppler/util/number_text.hpp"

namespace doppler::detail {

FusedAdam::FusedAdam(std::vector<torch::Tensor> params, double lr, double beta1, double beta2,
                     double eps)
    : params_(std::move(params)), lr_(lr), b1_(beta1), b2_(beta2), eps_(eps) {
  for (const auto& p : params_) {
    m_.push_back(torch::zeros_like(p));
    v_.push_back(torch::zeros_like(p));
  }
}

void FusedAdam::zero_grad() {
  for (auto& p : params_)
    if (p.mutable_grad().defined()) p.mutable_grad().zero_();
}

void FusedAdam::step() {
  torch::NoGradGuard no_grad;
  ++t_;
  const double c1 = 1 - std::pow(b1_, static_cast<double>(t_));
  const double c2 = 1 - std::pow(b2_, static_cast<double>(t_));
  const auto b1 = static_cast<float>(b1_), b2 = static_cast<float>(b2_);
  const auto step = static_cast<float>(lr_ / c1), inv_c2 = static_cast<float>(1.0 / c2),
             eps = static_cast<float>(eps_);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    auto& p = params_[i];
    const auto& g = p.grad();
    if (!g.defined()) continue;
    const auto gc = g.contiguous();
    float* pp = p.data_ptr<float>();
    const float* gp = gc.data_ptr<float>();
    float* mp = m_[i].data_ptr<float>();
    float* vp = v_[i].data_ptr<float>();
    const std::int64_t n = p.numel();
    for (std::int64_t k = 0; k < n; ++k) {
      const float gk = gp[k];
      const float mk = b1 * mp[k] + (1 - b1) * gk;
      const float vk = b2 * vp[k] + (1 - b2) * gk * gk;
      mp[k] = mk;
      vp[k] = vk;
      pp[k] -= step * mk / (std::sqrt(vk * inv_c2) + eps);
    }
  }
}

FusedAdam::State FusedAdam::state() const {
  State s;
  s.t = t_;
  for (std::size_t i = 0; i < m_.size(); ++i) {
    s.m.push_back(m_[i].clone());
    s.v.push_back(v_[i].clone());
  }
  return s;
}

void FusedAdam::set_state(const State& s) {
  torch::NoGradGuard no_grad;
  t_ = s.t;
  for (std::size_t i = 0; i < m_.size(); ++i) {
    m_[i].copy_(s.m[i]);
    v_[i].copy_(s.v[i]);
  }
}

void FusedAdam::save(torch::serialize::OutputArchive& a) const {
  a.write("step", torch::tensor(t_));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    a.write(numbered("m", i), m_[i], /*is_buffer=*/true);
    a.write(numbered("v", i), v_[i], /*is_buffer=*/true);
  }
}

void FusedAdam::load(torch::serialize::InputArchive& a) {
  torch::Tensor step;
  a.read("step", step);
  t_ = step.item<std::int64_t>();
  for (std::size_t i = 0; i < params_.size(); ++i) {
    a.read(numbered("m", i), m_[i], /*is_buffer=*/true);
    a.read(numbered("v", i), v_[i], /*is_buffer=*/true);
  }
}

}  // namespace doppler::detail
