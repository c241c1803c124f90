#pragma once
// Internal: one simulation of one assignment, the simulator's event loop as named steps.
//   prepare()  workspace sizes, priority ranks, pending-input counts, device queue segments
//   loop       take the events of the earliest instant, apply them all, then let every device
//              whose state changed start its best ready ops (dispatch)
//   apply()    op finished: free its slot, deliver to local consumers, send to remote ones;
//              data arrived: count it down at its consumers on the destination
//   charged copies (copy_share > 0): a transfer sent to a device adds share x its link occupancy
//              to the device's sent copy time; an op finishing there first runs on for what was
//              sent since it started (or last ran on), then finishes
//   contention (contention k > 0): the run keeps the integral over time of the count of devices
//              computing; an op due to finish first runs on for k x the time it ran beside other
//              devices' compute (weighted by their share) not yet added, until none is left
// Templated on recording (a full Schedule) and on the dispatch rule, so the makespan-only fifo
// loop carries no dead branches. Every hot step is forced inline.
#include <algorithm>
#include <limits>
#include <span>

#include <fmt/format.h>

#include "doppler/sim/ready_rule.hpp"
#include "doppler/sim/simulator.hpp"
#include "doppler/util/error.hpp"

#define DOPPLER_INLINE inline __attribute__((always_inline))

namespace doppler::detail {

/// What an event's `aux` means (SimWorkspace::Event): an op finished, its output reached every
/// other device (reference model, one transfer cost per producer), reached one device (hardware
/// model: aux is the device), or crossed one out-edge (per-edge costs: aux = kEdgeBase - k for the
/// producer's k-th out-edge).
inline constexpr std::int32_t kFinished = -1;
inline constexpr std::int32_t kAllDevices = -2;
inline constexpr std::int32_t kEdgeBase = -3;

/// A saved state of a fifo run between two instants (IncrementalSim's checkpoints). It holds
/// nothing that depends on where the not-yet-started ops are placed, except through the queues
/// of ops already ready, which a resumed run lays out again for its own assignment.
struct SimState {
  double after = 0;                             ///< the last instant applied and dispatched
  int finished = 0;                             ///< ops finished by then
  double finish_sum = 0;                        ///< sum of their finish times
  double makespan = 0;                          ///< latest finish of the ops started by then
  std::vector<int> pending;                     ///< N: inputs still missing
  EventHeap<SimWorkspace::Event> events;        ///< pending events
  std::vector<SimWorkspace::Ready> queued;      ///< ready ops, device by device
  std::vector<int> q_size, free_slots;          ///< P
  std::vector<double> link_free, started_work;  ///< per link; per device (compute started)
  std::vector<double> copy_sent, copy_prior, copy_at, copy_charged;  ///< charged copies (P, N)
  SimWorkspace::Contention contention;  ///< contention (DeviceSpec::contention > 0)
};

/// What a resumable run (SimRun<false, false, true>) reads and writes.
struct ResumeHooks {
  const SimState* from = nullptr;          ///< state to resume from (null: from time 0)
  const int* device_ops = nullptr;         ///< P: ops on each device under the assignment
  const double* device_work = nullptr;     ///< P: compute on each device under the assignment
  double* finish = nullptr;                ///< N: finish of every op started by this run
  std::vector<NodeId>* started = nullptr;  ///< ops started by this run, in start order
  std::vector<SimState>* saves = nullptr;  ///< checkpoints taken by this run (storage reused)
  std::size_t n_saves = 0;                 ///< checkpoints written to *saves
  int save_every = 1;                      ///< finished ops between two checkpoints
  double finish_sum = 0;                   ///< out: sum of the finish times of every op (when
                                           ///< the run was not stopped early; when it met the
                                           ///< base, of the ops finished by then)
  // Meeting the base (IncrementalSim::evaluate): once every moved op has finished, the run
  // compares its state with the base's checkpoints of the same instants; on the first equal one
  // it stops, its future being the base's.
  const SimState* base_saves = nullptr;  ///< the base's checkpoints after `from`, in time order
  std::size_t n_base_saves = 0;          ///< how many (0: no meeting)
  const int* moved_mark = nullptr;       ///< N: op v moved iff moved_mark[v] == moved_stamp
  int moved_stamp = 0;
  int moved_left = 0;       ///< in: ops moved; counts down as they finish
  std::ptrdiff_t met = -1;  ///< out: the index in base_saves of the state met (-1: none)
  std::vector<EventHeap<SimWorkspace::Event>::Entry> sort_a, sort_b;  ///< scratch
};

template <bool kRecord, bool kPriority, bool kResume>
class SimRun {
public:
  using Event = SimWorkspace::Event;
  using Ready = SimWorkspace::Ready;

  SimRun(const Simulator& sim, std::span<const DeviceId> dev, SimWorkspace& ws,
         std::span<const NodeId> order, Schedule* out,
         double cutoff = std::numeric_limits<double>::infinity(), ResumeHooks* hooks = nullptr)
      : s_(sim),
        ws_(ws),
        order_(order),
        out_(out),
        n_(static_cast<std::size_t>(sim.n_)),
        p_(static_cast<std::size_t>(sim.p_)),
        dev_(dev.data()),
        cutoff_(cutoff * (1 + kCutoffSlack)),
        bounded_(cutoff < std::numeric_limits<double>::infinity()),
        hooks_(hooks) {}

  /// Simulates the assignment; returns the makespan (and fills the schedule when recording).
  /// A resumable run starts from hooks->from when set and takes checkpoints as it goes.
  double run() {
    if constexpr (kResume) {
      static_assert(!kRecord && !kPriority, "resumable runs are fifo makespan-only runs");
      if (hooks_->from)
        restore(*hooks_->from);
      else
        start();
    } else {
      start();
    }
    while (!ws_.events.empty() && !aborted_) {
      const double t = ws_.events.top_time();
      apply_instant(t);
      dispatch(t);
      if constexpr (kResume) {
        if (hooks_->moved_left == 0 && next_base_ < hooks_->n_base_saves && meets_base(t)) break;
        save_if_due(t);
      }
    }
    if constexpr (kRecord) out_->makespan = makespan_;
    if constexpr (kResume) hooks_->finish_sum = finish_sum_;
    return aborted_ ? bound_ : makespan_;
  }

private:
  void start() {
    prepare();
    start_record();
    ready_sources();
    dispatch(0.0);
    if constexpr (kResume) save_if_due(0.0);
  }

  // --- checkpoints (resumable runs) -------------------------------------------------------------
  // Lays the saved state out for this run's assignment: queue segments from its ops per device,
  // unstarted work per device from its totals minus the work started before the checkpoint.
  void restore(const SimState& st) {
    size_workspace();
    bind_views();
    std::copy(st.pending.begin(), st.pending.end(), pending_);
    ws_.events = st.events;
    std::size_t k = 0;
    q_begin_[0] = 0;
    for (std::size_t d = 0; d < p_; ++d) {
      q_begin_[d + 1] = q_begin_[d] + hooks_->device_ops[d];
      q_head_[d] = 0;
      q_size_[d] = st.q_size[d];
      for (int i = 0; i < q_size_[d]; ++i) queue_[q_begin_[d] + i] = st.queued[k++];
    }
    std::copy(st.free_slots.begin(), st.free_slots.end(), free_slots_);
    std::copy(st.link_free.begin(), st.link_free.end(), ws_.link_free.begin());
    std::copy(st.started_work.begin(), st.started_work.end(), ws_.dev_started.begin());
    if (s_.copies_charged_) {
      ws_.copy_sent = st.copy_sent;
      ws_.copy_prior = st.copy_prior;
      ws_.copy_at = st.copy_at;
      ws_.copy_charged = st.copy_charged;
    }
    if (s_.contended_) ws_.contention = st.contention;
    for (std::size_t d = 0; d < p_ && bounded_; ++d)
      ws_.dev_work[d] = hooks_->device_work[d] - st.started_work[d];
    makespan_ = st.makespan;
    finished_ = st.finished;
    finish_sum_ = st.finish_sum;
    next_save_ = (finished_ / hooks_->save_every + 1) * hooks_->save_every;
  }

  DOPPLER_INLINE void save_if_due(double t) {
    if (finished_ < next_save_ || aborted_) return;
    next_save_ = (finished_ / hooks_->save_every + 1) * hooks_->save_every;
    auto& saves = *hooks_->saves;
    if (hooks_->n_saves == saves.size()) saves.emplace_back();
    SimState& st = saves[hooks_->n_saves++];
    st.after = t;
    st.finished = finished_;
    st.finish_sum = finish_sum_;
    st.makespan = makespan_;
    st.pending.assign(pending_, pending_ + n_);
    st.events = ws_.events;
    st.queued.clear();
    for (std::size_t d = 0; d < p_; ++d) {
      const Ready* q = queue_ + q_begin_[d] + q_head_[d];
      st.queued.insert(st.queued.end(), q, q + q_size_[d]);
    }
    st.q_size.assign(q_size_, q_size_ + p_);
    st.free_slots.assign(free_slots_, free_slots_ + p_);
    st.link_free = ws_.link_free;
    st.started_work = ws_.dev_started;
    if (s_.copies_charged_) {
      st.copy_sent = ws_.copy_sent;
      st.copy_prior = ws_.copy_prior;
      st.copy_at = ws_.copy_at;
      st.copy_charged = ws_.copy_charged;
    }
    if (s_.contended_) st.contention = ws_.contention;
  }

  // --- meeting the base (resumable runs) ---------------------------------------------------------
  // After instant t, with every moved op finished: whether the state equals the base's
  // checkpoint of the same instant (the next one not yet passed; each is tried once). The
  // future of a run is a function of its state and of the devices of the ops not yet finished
  // (an event of a moved op, which reads that op's device, must not be pending), so from an
  // equal state the rest of this run is the base's.
  bool meets_base(double t) {
    const SimState* b = hooks_->base_saves;
    const std::size_t n = hooks_->n_base_saves;
    while (next_base_ < n && b[next_base_].after < t) ++next_base_;
    if (next_base_ == n || b[next_base_].after != t) return false;
    const std::size_t k = next_base_++;
    if (!same_state(b[k])) return false;
    hooks_->met = static_cast<std::ptrdiff_t>(k);
    return true;
  }

  // The state after this instant equals `st` (the fields the future depends on; events as
  // multisets, queues device by device).
  bool same_state(const SimState& st) {
    if (st.finished != finished_ || st.events.size() != ws_.events.size()) return false;
    if (!std::equal(free_slots_, free_slots_ + p_, st.free_slots.begin()) ||
        !std::equal(q_size_, q_size_ + p_, st.q_size.begin()) || st.link_free != ws_.link_free)
      return false;
    std::size_t k = 0;
    for (std::size_t d = 0; d < p_; ++d) {
      const Ready* q = queue_ + q_begin_[d] + q_head_[d];
      for (int i = 0; i < q_size_[d]; ++i, ++k)
        if (q[i].key != st.queued[k].key || q[i].op != st.queued[k].op) return false;
    }
    if (!std::equal(pending_, pending_ + n_, st.pending.begin())) return false;
    if (s_.copies_charged_ && (st.copy_sent != ws_.copy_sent || st.copy_prior != ws_.copy_prior ||
                               st.copy_at != ws_.copy_at || st.copy_charged != ws_.copy_charged))
      return false;
    if (s_.contended_ && st.contention != ws_.contention) return false;
    return same_events(st.events);
  }

  // Pending events equal as multisets, none of a moved op.
  bool same_events(const EventHeap<Event>& base) {
    auto& a = hooks_->sort_a;
    auto& b = hooks_->sort_b;
    a.assign(ws_.events.begin(), ws_.events.end());
    for (const auto& e : a)
      if (hooks_->moved_mark[e.item.op] == hooks_->moved_stamp) return false;
    b.assign(base.begin(), base.end());
    const auto by_key = [](const auto& x, const auto& y) {
      if (x.time != y.time) return x.time < y.time;
      return x.item.op != y.item.op ? x.item.op < y.item.op : x.item.aux < y.item.aux;
    };
    std::sort(a.begin(), a.end(), by_key);
    std::sort(b.begin(), b.end(), by_key);
    return std::equal(a.begin(), a.end(), b.begin(), [](const auto& x, const auto& y) {
      return x.time == y.time && x.item.op == y.item.op && x.item.aux == y.item.aux;
    });
  }

  // --- preparation ---------------------------------------------------------------------------
  void prepare() {
    size_workspace();
    bind_views();
    if constexpr (kPriority) rank_order();
    count_pending();
    std::copy(s_.slots_.begin(), s_.slots_.end(), free_slots_);
    std::fill(ws_.link_free.begin(), ws_.link_free.end(), 0.0);
    ws_.events.clear();
    if (bounded_) count_device_work();
    if (s_.copies_charged_) {
      ws_.copy_sent.assign(p_, 0.0);
      ws_.copy_prior.assign(p_, 0.0);
      ws_.copy_at.assign(p_, -1.0);
      ws_.copy_charged.assign(n_, 0.0);
    }
    if (s_.contended_) {
      auto& c = ws_.contention;
      c.busy = 0;
      c.integral = c.at = 0;
      c.start_integral.assign(n_, 0.0);
      c.start_time.assign(n_, 0.0);
      c.charged.assign(n_, 0.0);
    }
    if constexpr (kResume) {
      std::fill(ws_.dev_started.begin(), ws_.dev_started.end(), 0.0);
      next_save_ = 0;
    }
  }

  // Compute time assigned to each device (the cutoff's device bound). A partial assignment
  // (some op excluded) runs without the cutoff: the path bound would count excluded ops.
  void count_device_work() {
    std::fill(ws_.dev_work.begin(), ws_.dev_work.end(), 0.0);
    for (std::size_t v = 0; v < n_ && bounded_; ++v) {
      const DeviceId d = dev_[v];
      bounded_ = d >= 0;
      if (bounded_)
        ws_.dev_work[static_cast<std::size_t>(d)] += compute(v, static_cast<std::size_t>(d));
    }
  }

  // Grows the workspace to this graph and platform (once; later calls reuse it).
  void size_workspace() {
    const auto links = static_cast<std::size_t>(s_.num_links_);
    if (ws_.pending.size() == n_ && ws_.q_begin.size() == p_ + 1 && ws_.link_free.size() == links &&
        ws_.dev_started.size() == p_)
      return;
    ws_.pending.assign(n_, 0);
    ws_.ready_time.assign(n_, 0);
    ws_.queue.assign(n_, {});
    ws_.q_begin.assign(p_ + 1, 0);
    ws_.q_size.assign(p_, 0);
    ws_.q_head.assign(p_, 0);
    ws_.free_slots.assign(p_, 0);
    ws_.is_touched.assign(p_, 0);
    ws_.touched.assign(p_, 0);
    ws_.batch.reserve(n_ + s_.succ_.size() + 1);
    ws_.link_free.assign(links, 0);
    ws_.dev_stamp.assign(p_, 0);
    ws_.dev_bytes.assign(p_, 0);
    ws_.dev_list.reserve(p_);
    ws_.rank.assign(n_, 0);
    ws_.dev_work.assign(p_, 0);
    ws_.dev_started.assign(p_, 0);
    ws_.stamp = 0;
  }

  void bind_views() {
    ws_.dev = dev_;
    pending_ = ws_.pending.data();
    ready_time_ = ws_.ready_time.data();
    queue_ = ws_.queue.data();
    q_begin_ = ws_.q_begin.data();
    q_size_ = ws_.q_size.data();
    q_head_ = ws_.q_head.data();
    free_slots_ = ws_.free_slots.data();
    is_touched_ = ws_.is_touched.data();
    touched_ = ws_.touched.data();
    rank_ = ws_.rank.data();
    succ_begin_ = s_.succ_begin_.data();
    succ_ = s_.succ_.data();
    comp_ = s_.compute_.data();
  }

  // Position of every op in the priority order, which must be a permutation of the ops: O(N).
  void rank_order() {
    std::fill(rank_, rank_ + n_, -1);
    for (std::size_t i = 0; i < n_; ++i) {
      const NodeId v = order_[i];
      const bool op = v >= 0 && static_cast<std::size_t>(v) < n_;
      if (!op || rank_[v] >= 0)
        throw InputError(fmt::format(
            "dispatch order 'priority': position {} holds {}, {} (the order must list every op "
            "0..{} once)",
            i, v, op ? "a repeated op" : "not an op", n_ - 1));
      rank_[v] = static_cast<int>(i);
    }
  }

  // Pending inputs per op (excluded ops, device -1, neither run nor send) and each device's
  // segment of the queue array.
  void count_pending() {
    bool partial = false;
    std::fill(q_size_, q_size_ + p_, 0);
    std::fill(q_head_, q_head_ + p_, 0);
    std::fill(q_begin_, q_begin_ + p_ + 1, 0);
    for (std::size_t v = 0; v < n_; ++v) {
      if (dev_[v] < 0) {
        partial = true;
        continue;
      }
      ++q_begin_[static_cast<std::size_t>(dev_[v]) + 1];
    }
    for (std::size_t d = 0; d < p_; ++d) q_begin_[d + 1] += q_begin_[d];
    if (!partial) {
      std::copy(s_.indeg_.begin(), s_.indeg_.end(), pending_);
      return;
    }
    std::fill(pending_, pending_ + n_, 0);
    for (std::size_t u = 0; u < n_; ++u)
      if (dev_[u] >= 0)
        for (auto e = succ_begin_[u]; e < succ_begin_[u + 1]; ++e) ++pending_[succ_[e]];
  }

  void start_record() {
    if constexpr (kRecord) {
      out_->unit = s_.platform_.unit();
      out_->devices = s_.p_;
      out_->device.assign(dev_, dev_ + n_);
      out_->ready.assign(n_, 0);
      out_->start.assign(n_, 0);
      out_->finish.assign(n_, 0);
      out_->busy.assign(p_, 0);
      out_->slots = s_.slots_;
      out_->transfers.clear();
    }
  }

  void ready_sources() {
    for (std::size_t v = 0; v < n_; ++v)
      if (dev_[v] >= 0 && pending_[v] == 0) make_ready(static_cast<NodeId>(v), 0.0);
  }

  // --- ready queues ----------------------------------------------------------------------------
  // FIFO: ops become ready in time order, so a device queue is an array appended at the tail;
  // ops made ready at the same instant are kept in id order by insertion. Priority: a binary
  // heap on (rank, id).
  static DOPPLER_INLINE bool less(const Ready& a, const Ready& b) {
    return ready_before(a.key, a.op, b.key, b.op);
  }

  DOPPLER_INLINE void touch(std::size_t d) {
    if (!is_touched_[d]) {
      is_touched_[d] = 1;
      touched_[n_touched_++] = static_cast<DeviceId>(d);
    }
  }

  DOPPLER_INLINE void make_ready(NodeId w, double t) {
    const auto d = static_cast<std::size_t>(dev_[w]);
    ready_time_[w] = t;
    const double key = kPriority ? rank_[w] : t;
    Ready* q = queue_ + q_begin_[d] + q_head_[d];
    auto i = static_cast<std::size_t>(q_size_[d]++);
    if constexpr (kPriority) {
      const Ready item{key, w};
      for (std::size_t parent; i > 0 && less(item, q[parent = (i - 1) / 2]); i = parent)
        q[i] = q[parent];
    } else {
      for (; i > 0 && ready_before(key, w, q[i - 1].key, q[i - 1].op); --i) q[i] = q[i - 1];
    }
    q[i] = {key, w};
    touch(d);
  }

  DOPPLER_INLINE NodeId pop_ready(std::size_t d) {
    Ready* q = queue_ + q_begin_[d] + q_head_[d];
    const NodeId top = q[0].op;
    const auto size = static_cast<std::size_t>(--q_size_[d]);
    if constexpr (!kPriority) {
      ++q_head_[d];
      return top;
    }
    const Ready last = q[size];
    std::size_t i = 0;
    for (std::size_t c; (c = 2 * i + 1) < size; i = c) {
      if (c + 1 < size && less(q[c + 1], q[c])) ++c;
      if (!less(q[c], last)) break;
      q[i] = q[c];
    }
    if (size > 0) q[i] = last;
    return top;
  }

  // --- dispatch --------------------------------------------------------------------------------
  // Every touched device with a free slot starts its best ready ops at time t.
  DOPPLER_INLINE void dispatch(double t) {
    for (std::size_t k = 0; k < n_touched_; ++k) {
      const auto d = static_cast<std::size_t>(touched_[k]);
      is_touched_[d] = 0;
      while (free_slots_[d] > 0 && q_size_[d] > 0) start_op(pop_ready(d), d, t);
    }
    n_touched_ = 0;
  }

  DOPPLER_INLINE double compute(std::size_t v, std::size_t d) const {
    return s_.homogeneous_ ? comp_[v] : comp_[v * p_ + d];
  }

  DOPPLER_INLINE void start_op(NodeId v, std::size_t d, double t) {
    const double c = compute(static_cast<std::size_t>(v), d);
    const double f = t + c;
    if (s_.contended_) start_contended(static_cast<std::size_t>(v), d, t);
    --free_slots_[d];
    if (s_.copies_charged_) ws_.copy_charged[static_cast<std::size_t>(v)] = copies_before(d, t);
    ws_.events.push(f, {v, kFinished});
    makespan_ = std::max(makespan_, f);
    if (bounded_) check_cutoff(v, d, t, f, c);
    if constexpr (kResume) {
      ws_.dev_started[d] += c;
      hooks_->finish[v] = f;
      hooks_->started->push_back(v);
    }
    if constexpr (kRecord) {
      const auto i = static_cast<std::size_t>(v);
      out_->ready[i] = ready_time_[v];
      out_->start[i] = t;
      out_->finish[i] = f;
      out_->busy[d] += c;
    }
  }

  // Lower bounds on the makespan once v starts on d at t: v's finish plus the longest
  // compute-only path after it, and t plus d's unstarted work spread over its slots. Above the
  // cutoff the run stops (aborted_) and returns the bound.
  DOPPLER_INLINE void check_cutoff(NodeId v, std::size_t d, double t, double f, double c) {
    double& left = ws_.dev_work[d];
    left -= c;
    const double b =
        std::max(f + s_.tail_[static_cast<std::size_t>(v)], t + std::max(0.0, left) / s_.slots_[d]);
    if (b > cutoff_ && !aborted_) {
      aborted_ = true;
      bound_ = b;
    }
  }

  // --- events ----------------------------------------------------------------------------------
  // Applies every event of instant t. Reference model: order within an instant does not matter
  // (queues order same-instant ops by id). Hardware model: links serve requests in request order,
  // so the instant's events are applied sorted by (op, aux).
  DOPPLER_INLINE void apply_instant(double t) {
    auto& events = ws_.events;
    if (s_.reference_) {
      while (!events.empty() && events.top_time() == t) apply(events.pop(), t);
      return;
    }
    while (!events.empty() && events.top_time() == t) {
      ws_.batch.clear();
      while (!events.empty() && events.top_time() == t) ws_.batch.push_back(events.pop());
      std::sort(ws_.batch.begin(), ws_.batch.end(), [](const Event& a, const Event& b) {
        return a.op != b.op ? a.op < b.op : a.aux < b.aux;
      });
      for (const Event& ev : ws_.batch) apply(ev, t);
    }
  }

  DOPPLER_INLINE void apply(const Event& ev, double t) {
    const auto v = static_cast<std::size_t>(ev.op);
    const auto e0 = static_cast<std::size_t>(succ_begin_[v]);
    const auto e1 = static_cast<std::size_t>(succ_begin_[v + 1]);
    if (ev.aux == kFinished) {
      op_finished(ev.op, e0, e1, t);
    } else if (ev.aux == kAllDevices) {
      for (std::size_t e = e0; e < e1; ++e) {
        const DeviceId dw = dev_[succ_[e]];
        if (dw >= 0 && dw != dev_[v]) arrive(succ_[e], t);
      }
    } else if (ev.aux <= kEdgeBase) {
      arrive(succ_[e0 + static_cast<std::size_t>(kEdgeBase - ev.aux)], t);
    } else {
      for (std::size_t e = e0; e < e1; ++e)
        if (dev_[succ_[e]] == ev.aux) arrive(succ_[e], t);
    }
  }

  // --- charged copies ----------------------------------------------------------------------------
  // Copy time charged to device d's ops that was sent before instant t (sends of instant t
  // itself are not yet counted, so the order of one instant's events does not matter).
  DOPPLER_INLINE double copies_before(std::size_t d, double t) const {
    return ws_.copy_at[d] == t ? ws_.copy_prior[d] : ws_.copy_sent[d];
  }

  // A transfer sent to d at t whose links are busy for `occupancy`.
  DOPPLER_INLINE void charge_copy(std::size_t d, double t, double occupancy) {
    const double c = s_.copy_share_[d] * occupancy;
    if (c <= 0) return;
    if (ws_.copy_at[d] != t) {
      ws_.copy_prior[d] = ws_.copy_sent[d];
      ws_.copy_at[d] = t;
    }
    ws_.copy_sent[d] += c;
  }

  // Op u was due to finish on d at t: when copies were charged to d since it started (or last
  // ran on), or it lost time to contention not yet added, it runs on for that time and finishes
  // later (true); else it finishes now.
  DOPPLER_INLINE bool run_on(NodeId u, std::size_t d, double t) {
    const auto i = static_cast<std::size_t>(u);
    double extra = 0;
    if (s_.copies_charged_) {
      const double sent = copies_before(d, t);
      if (sent > ws_.copy_charged[i]) {
        extra += sent - ws_.copy_charged[i];
        ws_.copy_charged[i] = sent;
      }
    }
    if (s_.contended_) extra += contention_owed(i, d, t);
    if (extra <= 0) return false;
    const double f = t + extra;
    ws_.events.push(f, {u, kFinished});
    makespan_ = std::max(makespan_, f);
    if constexpr (kResume) hooks_->finish[i] = f;
    if constexpr (kRecord) {
      out_->finish[i] = f;
      out_->busy[d] += extra;
    }
    return true;
  }

  // --- contention --------------------------------------------------------------------------------
  // Brings the integral of the count of computing devices up to t (before the count changes).
  DOPPLER_INLINE void advance_busy(double t) {
    auto& c = ws_.contention;
    c.integral += c.busy * (t - c.at);
    c.at = t;
  }

  // Op v starts on d at t: d computes from now on (if it did not), and v notes where it started.
  DOPPLER_INLINE void start_contended(std::size_t v, std::size_t d, double t) {
    auto& c = ws_.contention;
    advance_busy(t);
    if (free_slots_[d] == s_.slots_[d]) ++c.busy;
    c.start_integral[v] = c.integral;
    c.start_time[v] = t;
    c.charged[v] = 0;
  }

  // Op v freed a slot of d at t: d stops computing when no op of its own is left.
  DOPPLER_INLINE void stop_contended(std::size_t d, double t) {
    advance_busy(t);
    if (free_slots_[d] == s_.slots_[d]) --ws_.contention.busy;
  }

  // Time op v on d still owes to contention at t: k x the other devices' compute during its run
  // (the integral of the computing devices less d's own run, over the other P - 1 devices), less
  // what was already added. Each run-on adds what is owed so far, so the owed time shrinks by a
  // factor k x share per round; below kContentionTol of the run it is dropped.
  DOPPLER_INLINE double contention_owed(std::size_t v, std::size_t d, double t) {
    auto& c = ws_.contention;
    const double ran = t - c.start_time[v];
    const double integral = c.integral + c.busy * (t - c.at);
    const double beside = std::max(0.0, integral - c.start_integral[v] - ran) / double(p_ - 1);
    const double owed = s_.contention_[d] * beside - c.charged[v];
    if (owed <= kContentionTol * ran) return 0;
    c.charged[v] += owed;
    return owed;
  }

  DOPPLER_INLINE void arrive(NodeId w, double t) {
    if (--pending_[w] == 0) make_ready(w, t);
  }

  // Frees the op's slot, delivers its output to local consumers and sends it to remote ones.
  DOPPLER_INLINE void op_finished(NodeId u, std::size_t e0, std::size_t e1, double t) {
    const DeviceId src = dev_[u];
    if ((s_.copies_charged_ || s_.contended_) && run_on(u, static_cast<std::size_t>(src), t))
      return;
    ++free_slots_[src];
    if (s_.contended_) stop_contended(static_cast<std::size_t>(src), t);
    if constexpr (kResume) {
      ++finished_;
      finish_sum_ += t;
      if (hooks_->moved_mark && hooks_->moved_mark[u] == hooks_->moved_stamp) --hooks_->moved_left;
    }
    touch(static_cast<std::size_t>(src));
    bool remote = false;
    for (std::size_t e = e0; e < e1; ++e) {
      const DeviceId dw = dev_[succ_[e]];
      if (dw == src)
        arrive(succ_[e], t);
      else
        remote |= dw >= 0;
    }
    if (!remote) return;
    if (!s_.reference_)
      send_hardware(u, src, e0, e1, t);
    else if (s_.ref_edge_transfer_.empty())
      send_reference(u, src, e0, e1, t);
    else
      send_per_edge(u, src, e0, e1, t);
  }

  // --- transfers -------------------------------------------------------------------------------
  // Reference model: the output reaches every other device after the producer's transfer cost.
  void send_reference(NodeId u, DeviceId src, std::size_t e0, std::size_t e1, double t) {
    const double f = t + s_.ref_transfer_[static_cast<std::size_t>(u)];
    ws_.events.push(f, {u, kAllDevices});
    if constexpr (kRecord) {
      const int stamp = ++ws_.stamp;
      for (std::size_t e = e0; e < e1; ++e) {
        const DeviceId dw = dev_[succ_[e]];
        if (dw < 0 || dw == src || ws_.dev_stamp[static_cast<std::size_t>(dw)] == stamp) continue;
        ws_.dev_stamp[static_cast<std::size_t>(dw)] = stamp;
        record_transfer(u, src, dw, 0.0, t, f, 0, 0);
      }
    }
  }

  // Reference model with per-edge costs (the classic task-graph model): every cross-device edge
  // delivers after its own transfer cost.
  void send_per_edge(NodeId u, DeviceId src, std::size_t e0, std::size_t e1, double t) {
    for (std::size_t e = e0; e < e1; ++e) {
      const DeviceId dw = dev_[succ_[e]];
      if (dw < 0 || dw == src) continue;
      const double f = t + s_.ref_edge_transfer_[e];
      ws_.events.push(f, {u, kEdgeBase - static_cast<std::int32_t>(e - e0)});
      if constexpr (kRecord) record_transfer(u, src, dw, 0.0, t, f, 0, 0);
    }
  }

  // Hardware model: one transfer per destination device, carrying the largest edge, occupying
  // every link of its route; links serve transfers FIFO.
  void send_hardware(NodeId u, DeviceId src, std::size_t e0, std::size_t e1, double t) {
    const int stamp = ++ws_.stamp;
    ws_.dev_list.clear();
    for (std::size_t e = e0; e < e1; ++e) {
      const DeviceId dw = dev_[succ_[e]];
      if (dw < 0 || dw == src) continue;
      const auto du = static_cast<std::size_t>(dw);
      if (ws_.dev_stamp[du] != stamp) {
        ws_.dev_stamp[du] = stamp;
        ws_.dev_bytes[du] = s_.edge_bytes_[e];
        ws_.dev_list.push_back(dw);
      } else {
        ws_.dev_bytes[du] = std::max(ws_.dev_bytes[du], s_.edge_bytes_[e]);
      }
    }
    std::sort(ws_.dev_list.begin(), ws_.dev_list.end());
    for (const DeviceId dd : ws_.dev_list) send_route(u, src, dd, t);
  }

  void send_route(NodeId u, DeviceId src, DeviceId dd, double t) {
    const std::size_t k = static_cast<std::size_t>(src) * p_ + static_cast<std::size_t>(dd);
    const auto r0 = static_cast<std::size_t>(s_.route_begin_[k]);
    const auto r1 = static_cast<std::size_t>(s_.route_begin_[k + 1]);
    const int* links = s_.route_links_.data();
    double start = t;
    for (std::size_t i = r0; i < r1; ++i)
      start = std::max(start, ws_.link_free[static_cast<std::size_t>(links[i])]);
    const double bytes = ws_.dev_bytes[static_cast<std::size_t>(dd)];
    const double left = start + s_.route_lat_[k] + bytes * s_.route_inv_bw_[k];
    for (std::size_t i = r0; i < r1; ++i) ws_.link_free[static_cast<std::size_t>(links[i])] = left;
    if (s_.copies_charged_) charge_copy(static_cast<std::size_t>(dd), t, left - start);
    const double f = left + s_.route_delay_[k];
    ws_.events.push(f, {u, dd});
    if constexpr (kRecord) record_transfer(u, src, dd, bytes, start, f, r0, r1);
  }

  void record_transfer(NodeId u, DeviceId src, DeviceId dst, double bytes, double start,
                       double finish, std::size_t r0, std::size_t r1) {
    const auto b = s_.route_links_.begin();
    out_->transfers.push_back({u, src, dst, bytes, start, finish,
                               std::vector<int>(b + static_cast<std::ptrdiff_t>(r0),
                                                b + static_cast<std::ptrdiff_t>(r1))});
    ++out_->cross_transfers;
    out_->cross_bytes += bytes;
  }

  const Simulator& s_;
  SimWorkspace& ws_;
  std::span<const NodeId> order_;
  Schedule* out_;
  std::size_t n_, p_;
  const DeviceId* dev_;
  // Raw views of the hot arrays (bound by prepare()).
  int* pending_ = nullptr;
  double* ready_time_ = nullptr;
  Ready* queue_ = nullptr;
  int *q_begin_ = nullptr, *q_size_ = nullptr, *q_head_ = nullptr;
  int* free_slots_ = nullptr;
  char* is_touched_ = nullptr;
  DeviceId* touched_ = nullptr;
  int* rank_ = nullptr;
  const EdgeId* succ_begin_ = nullptr;
  const NodeId* succ_ = nullptr;
  const double* comp_ = nullptr;
  std::size_t n_touched_ = 0;
  double makespan_ = 0;
  // Early abort (Simulator::makespan_below): the cutoff with its rounding slack, whether one is
  // set, whether the run stopped, and the bound that stopped it.
  static constexpr double kCutoffSlack = 1e-9;
  // Contention owed below this share of an op's run so far ends its run-ons.
  static constexpr double kContentionTol = 1e-7;
  double cutoff_;
  bool bounded_;
  bool aborted_ = false;
  double bound_ = 0;
  // Resumable runs: their hooks, ops finished so far and the count that triggers a checkpoint.
  ResumeHooks* hooks_;
  int finished_ = 0;
  double finish_sum_ = 0;  // sum of the finish times of the ops finished so far
  int next_save_ = 0;
  std::size_t next_base_ = 0;  // the first of the base's checkpoints not yet passed
};

}  // namespace doppler::detail

#undef DOPPLER_INLINE
