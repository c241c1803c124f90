#include "runtime.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include <fmt/format.h>

#include "doppler/engine/engine.hpp"
#include "doppler/sim/ready_rule.hpp"
#include "doppler/util/stopwatch.hpp"

namespace doppler::engine_detail {

namespace {

using Clock = std::chrono::steady_clock;

thread_local DeviceId t_worker = -1;  // the device whose compute worker this thread is

// The heap comparator of the ready queues (std heaps are max-heaps): the rule's order reversed.
bool later(double ka, NodeId va, double kb, NodeId vb) {
  return ready_before(kb, vb, ka, va);
}

std::vector<int> usable_cpus() {
  std::vector<int> cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  if (cpus.empty()) cpus.push_back(0);
  return cpus;
}

void pin_self(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

// Sets the calling thread's EEVDF time slice (Linux >= 6.12: sched_attr::sched_runtime of a
// SCHED_OTHER thread, 0.1-100 ms; 0 restores the default) and returns the previous one, or -1
// where the kernel does not support it (nothing changes then).
long long set_time_slice(unsigned long long ns) {
  struct SchedAttr {  // the kernel's struct sched_attr (its header clashes with <sched.h>)
    std::uint32_t size, sched_policy;
    std::uint64_t sched_flags;
    std::int32_t sched_nice;
    std::uint32_t sched_priority;
    std::uint64_t sched_runtime, sched_deadline, sched_period;
    std::uint32_t sched_util_min, sched_util_max;
  } attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof(attr), 0) != 0 ||
      attr.sched_policy != SCHED_OTHER)
    return -1;
  const auto before = static_cast<long long>(attr.sched_runtime);
  attr.size = sizeof(attr);
  attr.sched_runtime = ns;
  attr.sched_flags = 0;
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0 ? before : -1;
}

}  // namespace

Runtime::Runtime(const Graph& g, const Plan& plan, RuntimeConfig cfg,
                 std::unique_ptr<DeviceBackend> backend)
    : g_(&g), plan_(&plan), cfg_(std::move(cfg)), n_(g.num_nodes()), backend_(std::move(backend)) {
  const int p = cfg_.devices;
  if (cfg_.local.empty()) cfg_.local.assign(static_cast<std::size_t>(p), 1);
  cpus_ = usable_cpus();
  int local = 0;
  for (char c : cfg_.local) local += c != 0;
  pinned_ = cfg_.pin && local <= static_cast<int>(cpus_.size());
  if (!backend_) backend_ = make_cpu_backend(plan, p, n_);
  pending_ = std::make_unique<std::atomic<int>[]>(static_cast<std::size_t>(n_));
  rank_.assign(static_cast<std::size_t>(n_), 0);
  dev_stamp_.assign(static_cast<std::size_t>(p), -1);
  dev_.resize(static_cast<std::size_t>(p));
  int slot = 0;
  for (DeviceId d = 0; d < p; ++d) {
    if (!is_local(d)) continue;
    dev_[static_cast<std::size_t>(d)] = std::make_unique<Device>();
  }
  for (DeviceId d = 0; d < p; ++d) {  // threads start once every Device exists
    if (!is_local(d)) continue;
    Device& dev = *dev_[static_cast<std::size_t>(d)];
    const int cpu = cpus_[static_cast<std::size_t>(slot++) % cpus_.size()];
    dev.compute = std::thread([this, d, cpu] {
      if (pinned_) pin_self(cpu);
      compute_loop(d);
    });
    dev.copier = std::thread([this, d, cpu] {  // on the device's core: a copy takes its time
      if (pinned_) pin_self(cpu);
      set_time_slice(100000);
      copy_loop(d);
    });
  }
}

Runtime::~Runtime() {
  stop_ = true;
  for (auto& d : dev_) {
    if (!d) continue;
    { std::lock_guard lk(d->mu); }
    d->cv.notify_all();
    { std::lock_guard lk(d->copy_mu); }
    d->copy_cv.notify_all();
  }
  for (auto& d : dev_) {
    if (!d) continue;
    if (d->compute.joinable()) d->compute.join();
    if (d->copier.joinable()) d->copier.join();
  }
}

double Runtime::now() const {
  return Stopwatch::seconds_since(t0_);
}

void Runtime::wake() {
  { std::lock_guard lk(ctl_mu_); }
  ctl_cv_.notify_one();
}

void Runtime::fail(const std::string& message) {
  {
    std::lock_guard lk(ctl_mu_);
    if (error_.empty()) error_ = message;
    abort_ = true;
  }
  ctl_cv_.notify_one();
}

void Runtime::compute_loop(DeviceId d) {
  t_worker = d;
  backend_->attach(d);
  if (std::count(cfg_.local.begin(), cfg_.local.end(), 0) > 0) {  // polls a transport when idle:
    prctl(PR_SET_TIMERSLACK, 1000UL);                             // its naps end on time,
    set_time_slice(100000);  // and its wake-ups preempt a thread sharing its core
  }
  Device& dv = *dev_[static_cast<std::size_t>(d)];
  Clock::time_point idle_since{};  // when the worker last ran out of ops (polling only)
  bool idle = false;
  while (true) {
    const NodeId v = next_op(dv);
    if (v == -2) return;
    if (v == -1) {  // nothing to run: make the transport's progress
      if (!idle) idle_since = Clock::now(), idle = true;
      try_poll();
      // Spin while a message is likely close (the core is this worker's), then nap: a long wait
      // leaves the core to the rank's other threads.
      if (!pinned_ || Clock::now() - idle_since > std::chrono::microseconds(200))
        std::this_thread::sleep_for(std::chrono::microseconds(10));
      continue;
    }
    idle = false;
    if (!abort_) execute(d, v);
    in_flight_.fetch_sub(1);
    if (polling_) try_poll();  // post this op's sends at once, take delivery of arrivals
  }
}

NodeId Runtime::next_op(Device& dv) {
  std::unique_lock lk(dv.mu);
  dv.cv.wait(lk, [&] { return stop_.load() || !dv.ready.empty() || polling_.load(); });
  if (stop_) return -2;
  if (dv.ready.empty()) return -1;
  std::pop_heap(dv.ready.begin(), dv.ready.end(), [](const ReadyItem& a, const ReadyItem& b) {
    return later(a.key, a.v, b.key, b.v);
  });
  const NodeId v = dv.ready.back().v;
  dv.ready.pop_back();
  in_flight_.fetch_add(1);
  return v;
}

void Runtime::try_poll() {
  std::unique_lock lk(poll_mu_, std::try_to_lock);
  if (!lk.owns_lock() || !polling_) return;
  try {
    transport_->poll(*this);
    if (done_.load() == local_total_ && transport_->idle() && !transport_done_.exchange(true))
      wake();
  } catch (const std::exception& e) {
    fail(fmt::format("transport failed: {}", e.what()));
  }
}

// Starts (on) or ends the workers' polling of transport_ (controller thread). Once it has ended,
// no worker is inside transport_->poll().
void Runtime::set_polling(bool on) {
  {
    std::lock_guard lk(poll_mu_);
    polling_ = on;
  }
  if (!on) return;
  for (auto& d : dev_) {
    if (!d) continue;
    { std::lock_guard lk(d->mu); }
    d->cv.notify_all();
  }
}

void Runtime::copy_loop(DeviceId d) {
  backend_->attach(d);
  Device& dv = *dev_[static_cast<std::size_t>(d)];
  while (true) {
    CopyJob job;
    {
      std::unique_lock lk(dv.copy_mu);
      dv.copy_cv.wait(lk, [&] { return stop_.load() || !dv.copies.empty(); });
      if (stop_) return;
      job = dv.copies.front();
      dv.copies.pop_front();
      in_flight_.fetch_add(1);
    }
    if (!abort_) copy(d, job);
    in_flight_.fetch_sub(1);
    // Sharing the compute worker's core, and preferred by the scheduler for its short slice, the
    // copy worker would run its whole queue while a ready op waits (up to 1.8 ms of a 14 ms run,
    // docs/engine.md). The simulator starts a ready op at once: let it go first.
    if (pinned_ && has_ready(dv)) std::this_thread::yield();
  }
}

bool Runtime::has_ready(Device& dv) {
  std::lock_guard lk(dv.mu);
  return !dv.ready.empty();
}

void Runtime::execute(DeviceId d, NodeId v) {
  Device& dv = *dev_[static_cast<std::size_t>(d)];
  const auto vi = static_cast<std::size_t>(v);
  dv.running = v;
  rec_->start[vi] = now();
  std::optional<DeviceInterval> timed;
  try {
    if (cfg_.fault.kind != FaultInjection::Kind::none && cfg_.fault.node == v) {
      if (cfg_.fault.kind == FaultInjection::Kind::fail)
        throw std::runtime_error("injected fault (test hook)");
      if (cfg_.fault.kind == FaultInjection::Kind::trap) {
        backend_->launch_trap(d, v);
        throw std::runtime_error("the injected device fault did not fault (test hook)");
      }
      while (!abort_) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      dv.running = -1;
      return;
    }
    const KernelPlan& k = plan_->kernels[vi];
    dv.ins.clear();
    for (const View& in : k.in) dv.ins.push_back(buffer(d, in.src));
    timed = backend_->launch(d, v, dv.ins, buffer(d, v));
  } catch (const std::exception& e) {
    dv.running = -1;
    fail(fmt::format("kernel of op {} ({}) on device {} failed: {}", v, g_->label(v), d, e.what()));
    return;
  }
  if (timed) rec_->start[vi] = timed->start;  // the device's clock, when it has one
  const double f = timed ? timed->finish : now();
  rec_->finish[vi] = f;
  dv.running = -1;
  const auto b = static_cast<std::size_t>(dest_begin_[vi]),
             e = static_cast<std::size_t>(dest_begin_[vi + 1]);
  bool stamped = false;
  double copied = f;  // producer mode: when the worker's previous copy of v ended
  for (std::size_t i = b; i < e; ++i) {
    const DeviceId to = dests_[i];
    if (is_local(to)) {
      if (cfg_.copies == CopyMode::producer && !cfg_.link.enabled())
        copied = copy_now(d, to, v, copied);
      else
        push_copy(to, {v, d, f, false});
    } else {
      if (!stamped) {  // the trailer carries the finish time to the receiver
        std::memcpy(host_floats(d, v) + plan_->kernels[vi].numel, &f, sizeof(double));
        stamped = true;
      }
      transport_->send(v, d, to, f);
    }
  }
  for (NodeId w : g_->successors(v))
    if (assign_[w] == d && pending_[static_cast<std::size_t>(w)].fetch_sub(1) == 1) make_ready(w);
  if (done_.fetch_add(1) + 1 == local_total_) wake();
}

void Runtime::copy(DeviceId d, const CopyJob& job) {
  Device& dv = *dev_[static_cast<std::size_t>(d)];
  const auto ui = static_cast<std::size_t>(job.u);
  double t_start = job.remote ? job.t_send : now();
  const std::int64_t numel = plan_->kernels[ui].numel;
  const double bytes = 4.0 * static_cast<double>(numel);
  std::optional<DeviceInterval> timed;
  if (!job.remote) {
    try {
      timed = backend_->copy(job.u, job.from, d, static_cast<std::size_t>(numel));
    } catch (const std::exception& e) {
      fail(fmt::format("copy of op {} ({}) from device {} to {} failed: {}", job.u,
                       g_->label(job.u), job.from, d, e.what()));
      return;
    }
    if (timed) t_start = timed->start;
  }
  if (cfg_.link.enabled()) {
    const double deadline = t_start + cfg_.link.min_seconds(job.from, d, bytes);
    while (true) {
      const double rem = deadline - now();
      if (rem <= 0 || abort_) break;
      if (rem > 200e-6) {
        std::this_thread::sleep_for(std::chrono::duration<double>(rem - 100e-6));
      } else {
        std::this_thread::yield();
      }
    }
  }
  // Emulated links end on the host's clock (they pace what the device did); else the device's.
  const double t_end = timed && !cfg_.link.enabled() ? timed->finish : now();
  dv.transfers.push_back({job.u, job.from, d, bytes, t_start, t_end, {d}});
  arrived(job.u, d);
}

double Runtime::copy_now(DeviceId from, DeviceId to, NodeId u, double t_start) {
  const std::int64_t numel = plan_->kernels[static_cast<std::size_t>(u)].numel;
  std::optional<DeviceInterval> timed;
  try {
    timed = backend_->copy(u, from, to, static_cast<std::size_t>(numel));
  } catch (const std::exception& e) {
    fail(fmt::format("copy of op {} ({}) from device {} to {} failed: {}", u, g_->label(u), from,
                     to, e.what()));
    return t_start;
  }
  if (timed) t_start = timed->start;
  const double t_end = timed ? timed->finish : now();
  dev_[static_cast<std::size_t>(from)]->sent.push_back(
      {u, from, to, 4.0 * static_cast<double>(numel), t_start, t_end, {to}});
  arrived(u, to);
  return t_end;
}

void Runtime::arrived(NodeId u, DeviceId d) {
  for (NodeId w : g_->successors(u))
    if (assign_[w] == d && pending_[static_cast<std::size_t>(w)].fetch_sub(1) == 1) make_ready(w);
}

void Runtime::make_ready(NodeId v) {
  const auto vi = static_cast<std::size_t>(v);
  rec_->ready[vi] = now();
  const double key = fifo_ ? static_cast<double>(seq_.fetch_add(1)) : rank_[vi];
  Device& dv = *dev_[static_cast<std::size_t>(assign_[vi])];
  {
    std::lock_guard lk(dv.mu);
    if (abort_) return;
    dv.ready.push_back({key, v});
    std::push_heap(dv.ready.begin(), dv.ready.end(), [](const ReadyItem& a, const ReadyItem& b) {
      return later(a.key, a.v, b.key, b.v);
    });
  }
  dv.cv.notify_one();
}

void Runtime::push_copy(DeviceId to, const CopyJob& job) {
  Device& dv = *dev_[static_cast<std::size_t>(to)];
  {
    std::lock_guard lk(dv.copy_mu);
    if (abort_) return;
    dv.copies.push_back(job);
  }
  dv.copy_cv.notify_one();
}

void Runtime::deliver(NodeId u, DeviceId from, DeviceId to, double t_send) {
  if (t_worker != to || cfg_.link.enabled()) {  // another device's, or link emulation: its copier
    push_copy(to, {u, from, t_send, true});
    return;
  }
  const double bytes = 4.0 * static_cast<double>(plan_->kernels[static_cast<std::size_t>(u)].numel);
  dev_[static_cast<std::size_t>(to)]->received.push_back({u, from, to, bytes, t_send, now(), {to}});
  arrived(u, to);
}

void Runtime::prepare(std::span<const DeviceId> device_of, DispatchRule rule,
                      std::span<const NodeId> order) {
  assign_ = device_of.data();
  fifo_ = rule == DispatchRule::fifo;
  if (!fifo_)
    for (std::size_t i = 0; i < order.size(); ++i)
      rank_[static_cast<std::size_t>(order[i])] = static_cast<double>(i);
  dest_begin_.assign(static_cast<std::size_t>(n_) + 1, 0);
  dests_.clear();
  std::fill(dev_stamp_.begin(), dev_stamp_.end(), -1);
  local_total_ = 0;
  const auto ensure = [&](DeviceId d, NodeId v) {
    backend_->ensure(
        d, v,
        static_cast<std::size_t>(plan_->kernels[static_cast<std::size_t>(v)].numel + kTrailer));
  };
  for (NodeId u = 0; u < n_; ++u) {
    const auto ui = static_cast<std::size_t>(u);
    const DeviceId du = device_of[ui];
    pending_[ui].store(static_cast<int>(g_->predecessors(u).size()));
    dest_begin_[ui] = static_cast<EdgeId>(dests_.size());
    if (is_local(du)) {
      ++local_total_;
      ensure(du, u);
    }
    for (NodeId w : g_->successors(u)) {
      const DeviceId dw = device_of[static_cast<std::size_t>(w)];
      if (dw == du || dev_stamp_[static_cast<std::size_t>(dw)] == u) continue;
      dev_stamp_[static_cast<std::size_t>(dw)] = u;
      dests_.push_back(dw);
      if (is_local(dw)) ensure(dw, u);
    }
  }
  dest_begin_[static_cast<std::size_t>(n_)] = static_cast<EdgeId>(dests_.size());
  for (auto& d : dev_)
    if (d) {
      d->transfers.clear();
      d->sent.clear();
      d->received.clear();
    }
  done_ = 0;
  seq_ = 0;
  error_.clear();
  abort_ = false;
}

void Runtime::abort_and_drain() {
  abort_ = true;
  const auto clear = [&] {
    for (auto& d : dev_) {
      if (!d) continue;
      {
        std::lock_guard lk(d->mu);
        d->ready.clear();
      }
      std::lock_guard lk(d->copy_mu);
      d->copies.clear();
    }
  };
  clear();
  while (in_flight_.load() != 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  clear();
}

void Runtime::run(std::span<const DeviceId> device_of, DispatchRule rule,
                  std::span<const NodeId> order, Transport* transport, RunRecord& rec) {
  prepare(device_of, rule, order);
  transport_ = transport;
  rec.ready.assign(static_cast<std::size_t>(n_), -1.0);
  rec.start.assign(static_cast<std::size_t>(n_), -1.0);
  rec.finish.assign(static_cast<std::size_t>(n_), -1.0);
  rec.transfers.clear();
  rec_ = &rec;
  if (transport) transport->begin_run(*this, device_of);  // ends with the ranks' clocks aligned
  t0_ = Clock::now();
  backend_->begin_run(t0_);  // the devices' clocks start with the Runtime's
  if (transport) {           // the workers poll it between their ops and while they have none
    transport_done_ = false;
    set_polling(true);
  }
  const auto deadline = cfg_.timeout > 0 ? t0_ + std::chrono::duration_cast<Clock::duration>(
                                                     std::chrono::duration<double>(cfg_.timeout))
                                         : Clock::time_point::max();
  // Sources by in-degree (not by pending count: workers start decrementing at once).
  for (NodeId v = 0; v < n_; ++v)
    if (is_local(device_of[static_cast<std::size_t>(v)]) && g_->predecessors(v).empty())
      make_ready(v);
  std::string error;
  {
    std::unique_lock lk(ctl_mu_);
    while (true) {
      if (!error_.empty()) break;
      if (done_.load() == local_total_ && (!transport || transport_done_.load())) break;
      ctl_cv_.wait_until(lk, std::min(deadline, Clock::now() + std::chrono::milliseconds(100)));
      if (Clock::now() >= deadline && error_.empty()) {
        std::string running;
        for (std::size_t d = 0; d < dev_.size(); ++d)
          if (dev_[d] && dev_[d]->running.load() >= 0)
            running += fmt::format("{}op {} ({}) on device {}", running.empty() ? "" : ", ",
                                   dev_[d]->running.load(), g_->label(dev_[d]->running.load()), d);
        error_ = fmt::format("run timed out after {} s: {} of {} ops finished{}", cfg_.timeout,
                             done_.load(), local_total_,
                             running.empty() ? "" : "; still running: " + running);
        abort_ = true;
        break;
      }
    }
    error = error_;
  }
  if (transport) set_polling(false);
  if (!error.empty()) {
    abort_and_drain();
    throw EngineError(error);
  }
  while (in_flight_.load() != 0) std::this_thread::yield();
  rec.makespan = 0;
  for (NodeId v = 0; v < n_; ++v)
    rec.makespan = std::max(rec.makespan, rec.finish[static_cast<std::size_t>(v)]);
  for (auto& d : dev_)
    if (d) {
      rec.transfers.insert(rec.transfers.end(), d->transfers.begin(), d->transfers.end());
      rec.transfers.insert(rec.transfers.end(), d->sent.begin(), d->sent.end());
      rec.transfers.insert(rec.transfers.end(), d->received.begin(), d->received.end());
    }
  std::sort(rec.transfers.begin(), rec.transfers.end(),
            [](const TransferRecord& a, const TransferRecord& b) {
              return a.start < b.start || (a.start == b.start && a.src < b.src);
            });
}

}  // namespace doppler::engine_detail
