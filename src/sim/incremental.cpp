#include "doppler/sim/incremental.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sim_run.hpp"

#include "doppler/util/error.hpp"

namespace doppler {

// One run's results: finish times of the ops it started, those ops, and its checkpoints.
struct RunRecord {
  std::vector<double> finish;
  std::vector<NodeId> started;
  std::vector<detail::SimState> saves;
  std::size_t n_saves = 0;
};

struct IncrementalSim::Impl {
  const Simulator& sim;
  int checkpoints;
  std::size_t n, p;
  SimWorkspace ws;
  // The base: assignment, makespan, per-op finish, checkpoints, ops and work per device.
  std::vector<DeviceId> base;
  double base_ms = 0;
  bool has_base = false;
  std::vector<double> finish;
  std::vector<detail::SimState> ckpts;
  std::size_t n_ckpts = 0;
  std::vector<int> base_ops;
  std::vector<double> base_work;
  // The last candidate: its moved ops with their new devices, its loads, how many base
  // checkpoints it kept, whether it ran to the end, and what it recorded.
  std::vector<std::pair<NodeId, DeviceId>> moved;
  std::vector<int> mark;  // stamp per op, to count repeated ops in `changed` once
  int stamp = 0;
  std::vector<int> loads_ops;
  std::vector<double> loads_work;
  std::size_t cand_kept = 0;
  std::ptrdiff_t cand_met = -1;  // the base checkpoint whose state the last run met (-1: none)
  bool cand_complete = false;
  double cand_ms = 0;
  double base_sum = 0, cand_sum = 0;  // sums of op finish times (cand_sum: of the last run)
  RunRecord rec;
  detail::ResumeHooks hooks;  // kept across runs for its scratch storage
  std::int64_t ops_run = 0, ops_full = 0, runs = 0, runs_met = 0;

  Impl(const Simulator& s, int k)
      : sim(s),
        checkpoints(k),
        n(static_cast<std::size_t>(s.n_)),
        p(static_cast<std::size_t>(s.p_)) {
    finish.assign(n, 0);
    rec.finish.assign(n, 0);
    mark.assign(n, 0);
  }

  double compute(std::size_t v, DeviceId d) const {
    return sim.homogeneous_ ? sim.compute_[v] : sim.compute_[v * p + static_cast<std::size_t>(d)];
  }

  // Runs `dev` (loads in loads_*) from `from` (null: time 0) into rec; returns the makespan, or
  // a bound above `cutoff` when it stopped early. `meet`: the run may stop on meeting a state
  // of the base's checkpoints after cand_kept (then the base's makespan is the result).
  double run(std::span<const DeviceId> dev, const detail::SimState* from, double cutoff,
             bool meet) {
    rec.started.clear();
    hooks.from = from;
    hooks.device_ops = loads_ops.data();
    hooks.device_work = loads_work.data();
    hooks.finish = rec.finish.data();
    hooks.started = &rec.started;
    hooks.saves = &rec.saves;
    hooks.n_saves = 0;
    hooks.save_every = std::max(1, static_cast<int>(n) / checkpoints);
    hooks.base_saves = meet ? ckpts.data() + cand_kept : nullptr;
    hooks.n_base_saves = meet ? n_ckpts - cand_kept : 0;
    hooks.moved_mark = meet ? mark.data() : nullptr;
    hooks.moved_stamp = stamp;
    hooks.moved_left = static_cast<int>(moved.size());
    hooks.met = -1;
    double ms = detail::SimRun<false, false, true>(sim, dev, ws, {}, nullptr, cutoff, &hooks).run();
    rec.n_saves = hooks.n_saves;
    cand_sum = hooks.finish_sum;
    cand_met = hooks.met < 0 ? -1 : static_cast<std::ptrdiff_t>(cand_kept) + hooks.met;
    if (cand_met >= 0) {  // the rest is the base's: its last finish, its later finish times
      ms = base_ms;
      cand_sum += base_sum - ckpts[static_cast<std::size_t>(cand_met)].finish_sum;
      ++runs_met;
    }
    ++runs;
    ops_run += static_cast<std::int64_t>(rec.started.size());
    ops_full += static_cast<std::int64_t>(n);
    return ms;
  }

  // Checkpoints after accepting a candidate that met the base at checkpoint cand_met: the
  // base's kept ones, the candidate's, then the base's from cand_met on (their states are the
  // candidate's but for the finish-time sums and the compute started per device, adjusted by
  // the moved ops' finish times and work). Storage is moved, not copied.
  void splice_met_checkpoints() {
    const auto met = static_cast<std::size_t>(cand_met);
    const std::size_t len = n_ckpts - met, tail_at = cand_kept + rec.n_saves;
    const double d_sum = cand_sum - base_sum;
    const auto at = [&](std::size_t i) { return ckpts.begin() + static_cast<std::ptrdiff_t>(i); };
    if (ckpts.size() < tail_at + len) ckpts.resize(tail_at + len);
    if (tail_at <= met)
      std::rotate(at(tail_at), at(met), at(n_ckpts));
    else
      std::rotate(at(met), at(n_ckpts), at(tail_at + len));
    for (std::size_t i = 0; i < rec.n_saves; ++i) std::swap(ckpts[cand_kept + i], rec.saves[i]);
    for (std::size_t i = tail_at; i < tail_at + len; ++i) {
      detail::SimState& st = ckpts[i];
      st.finish_sum += d_sum;
      for (std::size_t d = 0; d < p; ++d) st.started_work[d] += loads_work[d] - base_work[d];
    }
    n_ckpts = tail_at + len;
  }

  // The ops the candidate moves (each once) and its ops and work per device.
  void diff(std::span<const DeviceId> candidate, std::span<const NodeId> changed) {
    moved.clear();
    ++stamp;
    loads_ops = base_ops;
    loads_work = base_work;
    for (NodeId v : changed) {
      const auto vi = static_cast<std::size_t>(v);
      const DeviceId from = base[vi], to = candidate[vi];
      if (from == to || mark[vi] == stamp) continue;
      mark[vi] = stamp;
      moved.emplace_back(v, to);
      --loads_ops[static_cast<std::size_t>(from)];
      ++loads_ops[static_cast<std::size_t>(to)];
      loads_work[static_cast<std::size_t>(from)] -= compute(vi, from);
      loads_work[static_cast<std::size_t>(to)] += compute(vi, to);
    }
  }

  // The earliest instant the moved ops can change (see the header).
  double first_change() const {
    double t = std::numeric_limits<double>::infinity();
    const Graph& g = sim.graph();
    for (const auto& [v, to] : moved) {
      const auto preds = g.predecessors(v);
      if (preds.empty()) return 0;
      for (NodeId u : preds) t = std::min(t, finish[static_cast<std::size_t>(u)]);
    }
    return t;
  }
};

IncrementalSim::IncrementalSim(const Simulator& sim, int checkpoints)
    : impl_(std::make_unique<Impl>(sim, std::max(1, checkpoints))) {}

IncrementalSim::~IncrementalSim() = default;

double IncrementalSim::reset(std::span<const DeviceId> base, bool count) {
  Impl& m = *impl_;
  m.sim.check(base, DispatchRule::fifo, {});
  for (std::size_t v = 0; v < base.size(); ++v)
    if (base[v] < 0)
      throw InputError(fmt::format("incremental simulation: node {} is not placed", v));
  if (count) m.sim.calls_.n.fetch_add(1, std::memory_order_relaxed);
  m.base.assign(base.begin(), base.end());
  m.loads_ops.assign(m.p, 0);
  m.loads_work.assign(m.p, 0);
  for (std::size_t v = 0; v < m.n; ++v) {
    ++m.loads_ops[static_cast<std::size_t>(base[v])];
    m.loads_work[static_cast<std::size_t>(base[v])] += m.compute(v, base[v]);
  }
  m.moved.clear();
  m.cand_kept = 0;
  m.cand_ms = m.run(base, nullptr, std::numeric_limits<double>::infinity(), false);
  m.cand_complete = true;
  accept();
  return m.base_ms;
}

double IncrementalSim::evaluate(std::span<const DeviceId> candidate,
                                std::span<const NodeId> changed, double cutoff) {
  Impl& m = *impl_;
  if (!m.has_base) throw std::logic_error("IncrementalSim::evaluate before reset()");
  if (candidate.size() != m.n)
    throw InputError(
        fmt::format("assignment has {} entries, the graph has {} nodes", candidate.size(), m.n));
  for (NodeId v : changed) {
    const bool op = v >= 0 && static_cast<std::size_t>(v) < m.n;
    const DeviceId d = op ? candidate[static_cast<std::size_t>(v)] : -1;
    if (d < 0 || static_cast<std::size_t>(d) >= m.p)
      throw InputError(fmt::format("incremental simulation: changed op {} is not on a device", v));
  }
  m.sim.calls_.n.fetch_add(1, std::memory_order_relaxed);
  m.diff(candidate, changed);
  const double t = m.first_change();
  // The latest checkpoint taken strictly before t (checkpoints are in time order).
  const auto end = m.ckpts.begin() + static_cast<std::ptrdiff_t>(m.n_ckpts);
  const auto it = std::lower_bound(m.ckpts.begin(), end, t,
                                   [](const detail::SimState& s, double x) { return s.after < x; });
  m.cand_kept = static_cast<std::size_t>(it - m.ckpts.begin());
  const detail::SimState* from = m.cand_kept > 0 ? &m.ckpts[m.cand_kept - 1] : nullptr;
  m.cand_ms = m.run(candidate, from, cutoff, true);
  m.cand_complete = m.cand_ms <= cutoff;
  return m.cand_ms;
}

void IncrementalSim::accept() {
  Impl& m = *impl_;
  if (!m.cand_complete)
    throw std::logic_error("IncrementalSim::accept: the last evaluation did not run to the end");
  for (const auto& [v, to] : m.moved) m.base[static_cast<std::size_t>(v)] = to;
  for (NodeId v : m.rec.started)
    m.finish[static_cast<std::size_t>(v)] = m.rec.finish[static_cast<std::size_t>(v)];
  if (m.cand_met >= 0) {
    m.splice_met_checkpoints();
  } else {
    // Checkpoints: the base's kept ones, then the candidate's (storage swapped, not copied).
    std::size_t k = m.cand_kept;
    for (std::size_t i = 0; i < m.rec.n_saves; ++i, ++k) {
      if (k == m.ckpts.size()) m.ckpts.emplace_back();
      std::swap(m.ckpts[k], m.rec.saves[i]);
    }
    m.n_ckpts = k;
  }
  m.base_ops = m.loads_ops;
  m.base_work = m.loads_work;
  m.base_ms = m.cand_ms;
  m.base_sum = m.cand_sum;
  m.cand_met = -1;
  m.cand_complete = false;
  m.has_base = true;
}

double IncrementalSim::base_makespan() const {
  return impl_->base_ms;
}

double IncrementalSim::base_finish_sum() const {
  return impl_->base_sum;
}

double IncrementalSim::finish_sum() const {
  return impl_->cand_sum;
}

double IncrementalSim::met_share() const {
  return impl_->runs > 0 ? static_cast<double>(impl_->runs_met) / static_cast<double>(impl_->runs)
                         : 0.0;
}

double IncrementalSim::work_share() const {
  return impl_->ops_full > 0
             ? static_cast<double>(impl_->ops_run) / static_cast<double>(impl_->ops_full)
             : 1.0;
}

}  // namespace doppler
