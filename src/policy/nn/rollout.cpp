#include "policy/nn/rollout.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#include <cblas.h>

#include "doppler/heuristics/critical_path.hpp"
#include "doppler/heuristics/list_schedule.hpp"
#include "doppler/policy/features.hpp"
#include "doppler/util/error.hpp"

namespace doppler::nn {

namespace {

// Leaky ReLU, slope 0.1.
float leaky(float x) {
  return x > 0 ? x : 0.1f * x;
}

// Four floats (GCC vector extension): each lane does the scalar arithmetic of its own element.
using V4 = float __attribute__((vector_size(16)));

V4 load4(const float* x) {
  V4 v;
  std::memcpy(&v, x, sizeof v);
  return v;
}

// leaky() of each of x[0..n), four at a time (a compare and a select instead of a branch per
// element, which GCC does not vectorise by itself under trapping math); same values.
void leaky_inplace(float* x, std::size_t n) {
  std::size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const V4 v = load4(x + i);
    const V4 r = v > 0 ? v : v * 0.1f;
    std::memcpy(x + i, &r, sizeof r);
  }
  for (; i < n; ++i) x[i] = leaky(x[i]);
}

// Index of the largest value (first one on ties).
std::size_t argmax(const std::vector<double>& p) {
  return static_cast<std::size_t>(std::max_element(p.begin(), p.end()) - p.begin());
}

// softmax(scores / temperature) restricted to idx.
std::vector<double> tempered_softmax(const std::vector<float>& scores,
                                     const std::vector<NodeId>& idx, double temperature) {
  if (temperature == 1.0) return masked_softmax(scores, idx);
  std::vector<float> scaled(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i)
    scaled[i] = static_cast<float>(scores[i] / temperature);
  return masked_softmax(scaled, idx);
}

// An action from `probs` and its behaviour probability: with probability epsilon uniform, else
// the policy's sample (or its argmax when `greedy`).
std::size_t choose(const std::vector<double>& probs, const RolloutOptions& o, bool greedy,
                   std::mt19937_64& rng, float& behaviour) {
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const auto n = static_cast<double>(probs.size());
  std::size_t i = 0;
  if (o.epsilon > 0 && unit(rng) < o.epsilon) {
    i = std::uniform_int_distribution<std::size_t>(0, probs.size() - 1)(rng);
  } else if (greedy) {
    i = argmax(probs);
  } else {
    double r = unit(rng), acc = 0;
    i = probs.size() - 1;
    for (std::size_t k = 0; k < probs.size(); ++k) {
      acc += probs[k];
      if (r < acc) {
        i = k;
        break;
      }
    }
  }
  const double target = greedy ? (i == argmax(probs) ? 1.0 : 0.0) : probs[i];
  behaviour = static_cast<float>(o.epsilon / n + (1 - o.epsilon) * target);
  return i;
}

// Appends `id` to the tied minima `out` (value `best`) of a minimisation over ids.
template <class Id>
void keep_tied_minimum(std::vector<Id>& out, double& best, Id id, double value) {
  const double tol = kTieTolerance * std::max(1.0, std::abs(best));
  if (out.empty() || value < best - tol) {
    out.assign(1, id);
    best = value;
  } else if (value <= best + tol) {
    out.push_back(id);
  }
}

// The teacher's tied best candidates of `s`.
std::vector<NodeId> teacher_selections(const ListSchedule& s, const std::vector<double>& bl,
                                       Teacher t) {
  if (t != Teacher::etf) return critical_path_selections(s, bl);
  // ETF: the candidates whose earliest start over the devices is smallest.
  std::vector<NodeId> out;
  double best = 0;
  for (NodeId v : s.candidates()) {
    double est = s.earliest_start(v, 0);
    for (DeviceId d = 1; d < s.devices(); ++d) est = std::min(est, s.earliest_start(v, d));
    keep_tied_minimum(out, best, v, est);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The teacher's tied best devices for v.
std::vector<DeviceId> teacher_devices(const ListSchedule& s, NodeId v, Teacher t) {
  if (t != Teacher::heft) return critical_path_devices(s, v);
  std::vector<DeviceId> out;
  double best = 0;
  for (DeviceId d = 0; d < s.devices(); ++d)
    keep_tied_minimum(out, best, d, s.earliest_finish(v, d));
  return out;
}

// Index of the expert's action `a` among `actions`; the step's behaviour probability is 1.
std::size_t expert_index(const std::vector<NodeId>& actions, NodeId a, float& behaviour) {
  behaviour = 1;
  return static_cast<std::size_t>(std::find(actions.begin(), actions.end(), a) - actions.begin());
}

// The expert's device for v, relabelled onto the rollout's devices when they are interchangeable.
std::vector<DeviceId> expert_devices(const ExpertLabel& e, const Relabelling& r, NodeId v) {
  const DeviceId label = e.device_of[static_cast<std::size_t>(v)];
  return e.relabel ? r.targets(label) : std::vector<DeviceId>{label};
}

}  // namespace

std::string teacher_name(Teacher t) {
  switch (t) {
    case Teacher::critical_path:
      return "critical-path";
    case Teacher::etf:
      return "etf";
    case Teacher::heft:
      return "heft";
  }
  return "critical-path";
}

Teacher parse_teacher(const std::string& name) {
  if (name == "critical-path") return Teacher::critical_path;
  if (name == "etf") return Teacher::etf;
  if (name == "heft") return Teacher::heft;
  throw InputError("unknown teacher '" + name + "' (expected critical-path, etf or heft)");
}

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
    normalise_device_features(y, p, nets.features, nets.unit);
    st.joint_y.insert(st.joint_y.end(), y.begin(), y.end());
  }
  std::vector<NodeId> all(static_cast<std::size_t>(c * p));
  for (int i = 0; i < c * p; ++i) all[static_cast<std::size_t>(i)] = i;
  const auto probs = tempered_softmax(scores, all, o.temperature);
  const std::size_t i = choose(probs, o, o.mode == ActionMode::greedy, rng, st.sel_behaviour);
  st.plc_behaviour = 1;
  st.joint_index = static_cast<int>(i);
  st.op = st.candidates[i / static_cast<std::size_t>(p)];
  st.device = static_cast<DeviceId>(i % static_cast<std::size_t>(p));
  st.sel_prob = static_cast<float>(probs[i]);
  for (std::size_t k = 0; k < st.candidates.size(); ++k)
    if (std::find(st.teacher_ops.begin(), st.teacher_ops.end(), st.candidates[k]) !=
        st.teacher_ops.end())
      for (DeviceId d : teacher_devices(s, st.candidates[k], o.teacher_kind))
        st.joint_teacher.push_back(static_cast<int>(k) * p + d);
  const auto best = static_cast<int>(argmax(probs));
  st.sel_greedy_match = st.plc_greedy_match =
      std::find(st.joint_teacher.begin(), st.joint_teacher.end(), best) != st.joint_teacher.end();
  st.teacher_devices = teacher_devices(s, st.op, o.teacher_kind);
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

namespace {

// z-scored device sums into `ns` (the arithmetic of zscore_device_sums, per column in device
// order; rows outer so that the loops run over contiguous memory).
void zscore_device_sums_into(const std::vector<double>& s, int p, int hd, std::vector<float>& ns,
                             std::vector<double>& mean, std::vector<double>& var) {
  const auto h = static_cast<std::size_t>(hd);
  ns.resize(static_cast<std::size_t>(p) * h);
  mean.assign(h, 0.0);
  var.assign(h, 0.0);
  for (int d = 0; d < p; ++d) {
    const double* row = &s[static_cast<std::size_t>(d) * h];
    for (std::size_t j = 0; j < h; ++j) mean[j] += row[j];
  }
  for (double& m : mean) m /= p;
  for (int d = 0; d < p; ++d) {
    const double* row = &s[static_cast<std::size_t>(d) * h];
    for (std::size_t j = 0; j < h; ++j) {
      const double x = row[j] - mean[j];
      var[j] += x * x;
    }
  }
  for (double& v : var) v = std::sqrt(v / p) + 1e-6;  // the std + 1e-6
  for (int d = 0; d < p; ++d) {
    const double* row = &s[static_cast<std::size_t>(d) * h];
    float* out = &ns[static_cast<std::size_t>(d) * h];
    for (std::size_t j = 0; j < h; ++j) out[j] = static_cast<float>((row[j] - mean[j]) / var[j]);
  }
}

// py[d, :] = leaky(proj_y_b + proj_y_wt^T y_d) for every device: per output the bias, then the
// products in feature order (the arithmetic of a dot product per (d, j)), run over j in the
// inner loop so that it vectorises.
void project_device_features(const EpisodeNets& nets, const std::vector<float>& y, int p, int dc,
                             std::vector<float>& py) {
  // Each lane sums one output in the scalar order; 16 outputs stay in registers across the
  // feature loop.
  constexpr std::size_t kVecs = 4, kBlock = 4 * kVecs;
  const auto hd = static_cast<std::size_t>(nets.hidden);
  py.resize(static_cast<std::size_t>(p) * hd);
  for (int d = 0; d < p; ++d) {
    float* out = &py[static_cast<std::size_t>(d) * hd];
    const float* yd = &y[static_cast<std::size_t>(d * dc)];
    std::size_t j0 = 0;
    for (; j0 + kBlock <= hd; j0 += kBlock) {
      V4 acc[kVecs];
      for (std::size_t i = 0; i < kVecs; ++i) acc[i] = load4(&nets.proj_y_b[j0 + 4 * i]);
      for (int k = 0; k < dc; ++k) {
        const float* wk = &nets.proj_y_wt[static_cast<std::size_t>(k) * hd + j0];
        const float yk = yd[k];
        for (std::size_t i = 0; i < kVecs; ++i) acc[i] += load4(wk + 4 * i) * yk;
      }
      std::memcpy(out + j0, acc, sizeof acc);
    }
    for (std::size_t j = j0; j < hd; ++j) {  // a tail when H is not a multiple of the block
      float a = nets.proj_y_b[j];
      for (int k = 0; k < dc; ++k)
        a += nets.proj_y_wt[static_cast<std::size_t>(k) * hd + j] * yd[k];
      out[j] = a;
    }
    leaky_inplace(out, hd);
  }
}

// out[d] = fc2_b + sum_i fc2_w[i] leaky(pre[d, i]), summed in i order per device (pre is left
// holding the leaky values); eight devices at a time so that their sums overlap instead of
// waiting on one another.
void score_devices(const EpisodeNets& nets, std::vector<float>& pre, int p,
                   std::vector<float>& out) {
  leaky_inplace(pre.data(), pre.size());
  constexpr int kLanes = 8;
  const auto m = static_cast<std::size_t>(nets.mlp);
  out.resize(static_cast<std::size_t>(p));
  for (int d0 = 0; d0 < p; d0 += kLanes) {
    const int lanes = std::min(kLanes, p - d0);
    float acc[kLanes];
    for (int l = 0; l < lanes; ++l) acc[l] = nets.fc2_b;
    for (std::size_t i = 0; i < m; ++i) {
      const float wi = nets.fc2_w[i];
      for (int l = 0; l < lanes; ++l) acc[l] += wi * pre[static_cast<std::size_t>(d0 + l) * m + i];
    }
    for (int l = 0; l < lanes; ++l) out[static_cast<std::size_t>(d0 + l)] = acc[l];
  }
}

}  // namespace

std::vector<float> zscore_device_sums(const std::vector<double>& s, int p, int hd) {
  // Over devices, population std, + 1e-6, as the batched network does.
  PlcScratch w;
  zscore_device_sums_into(s, p, hd, w.ns, w.mean, w.var);
  return std::move(w.ns);
}

void refresh_device_sums(Episode& ep, const EpisodeNets& nets, int p) {
  const int hd = nets.hidden;
  std::vector<double> sums(static_cast<std::size_t>(p * hd), 0.0);
  for (Step& st : ep.steps) {
    st.ns = zscore_device_sums(sums, p, hd);
    for (int j = 0; j < hd; ++j)
      sums[static_cast<std::size_t>(st.device * hd + j)] +=
          nets.h[static_cast<std::size_t>(st.op) * static_cast<std::size_t>(hd) +
                 static_cast<std::size_t>(j)];
  }
}

const std::vector<float>& plc_scores_into(const EpisodeNets& nets, NodeId v,
                                          const std::vector<float>& y, const std::vector<double>& s,
                                          int p, PlcScratch& w) {
  const int hd = nets.hidden, m = nets.mlp;
  const int dc = device_feature_count(nets.features);
  zscore_device_sums_into(s, p, hd, w.ns, w.mean, w.var);
  // First layer over the devices in two small GEMMs (OpenBLAS):
  // pre[d, :] = node_pre[v, :] + py[d, :] fc1_y^T + ns[d, :] fc1_s^T, py = leaky(proj_y(y_d)).
  project_device_features(nets, y, p, dc, w.py);
  const float* node = &nets.node_pre[static_cast<std::size_t>(v) * static_cast<std::size_t>(m)];
  w.pre.resize(static_cast<std::size_t>(p * m));
  for (int d = 0; d < p; ++d) std::copy(node, node + m, w.pre.begin() + d * m);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p, m, hd, 1.0f, w.py.data(), hd,
              nets.fc1_y.data(), hd, 1.0f, w.pre.data(), m);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, p, m, hd, 1.0f, w.ns.data(), hd,
              nets.fc1_s.data(), hd, 1.0f, w.pre.data(), m);
  score_devices(nets, w.pre, p, w.out);
  return w.out;
}

std::vector<float> plc_scores(const EpisodeNets& nets, NodeId v, std::vector<float> y,
                              const std::vector<double>& s, int p, std::vector<float>* ns_out) {
  normalise_device_features(y, p, nets.features, nets.unit);
  PlcScratch w;
  std::vector<float> out = plc_scores_into(nets, v, y, s, p, w);
  if (ns_out) *ns_out = std::move(w.ns);
  return out;
}

Episode rollout(const Problem& problem, const PolicyConfig& config, const EpisodeNets& nets,
                const RolloutOptions& o, std::mt19937_64& rng) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  const int hd = nets.hidden;
  ListSchedule s(g, problem.cost(), p, config.defer_inputs);
  const auto& bl = problem.analysis().b_level();  // also HEFT's upward rank (mean costs)
  Episode ep;
  std::vector<double> sums(static_cast<std::size_t>(p * std::max(hd, 1)), 0.0);
  std::vector<NodeId> devs(static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) devs[static_cast<std::size_t>(d)] = d;
  Relabelling relabelling(p);
  PlcScratch scratch;
  while (!s.done()) {
    Step st;
    st.candidates = s.candidates();
    std::sort(st.candidates.begin(), st.candidates.end());
    if (o.expert)
      st.teacher_ops = expert_selections(*o.expert, st.candidates);
    else if (o.teacher || !o.learned_sel)
      st.teacher_ops = teacher_selections(s, bl, o.teacher_kind);
    if (o.joint) {
      joint_step(s, nets, st, sums, o, rng);
      s.place(st.op, st.device);
      ep.steps.push_back(std::move(st));
      continue;
    }
    // The expert takes this step (DAgger's mixture): its first tied op and device.
    const bool follow = o.expert && o.expert_mix > 0 &&
                        std::uniform_real_distribution<double>(0.0, 1.0)(rng) < o.expert_mix;
    // SEL
    if (o.learned_sel) {
      const auto probs = tempered_softmax(nets.sel_score, st.candidates, o.temperature);
      const bool greedy = o.greedy_sel || o.mode == ActionMode::greedy;
      const std::size_t i =
          follow ? expert_index(st.candidates, st.teacher_ops.front(), st.sel_behaviour)
                 : choose(probs, o, greedy, rng, st.sel_behaviour);
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
    auto y = device_features(s, st.op);
    if (o.expert)
      st.teacher_devices = expert_devices(*o.expert, relabelling, st.op);
    else if (o.teacher || !o.learned_plc)
      st.teacher_devices = teacher_devices(s, st.op, o.teacher_kind);
    if (o.learned_plc) {
      normalise_device_features(y, p, nets.features, nets.unit);
      const auto& scores = plc_scores_into(nets, st.op, y, sums, p, scratch);
      if (o.record_states) {
        st.ns = scratch.ns;
        st.y = std::move(y);
      }
      const auto probs = tempered_softmax(scores, devs, o.temperature);
      const std::size_t i =
          follow ? expert_index(devs, st.teacher_devices.front(), st.plc_behaviour)
                 : choose(probs, o, o.mode == ActionMode::greedy, rng, st.plc_behaviour);
      if (o.record_plc_probs) st.plc_probs.assign(probs.begin(), probs.end());
      st.device = static_cast<DeviceId>(i);
      st.plc_prob = static_cast<float>(probs[i]);
      const auto best = static_cast<DeviceId>(argmax(probs));
      st.plc_greedy_match = std::find(st.teacher_devices.begin(), st.teacher_devices.end(), best) !=
                            st.teacher_devices.end();
      for (int j = 0; j < hd; ++j)
        sums[static_cast<std::size_t>(st.device * hd + j)] +=
            nets.h[static_cast<std::size_t>(st.op) * static_cast<std::size_t>(hd) +
                   static_cast<std::size_t>(j)];
    } else {
      st.device = st.teacher_devices.front();
      st.plc_greedy_match = true;
    }
    if (o.expert)
      relabelling.record(o.expert->device_of[static_cast<std::size_t>(st.op)], st.device);
    s.place(st.op, st.device);
    ep.steps.push_back(std::move(st));
  }
  ep.assignment = {p, s.device_of(), s.order(), ""};
  ep.estimate = s.makespan();
  return ep;
}

Episode replay(const Problem& problem, const PolicyConfig& config, const Assignment& a,
               Teacher teacher) {
  const Graph& g = problem.graph();
  const int p = problem.devices();
  ListSchedule s(g, problem.cost(), p, config.defer_inputs);
  const auto& bl = problem.analysis().b_level();
  const double unit =
      config.features == FeatureMode::scaled ? feature_unit(g, problem.cost()) : 1.0;
  Episode ep;
  for (NodeId v : a.order) {
    if (s.device(v) >= 0) continue;  // a deferred input, placed with its consumer
    if (!s.is_candidate(v)) {
      if (config.defer_inputs && g.node(v).kind == OpKind::input && !g.successors(v).empty())
        continue;
      throw std::logic_error("replay: the assignment's order is not a selection order");
    }
    Step st;
    st.candidates = s.candidates();
    std::sort(st.candidates.begin(), st.candidates.end());
    st.teacher_ops = teacher_selections(s, bl, teacher);
    st.op = v;
    st.device = a.device_of[static_cast<std::size_t>(v)];
    st.teacher_devices = teacher_devices(s, v, teacher);
    st.y = device_features(s, v);
    normalise_device_features(st.y, p, config.features, unit);
    s.place(v, st.device);
    ep.steps.push_back(std::move(st));
  }
  if (!s.done()) throw std::logic_error("replay: the assignment's order misses ops");
  ep.assignment = {p, s.device_of(), s.order(), ""};
  ep.estimate = s.makespan();
  return ep;
}

}  // namespace doppler::nn
