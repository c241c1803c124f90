#include "policy/nn/rollout.hpp"

#include <algorithm>
#include <cmath>

#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/policy/features.hpp"

namespace doppler::nn {

namespace {

float leaky(float x) {
  return x > 0 ? x : 0.1f * x;
}

// Index of the largest value (first one on ties).
std::size_t argmax(const std::vector<double>& p) {
  return static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

std::size_t choose(const std::vector<double>& probs, const RolloutOptions& o,
                   std::mt19937_64& rng) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  if (o.epsilon > 0 && unit(rng) < o.epsilon)
    return std::uniform_int_distribution<std::size_t>(0, probs.size() - 1)(rng);
  if (o.mode == ActionMode::greedy) return argmax(probs);
  double r = unit(rng), acc = 0;
  for (std::size_t i = 0; i < probs.size(); ++i) {
    acc += probs[i];
    if (r < acc) return i;
  }
  return probs.size() - 1;
}

}  // namespace

void joint_step(const ListSchedule& s, const EpisodeNets& nets, Step& st, std::vector<double>& sums,
                const RolloutOptions& o, std::mt19937_64& rng) {
  const int p = s.devices(), hd = nets.hidden;
  const auto c = static_cast<int>(st.candidates.size());
  std::vector<float> scores;
  scores.reserve(static_cast<std::size_t>(c * p));
  for (NodeId v : st.candidates) {
    auto y = device_features(s, v);
    const auto sc = plc_scores(nets, v, y, sums, p);
    scores.insert(scores.end(), sc.begin(), sc.end());
    zscore_columns(y, p, kDeviceFeatures);
    st.joint_y.insert(st.joint_y.end(), y.begin(), y.end());
  }
  std::vector<NodeId> all(static_cast<std::size_t>(c * p));
  for (int i = 0; i < c * p; ++i) all[static_cast<std::size_t>(i)] = i;
  const auto probs = masked_softmax(scores, all);
  const std::size_t i = choose(probs, o, rng);
  st.joint_index = static_cast<int>(i);
  st.op = st.candidates[i / static_cast<std::size_t>(p)];
  st.device = static_cast<DeviceId>(i % static_cast<std::size_t>(p));
  st.sel_prob = static_cast<float>(probs[i]);
  for (std::size_t k = 0; k < st.candidates.size(); ++k)
    if (std::find(st.teacher_ops.begin(), st.teacher_ops.end(), st.candidates[k]) !=
        st.teacher_ops.end())
      for (DeviceId d : critical_path_devices(s, st.candidates[k]))
        st.joint_teacher.push_back(static_cast<int>(k) * p + d);
  const auto best = static_cast<int>(argmax(probs));
  st.sel_greedy_match = st.plc_greedy_match =
      std::find(st.joint_teacher.begin(), st.joint_teacher.end(), best) != st.joint_teacher.end();
  st.teacher_devices = critical_path_devices(s, st.op);
  for (int j = 0; j < hd; ++j)
    sums[static_cast<std::size_t>(st.device * hd + j)] +=
        nets.h[static_cast<std::size_t>(st.op) * static_cast<std::size_t>(hd) +
               static_cast<std::size_t>(j)];
}

std::vector<double> masked_softmax(const std::vector<float>& scores,
                                   const std::vector<NodeId>& idx) {
  std::vector<double> p(idx.size());
  double hi = -1e300;
  for (NodeId v : idx) hi = std::max(hi, static_cast<double>(scores[static_cast<std::size_t>(v)]));
  double sum = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) {
    p[i] = std::exp(static_cast<double>(scores[static_cast<std::size_t>(idx[i])]) - hi);
    sum += p[i];
  }
  for (double& x : p) x /= sum;
  return p;
}

std::vector<float> plc_scores(const EpisodeNets& nets, NodeId v, std::vector<float> y,
                              const std::vector<double>& s, int p) {
  const int hd = nets.hidden, m = nets.mlp;
  zscore_columns(y, p, kDeviceFeatures);
  // z-score the device sums over devices (population std, + 1e-6), as the batched network does.
  std::vector<float> ns(static_cast<std::size_t>(p * hd));
  for (int j = 0; j < hd; ++j) {
    double mean = 0, var = 0;
    for (int d = 0; d < p; ++d) mean += s[static_cast<std::size_t>(d * hd + j)];
    mean /= p;
    for (int d = 0; d < p; ++d) {
      const double x = s[static_cast<std::size_t>(d * hd + j)] - mean;
      var += x * x;
    }
    const double sd = std::sqrt(var / p) + 1e-6;
    for (int d = 0; d < p; ++d)
      ns[static_cast<std::size_t>(d * hd + j)] =
          static_cast<float>((s[static_cast<std::size_t>(d * hd + j)] - mean) / sd);
  }
  std::vector<float> out(static_cast<std::size_t>(p));
  std::vector<float> py(static_cast<std::size_t>(hd));
  const float* node = &nets.node_pre[static_cast<std::size_t>(v) * static_cast<std::size_t>(m)];
  for (int d = 0; d < p; ++d) {
    const float* yd = &y[static_cast<std::size_t>(d * kDeviceFeatures)];
    for (int j = 0; j < hd; ++j) {
      const float* w = &nets.proj_y_w[static_cast<std::size_t>(j * kDeviceFeatures)];
      float a = nets.proj_y_b[static_cast<std::size_t>(j)];
      for (int k = 0; k < kDeviceFeatures; ++k) a += w[k] * yd[k];
      py[static_cast<std::size_t>(j)] = leaky(a);
    }
    const float* sd = &ns[static_cast<std::size_t>(d * hd)];
    float score = nets.fc2_b;
    for (int i = 0; i < m; ++i) {
      const float* wy = &nets.fc1_y[static_cast<std::size_t>(i * hd)];
      const float* ws = &nets.fc1_s[static_cast<std::size_t>(i * hd)];
      float a = node[i];
      for (int j = 0; j < hd; ++j) a += wy[j] * py[static_cast<std::size_t>(j)] + ws[j] * sd[j];
      score += nets.fc2_w[static_cast<std::size_t>(i)] * leaky(a);
    }
    out[static_cast<std::size_t>(d)] = score;
  }
  return out;
}

Episode rollout(const Problem& problem, const PolicyConfig& config, const EpisodeNets& nets,
                const RolloutOptions& o, std::mt19937_64& rng) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const int hd = nets.hidden;
  ListSchedule s(g, problem.cost(), p, config.defer_inputs);
  const auto& bl = problem.analysis().b_level();
  Episode ep;
  std::vector<double> sums(static_cast<std::size_t>(p * std::max(hd, 1)), 0.0);
  std::vector<NodeId> devs(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) devs[static_cast<std::size_t>(d)] = d;
  while (!s.done()) {
    Step st;
    st.candidates = s.candidates();
    std::sort(st.candidates.begin(), st.candidates.end());
    if (o.teacher || !o.learned_sel) st.teacher_ops = critical_path_selections(s, bl);
    if (o.joint) {
      joint_step(s, nets, st, sums, o, rng);
      s.place(st.op, st.device);
      ep.steps.push_back(std::move(st));
      continue;
    }
    // SEL
    if (o.learned_sel) {
      const auto probs = masked_softmax(nets.sel_score, st.candidates);
      const std::size_t i = choose(probs, o, rng);
      st.op = st.candidates[i];
      st.sel_prob = static_cast<float>(probs[i]);
      const NodeId best = st.candidates[argmax(probs)];
      st.sel_greedy_match =
          std::find(st.teacher_ops.begin(), st.teacher_ops.end(), best) != st.teacher_ops.end();
    } else {
      st.op = st.teacher_ops.front();
      st.sel_greedy_match = true;
    }
    // PLC
    const auto y = device_features(s, st.op);
    if (o.teacher || !o.learned_plc) st.teacher_devices = critical_path_devices(s, st.op);
    if (o.learned_plc) {
      const auto scores = plc_scores(nets, st.op, y, sums, p);
      const auto probs = masked_softmax(scores, devs);
      const std::size_t i = choose(probs, o, rng);
      st.device = static_cast<DeviceId>(i);
      st.plc_prob = static_cast<float>(probs[i]);
      const auto best = static_cast<DeviceId>(argmax(probs));
      st.plc_greedy_match = std::find(st.teacher_devices.begin(), st.teacher_devices.end(), best) !=
                            st.teacher_devices.end();
      st.y = y;
      zscore_columns(st.y, p, kDeviceFeatures);
      for (int j = 0; j < hd; ++j)
        sums[static_cast<std::size_t>(st.device * hd + j)] +=
            nets.h[static_cast<std::size_t>(st.op) * static_cast<std::size_t>(hd) +
                   static_cast<std::size_t>(j)];
    } else {
      st.device = st.teacher_devices.front();
      st.plc_greedy_match = true;
    }
    s.place(st.op, st.device);
    ep.steps.push_back(std::move(st));
  }
  ep.assignment = {p, s.device_of(), s.order(), ""};
  ep.estimate = s.makespan();
  return ep;
}

}  // namespace doppler::nn
