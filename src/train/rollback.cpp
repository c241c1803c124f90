#include "train/rollback.hpp"

namespace doppler::detail {

namespace {

std::vector<torch::Tensor> clone_params(torch::nn::Module& m) {
  std::vector<torch::Tensor> out;
  for (const auto& p : m.parameters()) out.push_back(p.detach().clone());
  return out;
}

void restore_params(torch::nn::Module& m, const std::vector<torch::Tensor>& saved) {
  torch::NoGradGuard no_grad;
  auto params = m.parameters();
  for (std::size_t i = 0; i < params.size(); ++i) params[i].copy_(saved[i]);
}

}  // namespace

void Snapshot::take(nn::DualAgent& agent, FusedAdam& opt_sel, FusedAdam& opt_plc) {
  sel_ = clone_params(*agent.sel);
  plc_ = clone_params(*agent.plc);
  opt_sel_ = opt_sel.state();
  opt_plc_ = opt_plc.state();
}

void Snapshot::restore(nn::DualAgent& agent, FusedAdam& opt_sel, FusedAdam& opt_plc) const {
  restore_params(*agent.sel, sel_);
  restore_params(*agent.plc, plc_);
  opt_sel.set_state(opt_sel_);
  opt_plc.set_state(opt_plc_);
}

bool all_finite(torch::nn::Module& m) {
  for (const auto& p : m.parameters())
    if (!torch::isfinite(p).all().item<bool>()) return false;
  return true;
}

}  // namespace doppler::detail
