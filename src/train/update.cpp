#include "train/update.hpp"

#include <cmath>
#include <future>

#include "train/rollback.hpp"

namespace doppler::detail {

namespace {

// The loss terms of one network over one pass of the batch.
struct LossParts {
  torch::Tensor pg, entropy, si;  ///< scalars (si undefined without elites)
  double entropy_mean = 0;
};

// Terms of one network over the steps of `eps`, concatenated.
nn::StepTerms net_terms(nn::DualAgent& agent, bool sel, const nn::Prepared& prep,
                        const std::vector<const nn::Episode*>& eps, const UpdateSettings& s,
                        double temperature) {
  if (sel) return agent.sel_terms(prep, eps, s.nodes, temperature);
  if (!s.joint) return agent.plc_terms(prep, eps, s.devices, temperature);
  nn::StepTerms out;  // the joint variant, episode by episode
  std::vector<torch::Tensor> logp, entropy, teacher;
  for (const nn::Episode* ep : eps) {
    const nn::StepTerms t = agent.joint_terms(prep, *ep, s.devices, temperature);
    logp.push_back(t.logp);
    entropy.push_back(t.entropy);
    teacher.push_back(t.teacher);
  }
  out.logp = torch::cat(logp);
  out.entropy = torch::cat(entropy);
  out.teacher = torch::cat(teacher);
  return out;
}

// Per-step weights of the batch, concatenated: A_k x discount_t x min(1, pi / behaviour) /
// (K x T_k) for the policy gradient, and 1 / (K x T_k) for the entropy.
std::pair<torch::Tensor, torch::Tensor> step_weights(const std::vector<nn::Sampled>& batch,
                                                     const std::vector<double>& adv, bool sel,
                                                     const UpdateSettings& s) {
  int64_t total = 0;
  for (const auto& b : batch) total += static_cast<int64_t>(b.episode.steps.size());
  auto w = torch::empty({total}), e = torch::empty({total});
  auto* pw = w.data_ptr<float>();
  auto* pe = e.data_ptr<float>();
  const auto k = static_cast<double>(batch.size());
  int64_t i = 0;
  for (std::size_t r = 0; r < batch.size(); ++r) {
    const auto& steps = batch[r].episode.steps;
    const double scale = 1.0 / (k * static_cast<double>(steps.size()));
    for (std::size_t t = 0; t < steps.size(); ++t, ++i) {
      const nn::Step& st = steps[t];
      const double pi = sel || s.joint ? st.sel_prob : st.plc_prob;
      const double mu = sel || s.joint ? st.sel_behaviour : st.plc_behaviour;
      const double rho = mu > 0 ? std::min(1.0, pi / mu) : 1.0;
      const double disc = s.step_weights.empty() ? 1.0 : s.step_weights[t];
      pw[i] = static_cast<float>(adv.empty() ? 0.0 : adv[r] * disc * rho * scale);
      pe[i] = static_cast<float>(scale);
    }
  }
  return {w, e};
}

LossParts batch_loss(nn::DualAgent& agent, bool sel, const nn::Prepared& prep,
                     const std::vector<nn::Sampled>& batch, const std::vector<double>& adv,
                     const std::vector<const nn::Episode*>& elites, torch::Tensor& old,
                     const UpdateSettings& s) {
  LossParts out;
  std::vector<const nn::Episode*> eps;
  for (const auto& b : batch)
    if (!b.episode.steps.empty()) eps.push_back(&b.episode);
  out.pg = torch::zeros({});
  out.entropy = torch::zeros({});
  if (eps.size() != batch.size() || eps.empty()) return out;  // nothing decided (empty graph)
  const nn::StepTerms t = net_terms(agent, sel, prep, eps, s, s.temperature);
  const auto [w, e] = step_weights(batch, adv, sel, s);
  out.entropy = (t.entropy * e).sum();
  out.entropy_mean = out.entropy.item<double>();
  if (s.imitation) {  // Stage I: the teacher's log-mass, summed over the steps
    const double k = static_cast<double>(batch.size());
    out.pg = -t.teacher.sum() / k;
    out.entropy = t.entropy.sum() / k;
    return out;
  }
  if (!old.defined()) old = t.logp.detach();
  const auto ratio = (t.logp - old).exp();
  out.pg = -torch::min(ratio * w, ratio.clamp(1 - s.ppo_clip, 1 + s.ppo_clip) * w).sum();
  if (s.self_imitation > 0 && !elites.empty() && !s.joint) {
    const nn::StepTerms si = net_terms(agent, sel, prep, elites, s, 1.0);
    auto we = torch::empty({si.logp.size(0)});
    auto* pw = we.data_ptr<float>();
    int64_t i = 0;
    for (const nn::Episode* ep : elites)
      for (std::size_t j = 0; j < ep->steps.size(); ++j)
        pw[i++] = static_cast<float>(
            1.0 / (static_cast<double>(elites.size()) * static_cast<double>(ep->steps.size())));
    out.si = -(si.logp * we).sum();
  }
  return out;
}

double grad_norm_of(const torch::Tensor& term, const std::vector<torch::Tensor>& params) {
  if (!term.defined() || !term.requires_grad()) return 0.0;
  const auto grads = torch::autograd::grad({term}, params, {}, /*retain_graph=*/true,
                                           /*create_graph=*/false, /*allow_unused=*/true);
  double sq = 0;
  for (const auto& g : grads)
    if (g.defined()) sq += g.pow(2).sum().item<double>();
  return std::sqrt(sq);
}

// One pass for one network: loss, (norms), backward, clip, step.
bool step_network(nn::DualAgent& agent, bool sel, const nn::Prepared& prep, FusedAdam& opt,
                  const std::vector<nn::Sampled>& batch, const std::vector<double>& adv,
                  const std::vector<const nn::Episode*>& elites, torch::Tensor& old,
                  const UpdateSettings& s, bool measure, UpdateStats& st) {
  torch::nn::Module& net = sel ? static_cast<torch::nn::Module&>(*agent.sel)
                               : static_cast<torch::nn::Module&>(*agent.plc);
  const LossParts parts = batch_loss(agent, sel, prep, batch, adv, elites, old, s);
  auto loss = parts.pg - s.entropy * parts.entropy;
  if (parts.si.defined()) loss = loss + s.self_imitation * parts.si;
  const double value = loss.item<double>();
  (sel ? st.loss_sel : st.loss_plc) = value;
  (sel ? st.entropy_sel : st.entropy_plc) = parts.entropy_mean;
  if (!std::isfinite(value)) return false;
  if (measure && loss.requires_grad()) {
    const auto params = net.parameters();
    (sel ? st.pg_norm_sel : st.pg_norm_plc) = grad_norm_of(parts.pg, params);
    (sel ? st.entropy_norm_sel : st.entropy_norm_plc) =
        s.entropy * grad_norm_of(parts.entropy, params);
    if (parts.si.defined())
      (sel ? st.si_norm_sel : st.si_norm_plc) = s.self_imitation * grad_norm_of(parts.si, params);
  }
  if (!loss.requires_grad()) return true;  // nothing recorded (empty episodes)
  opt.zero_grad();
  loss.backward();
  if (s.grad_clip > 0) {
    const double norm = torch::nn::utils::clip_grad_norm_(net.parameters(), s.grad_clip);
    if (!std::isfinite(norm)) return false;
  }
  opt.step();
  return all_finite(net);
}

}  // namespace

torch::Tensor batch_objective(nn::DualAgent& agent, const nn::Prepared& prep,
                              const std::vector<nn::Sampled>& batch,
                              const std::vector<double>& advantages, const UpdateSettings& s,
                              UpdateStats& st) {
  torch::Tensor total = torch::zeros({});
  for (const bool sel : {true, false}) {
    if (sel ? !s.learn_sel : !s.learn_plc) continue;
    torch::Tensor old;  // the batch's own log-probabilities: ratio 1, the plain gradient
    const LossParts parts = batch_loss(agent, sel, prep, batch, advantages, {}, old, s);
    const auto loss = parts.pg - s.entropy * parts.entropy;
    (sel ? st.loss_sel : st.loss_plc) = loss.item<double>();
    (sel ? st.entropy_sel : st.entropy_plc) = parts.entropy_mean;
    total = total + loss;
  }
  return total;
}

UpdateStats update_networks(nn::DualAgent& agent, const nn::GraphTensors& gt,
                            const nn::Prepared& prep, FusedAdam& opt_sel, FusedAdam& opt_plc,
                            const std::vector<nn::Sampled>& batch,
                            const std::vector<double>& advantages,
                            const std::vector<const nn::Episode*>& elites,
                            const UpdateSettings& s) {
  UpdateStats st;
  torch::Tensor old_sel, old_plc;  // the rollouts' log-probabilities (PPO ratios)
  const int passes = s.imitation ? 1 : std::max(1, s.ppo_epochs);
  for (int pass = 0; pass < passes && st.ok; ++pass) {
    nn::Prepared again;
    if (pass > 0) again = agent.prepare(gt, /*grad=*/true, s.parallel);
    const nn::Prepared& p = pass == 0 ? prep : again;
    const bool measure = s.grad_norms && pass == 0;
    bool ok_sel = true, ok_plc = true;
    const auto run_sel = [&] {
      return step_network(agent, true, p, opt_sel, batch, advantages, elites, old_sel, s, measure,
                          st);
    };
    const auto run_plc = [&] {
      return step_network(agent, false, p, opt_plc, batch, advantages, elites, old_plc, s, measure,
                          st);
    };
    if (s.learn_sel && s.learn_plc && s.parallel) {
      auto f = std::async(std::launch::async, run_sel);
      ok_plc = run_plc();
      ok_sel = f.get();
    } else {
      if (s.learn_sel) ok_sel = run_sel();
      if (s.learn_plc) ok_plc = run_plc();
    }
    st.ok = ok_sel && ok_plc;
  }
  return st;
}

}  // namespace doppler::detail
