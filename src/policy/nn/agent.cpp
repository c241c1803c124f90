#include "policy/nn/agent.hpp"

#include <algorithm>
#include <future>
#include <limits>
#include <stdexcept>

namespace doppler::nn {

namespace {

std::vector<float> to_vector(const torch::Tensor& t) {
  const auto c = t.detach().contiguous().to(torch::kFloat);
  return std::vector<float>(c.data_ptr<float>(), c.data_ptr<float>() + c.numel());
}

// Log-probabilities [T, K] of masked scores [T, K] (mask false -> excluded), the recorded
// actions' terms, entropies and teacher log-masses.
StepTerms terms(const torch::Tensor& logits, const torch::Tensor& mask,
                const torch::Tensor& actions, const torch::Tensor& teacher_mask) {
  const auto neg_inf = -std::numeric_limits<float>::infinity();
  const auto logp = torch::log_softmax(logits.masked_fill(mask.logical_not(), neg_inf), 1);
  StepTerms out;
  out.logp = logp.gather(1, actions.unsqueeze(1)).squeeze(1);
  const auto safe = logp.masked_fill(mask.logical_not(), 0.0);
  out.entropy = -(safe.exp() * safe).sum(1);
  out.teacher = torch::logsumexp(logp.masked_fill(teacher_mask.logical_not(), neg_inf), 1);
  return out;
}

}  // namespace

NetConfig net_config(const PolicyConfig& c) {
  NetConfig n;
  n.hidden = c.hidden;
  n.edge_hidden = c.edge_hidden;
  n.steps = c.steps;
  n.mlp_hidden = c.mlp_hidden;
  n.max_levels = c.max_levels;
  n.node_features = node_feature_count(c.features);
  n.device_features = device_feature_count(c.features);
  return n;
}

DualAgent::DualAgent(const PolicyConfig& config) : config_(config) {
  const NetConfig nc = net_config(config);
  sel = SelNet(nc);
  plc = PlcNet(nc, /*with_paths=*/config.variant == PolicyVariant::joint);
}

Prepared DualAgent::prepare(const GraphTensors& g, bool grad, bool parallel) {
  Prepared p;
  const auto run_sel = [&] {
    torch::AutoGradMode mode(grad);
    p.sel_scores = sel->forward(g);
  };
  const auto run_plc = [&] {
    torch::AutoGradMode mode(grad);
    p.plc = plc->prepare(g);
  };
  const bool want_sel = learns_sel(), want_plc = learns_plc();
  if (parallel && want_sel && want_plc) {
    auto f = std::async(std::launch::async, run_sel);
    run_plc();
    f.get();
  } else {
    if (want_sel) run_sel();
    if (want_plc) run_plc();
  }
  EpisodeNets& n = p.nets;
  n.hidden = config_.hidden;
  n.mlp = config_.mlp_hidden;
  n.features = config_.features;
  n.unit = g.unit;
  if (g.x.size(1) != node_feature_count(config_.features))
    throw std::logic_error("prepare: graph tensors of another feature mode");
  if (want_sel) n.sel_score = to_vector(p.sel_scores);
  if (want_plc) {
    const int64_t hd = config_.hidden;
    n.h = to_vector(p.plc.h);
    n.node_pre = to_vector(p.plc.node);
    n.proj_y_wt = to_vector(plc->proj_y->weight.t().contiguous());
    n.proj_y_b = to_vector(plc->proj_y->bias);
    const auto w = plc->fc1->weight;
    n.fc1_y = to_vector(w.narrow(1, 0, hd));
    n.fc1_s = to_vector(w.narrow(1, plc->sum_offset(), hd));
    n.fc2_w = to_vector(plc->fc2->weight.view({-1}));
    n.fc2_b = plc->fc2->bias.item<float>();
  }
  return p;
}

StepTerms DualAgent::sel_terms(const Prepared& p, const Episode& ep, int num_nodes,
                               double temperature) {
  return sel_terms(p, std::vector<const Episode*>{&ep}, num_nodes, temperature);
}

StepTerms DualAgent::plc_terms(const Prepared& p, const Episode& ep, int devices,
                               double temperature) {
  return plc_terms(p, std::vector<const Episode*>{&ep}, devices, temperature);
}

StepTerms DualAgent::sel_terms(const Prepared& p, const std::vector<const Episode*>& eps,
                               int num_nodes, double temperature) {
  // Only the (step, candidate) pairs are scored: O(sum of candidate counts), not O(T x N).
  // Each step's softmax is shifted by its largest candidate score and the teacher mass by its
  // largest teacher score (constants taken from the forward values), so that no exp overflows
  // or underflows to an empty sum. The steps of all episodes are concatenated.
  int64_t t = 0, pairs = 0;
  for (const Episode* ep : eps)
    for (const Step& s : ep->steps) {
      pairs += static_cast<int64_t>(s.candidates.size());
      ++t;
    }
  const auto& score = p.nets.sel_score;  // forward values of p.sel_scores
  const auto inv_t = static_cast<float>(1.0 / temperature);
  auto cand = torch::empty({pairs}, torch::kLong), step_of = torch::empty({pairs}, torch::kLong);
  auto is_teacher = torch::zeros({pairs}, torch::kBool);
  auto chosen = torch::empty({t}, torch::kLong);
  auto shift = torch::empty({t}), teacher_shift = torch::empty({t});
  auto* pc = cand.data_ptr<int64_t>();
  auto* ps = step_of.data_ptr<int64_t>();
  auto* pt = is_teacher.data_ptr<bool>();
  auto* pa = chosen.data_ptr<int64_t>();
  auto* sh = shift.data_ptr<float>();
  auto* tsh = teacher_shift.data_ptr<float>();
  int64_t row = 0, i = 0;
  for (const Episode* ep : eps)
    for (const Step& s : ep->steps) {
      const auto teacher = [&](NodeId v) {
        return s.teacher_ops.empty() ? v == s.op
                                     : std::find(s.teacher_ops.begin(), s.teacher_ops.end(), v) !=
                                           s.teacher_ops.end();
      };
      float hi = -std::numeric_limits<float>::infinity(), thi = hi;
      pa[i] = -1;
      for (NodeId v : s.candidates) {
        if (v < 0 || v >= num_nodes) throw std::logic_error("sel_terms: candidate out of range");
        const float x = score[static_cast<std::size_t>(v)] * inv_t;
        pc[row] = v;
        ps[row] = i;
        pt[row] = teacher(v);
        if (v == s.op) pa[i] = row;
        hi = std::max(hi, x);
        if (pt[row]) thi = std::max(thi, x);
        ++row;
      }
      if (pa[i] < 0) throw std::logic_error("sel_terms: the chosen op is not a candidate");
      sh[i] = hi;
      tsh[i] = thi;
      ++i;
    }
  const auto x = p.sel_scores.index_select(0, cand) * inv_t;                    // [pairs]
  const auto e = (x - shift.index_select(0, step_of)).exp();                    // <= 1, max term 1
  const auto log_z = torch::zeros({t}).index_add(0, step_of, e).log() + shift;  // [T]
  const auto logp = x - log_z.index_select(0, step_of);                         // [pairs]
  StepTerms out;
  out.logp = logp.index_select(0, chosen);
  out.entropy = torch::zeros({t}).index_add(0, step_of, -(logp.exp() * logp));
  // Non-teacher terms are masked before the exp: their scores may exceed the teacher's largest
  // by more than a float's exp range (a confident policy), and inf x 0 would be NaN.
  const auto te =
      (x - teacher_shift.index_select(0, step_of))
          .masked_fill(is_teacher.logical_not(), -std::numeric_limits<float>::infinity())
          .exp();
  out.teacher = torch::zeros({t}).index_add(0, step_of, te).log() + teacher_shift - log_z;
  return out;
}

StepTerms DualAgent::plc_terms(const Prepared& p, const std::vector<const Episode*>& eps,
                               int devices, double temperature) {
  int64_t t = 0;
  for (const Episode* ep : eps) t += static_cast<int64_t>(ep->steps.size());
  const int dc = device_feature_count(config_.features);
  auto y = torch::empty({t, devices, dc});
  auto ops = torch::empty({t}, torch::kLong);
  auto actions = torch::empty({t}, torch::kLong);
  auto onehot = torch::zeros({t, devices});
  auto teacher = torch::zeros({t, devices}, torch::kBool);
  auto first = torch::empty({t}, torch::kLong);  // row of each step's episode start
  auto* py = y.data_ptr<float>();
  auto* po = ops.data_ptr<int64_t>();
  auto* pa = actions.data_ptr<int64_t>();
  auto* ph = onehot.data_ptr<float>();
  auto* pt = teacher.data_ptr<bool>();
  auto* pf = first.data_ptr<int64_t>();
  int64_t i = 0;
  for (const Episode* ep : eps) {
    const int64_t start = i;
    for (const Step& s : ep->steps) {
      std::copy(s.y.begin(), s.y.end(), py + i * devices * dc);
      po[i] = s.op;
      pa[i] = s.device;
      ph[i * devices + s.device] = 1.0f;
      for (DeviceId d : s.teacher_devices) pt[i * devices + d] = true;
      if (s.teacher_devices.empty()) pt[i * devices + s.device] = true;
      pf[i] = start;
      ++i;
    }
  }
  const int64_t hd = config_.hidden;
  if (!exact_sum_gradient) {  // the recorded z-scored sums as a constant state
    auto ns = torch::empty({t, devices, hd});
    auto* pn = ns.data_ptr<float>();
    for (const Episode* ep : eps)
      for (const Step& s : ep->steps) {
        if (static_cast<int64_t>(s.ns.size()) != devices * hd)
          throw std::logic_error("plc_terms: a step without recorded device sums");
        pn = std::copy(s.ns.begin(), s.ns.end(), pn);
      }
    const auto scores = plc->score_normalised(p.plc, y, ops, ns) / temperature;
    return terms(scores, torch::ones({t, devices}, torch::kBool), actions, teacher);
  }
  // Device sums before each step: exclusive cumulative sum of the placed ops' embeddings within
  // the step's episode (the running sum minus its value at the episode's start).
  const auto contrib =
      onehot.unsqueeze(2) * p.plc.h.index_select(0, ops).unsqueeze(1);  // [T, P, H]
  const auto running = contrib.cumsum(0);
  const auto prefix = torch::cat({torch::zeros_like(running.narrow(0, 0, 1)), running});
  const auto sums = running - contrib - prefix.index_select(0, first);
  const auto scores = plc->score(p.plc, y, ops, sums) / temperature;
  return terms(scores, torch::ones({t, devices}, torch::kBool), actions, teacher);
}

StepTerms DualAgent::joint_terms(const Prepared& p, const Episode& ep, int devices,
                                 double temperature) {
  const auto t = static_cast<int64_t>(ep.steps.size());
  int64_t pairs = 0, widest = 0;
  for (const Step& s : ep.steps) {
    pairs += static_cast<int64_t>(s.candidates.size());
    widest = std::max<int64_t>(widest, static_cast<int64_t>(s.candidates.size()) * devices);
  }
  // One row per (step, candidate): its device features, op and step.
  const int dc = device_feature_count(config_.features);
  auto y = torch::empty({pairs, devices, dc});
  auto ops = torch::empty({pairs}, torch::kLong), step_of = torch::empty({pairs}, torch::kLong);
  auto chosen = torch::empty({t}, torch::kLong);
  auto onehot = torch::zeros({t, devices});
  // Position of every step's pair slots in the flat scores (pad: one extra -inf slot).
  auto index = torch::full({t, widest}, pairs * devices, torch::kLong);
  auto teacher = torch::zeros({t, widest}, torch::kBool);
  auto* py = y.data_ptr<float>();
  int64_t row = 0;
  for (int64_t i = 0; i < t; ++i) {
    const Step& s = ep.steps[static_cast<std::size_t>(i)];
    std::copy(s.joint_y.begin(), s.joint_y.end(), py + row * devices * dc);
    for (std::size_t c = 0; c < s.candidates.size(); ++c) {
      ops[row + static_cast<int64_t>(c)] = s.candidates[c];
      step_of[row + static_cast<int64_t>(c)] = i;
      for (int d = 0; d < devices; ++d)
        index[i][static_cast<int64_t>(c) * devices + d] =
            (row + static_cast<int64_t>(c)) * devices + d;
    }
    for (int k : s.joint_teacher) teacher[i][k] = true;
    if (s.joint_teacher.empty()) teacher[i][s.joint_index] = true;
    chosen[i] = s.joint_index;
    onehot[i][s.device] = 1.0f;
    row += static_cast<int64_t>(s.candidates.size());
  }
  auto step_ops = torch::empty({t}, torch::kLong);
  for (int64_t i = 0; i < t; ++i) step_ops[i] = ep.steps[static_cast<std::size_t>(i)].op;
  const auto contrib = onehot.unsqueeze(2) * p.plc.h.index_select(0, step_ops).unsqueeze(1);
  const auto sums = (contrib.cumsum(0) - contrib).index_select(0, step_of);  // [pairs, P, H]
  const auto scores = (plc->score(p.plc, y, ops, sums) / temperature).reshape({-1});
  const auto padded =
      torch::cat({scores, torch::full({1}, -std::numeric_limits<float>::infinity())});
  const auto logits = padded.index_select(0, index.view({-1})).view({t, widest});
  return terms(logits, index != pairs * devices, chosen, teacher);
}

}  // namespace doppler::nn
