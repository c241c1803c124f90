// The MPI backend: a Runtime per rank for its own devices, and a Transport that moves outputs
// between ranks with non-blocking point-to-point messages posted and tested by the rank's compute
// workers, between their ops and while they have none, one thread at a time
// (MPI_THREAD_SERIALIZED). Each message carries the block plus a trailer with the
// producer's finish time (seconds since the run's start, clocks aligned by a barrier).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include <fmt/format.h>
#include <mpi.h>

#include "../plan.hpp"
#include "../runtime.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/mpi_backend.hpp"
#include "doppler/engine/mpi_world.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

using engine_detail::kTrailer;
using engine_detail::Runtime;

namespace {

// Moves outputs between ranks.
class MpiTransport : public engine_detail::Transport {
public:
  MpiTransport(const Graph& g, const engine_detail::Plan& plan, const std::vector<int>& owner,
               int rank)
      : g_(&g), plan_(&plan), owner_(&owner), rank_(rank) {
    int flag = 0;
    int* ub = nullptr;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
    tag_ub_ = flag && ub ? *ub : 32767;
    const long long max_tag =
        static_cast<long long>(g.num_nodes()) * static_cast<long long>(owner.size());
    if (max_tag > tag_ub_)
      throw InputError(
          fmt::format("--backend mpi: {} nodes x {} devices exceed the MPI tag limit {}",
                      g.num_nodes(), owner.size(), tag_ub_));
  }

  void begin_run(Runtime& rt, std::span<const DeviceId> device_of) override {
    rt_ = &rt;
    recvs_.clear();
    recv_meta_.clear();
    sends_.clear();
    const int p = rt.devices();
    for (NodeId u = 0; u < g_->num_nodes(); ++u) {
      const DeviceId from = device_of[static_cast<std::size_t>(u)];
      if (owner(from) == rank_) continue;
      std::vector<char> seen(static_cast<std::size_t>(p), 0);
      for (NodeId w : g_->successors(u)) {
        const DeviceId to = device_of[static_cast<std::size_t>(w)];
        if (to == from || owner(to) != rank_ || seen[static_cast<std::size_t>(to)]) continue;
        seen[static_cast<std::size_t>(to)] = 1;
        recvs_.emplace_back();
        recv_meta_.push_back({u, from, to});
        MPI_Irecv(rt.host_floats(to, u), count(u), MPI_FLOAT, owner(from), tag(u, to, p),
                  MPI_COMM_WORLD, &recvs_.back());
      }
    }
    recv_left_ = static_cast<int>(recvs_.size());
    MPI_Barrier(MPI_COMM_WORLD);  // every receive is posted; clocks start together
  }

  void send(NodeId u, DeviceId from, DeviceId to, double /*t*/) override {
    std::lock_guard lk(mu_);
    outbox_.push_back({u, from, to});  // posted by the worker's next poll, right after the op
  }

  void poll(Runtime& rt) override {
    std::vector<Msg> out;
    {
      std::lock_guard lk(mu_);
      out.swap(outbox_);
    }
    for (const Msg& m : out) {
      sends_.emplace_back();
      MPI_Isend(rt.host_floats(m.from, m.u), count(m.u), MPI_FLOAT, owner(m.to),
                tag(m.u, m.to, rt.devices()), MPI_COMM_WORLD, &sends_.back());
      ++send_left_;
    }
    if (recv_left_ > 0) {
      int n = 0;
      idx_.resize(recvs_.size());
      MPI_Testsome(static_cast<int>(recvs_.size()), recvs_.data(), &n, idx_.data(),
                   MPI_STATUSES_IGNORE);
      for (int i = 0; n != MPI_UNDEFINED && i < n; ++i) {
        const Msg& m = recv_meta_[static_cast<std::size_t>(idx_[static_cast<std::size_t>(i)])];
        double t_send = 0;
        std::memcpy(&t_send, rt.host_floats(m.to, m.u) + numel(m.u), sizeof(double));
        rt.deliver(m.u, m.from, m.to, t_send);
        --recv_left_;
      }
    }
    if (send_left_ > 0) {
      int n = 0;
      idx_.resize(sends_.size());
      MPI_Testsome(static_cast<int>(sends_.size()), sends_.data(), &n, idx_.data(),
                   MPI_STATUSES_IGNORE);
      if (n != MPI_UNDEFINED) send_left_ -= n;
    }
  }

  bool idle() const override {
    std::lock_guard lk(mu_);
    return outbox_.empty() && send_left_ == 0 && recv_left_ == 0;
  }

private:
  struct Msg {
    NodeId u;
    DeviceId from, to;
  };
  int owner(DeviceId d) const { return (*owner_)[static_cast<std::size_t>(d)]; }
  std::int64_t numel(NodeId u) const { return plan_->kernels[static_cast<std::size_t>(u)].numel; }
  int count(NodeId u) const { return static_cast<int>(numel(u) + kTrailer); }
  static int tag(NodeId u, DeviceId to, int p) { return u * p + to; }

  const Graph* g_;
  const engine_detail::Plan* plan_;
  const std::vector<int>* owner_;
  int rank_;
  int tag_ub_ = 32767;
  Runtime* rt_ = nullptr;
  mutable std::mutex mu_;
  std::vector<Msg> outbox_;
  std::vector<MPI_Request> sends_, recvs_;
  std::vector<Msg> recv_meta_;
  std::vector<int> idx_;
  int recv_left_ = 0, send_left_ = 0;
};

}  // namespace

struct MpiEngine::Impl {
  const Graph* graph = nullptr;
  EngineOptions options;
  bool owns_mpi = false;
  int rank = 0, ranks = 1;
  std::vector<int> owner;
  engine_detail::Plan plan;
  std::unique_ptr<Runtime> runtime;
  std::unique_ptr<MpiTransport> transport;
  std::vector<DeviceId> last;
  std::vector<std::string> warnings;
  engine_detail::RunRecord rec;
};

MpiEngine::MpiEngine(const Graph& g, EngineOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.graph = &g;
  m.options = options;
  try {
    m.owns_mpi = init_mpi_serialized();
  } catch (const std::runtime_error& e) {
    throw EngineError(fmt::format("--backend mpi: {}", e.what()));
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &m.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &m.ranks);
  const int p = options.devices;
  if (p < m.ranks || p > kMaxDevices)
    throw InputError(
        fmt::format("--backend mpi: {} devices for {} ranks (need at least one "
                    "device per rank, at most {})",
                    p, m.ranks, kMaxDevices));
  for (DeviceId d = 0; d < p; ++d)
    m.owner.push_back(static_cast<int>(static_cast<long long>(d) * m.ranks / p));
  engine_detail::configure_process();
  m.plan = engine_detail::compile_plan(g, options.kernels, options.synthetic_scale);
  engine_detail::RuntimeConfig cfg;
  cfg.devices = p;
  cfg.pin = options.pin_threads;
  cfg.copies = options.copies;
  cfg.link = options.link;
  cfg.fault = options.fault;
  cfg.timeout = options.timeout_seconds;
  int local = 0;
  for (DeviceId d = 0; d < p; ++d) {
    cfg.local.push_back(m.owner[static_cast<std::size_t>(d)] == m.rank ? 1 : 0);
    local += cfg.local.back();
  }
  m.runtime = std::make_unique<Runtime>(g, m.plan, cfg);
  m.transport = std::make_unique<MpiTransport>(g, m.plan, m.owner, m.rank);
  if (local > m.runtime->cores())
    m.warnings.push_back(fmt::format("rank {}: {} devices on {} usable cores: workers share cores",
                                     m.rank, local, m.runtime->cores()));
}

EngineFactory MpiEngine::factory() {
  return [](const Graph& g, const EngineOptions& o) -> std::unique_ptr<EngineRunner> {
    return std::make_unique<MpiEngine>(g, o);
  };
}

MpiEngine::~MpiEngine() {
  Impl& m = *impl_;
  m.transport.reset();
  m.runtime.reset();
  int fin = 0;
  MPI_Finalized(&fin);
  if (m.owns_mpi && !fin) MPI_Finalize();
}

int MpiEngine::rank() const {
  return impl_->rank;
}
int MpiEngine::ranks() const {
  return impl_->ranks;
}
int MpiEngine::owner(DeviceId d) const {
  return impl_->owner.at(static_cast<std::size_t>(d));
}

EngineResult MpiEngine::run(const Assignment& a, DispatchRule rule) {
  Impl& m = *impl_;
  a.validate(*m.graph, 0, "assignment");
  if (a.devices != m.options.devices)
    throw InputError(fmt::format("--backend mpi: the assignment uses {} devices, the engine {}",
                                 a.devices, m.options.devices));
  if (rule == DispatchRule::priority && a.order.empty())
    throw InputError("dispatch rule 'priority' needs an order in the assignment");
  m.last.clear();
  try {
    m.runtime->run(a.device_of, rule, a.order, m.transport.get(), m.rec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "doppler: error (rank %d): %s\n", m.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }
  m.last = a.device_of;
  const int n = m.graph->num_nodes();
  engine_detail::RunRecord merged = m.rec;
  MPI_Allreduce(&m.rec.makespan, &merged.makespan, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (auto* v : {&merged.ready, &merged.start, &merged.finish}) {
    std::vector<double> mine = *v;
    MPI_Reduce(mine.data(), v->data(), n, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
  }
  std::vector<double> flat;
  for (const TransferRecord& t : m.rec.transfers)
    flat.insert(flat.end(), {static_cast<double>(t.src), static_cast<double>(t.from),
                             static_cast<double>(t.to), t.bytes, t.start, t.finish});
  int count = static_cast<int>(flat.size());
  std::vector<int> counts(static_cast<std::size_t>(m.ranks)), displs(counts.size());
  MPI_Gather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(m.rank == 0 ? total : 0));
  MPI_Gatherv(flat.data(), count, MPI_DOUBLE, all.data(), counts.data(), displs.data(), MPI_DOUBLE,
              0, MPI_COMM_WORLD);
  if (m.rank == 0) {
    merged.transfers.clear();
    for (std::size_t i = 0; i + 5 < all.size(); i += 6) {
      const auto to = static_cast<DeviceId>(all[i + 2]);
      merged.transfers.push_back({static_cast<NodeId>(all[i]),
                                  static_cast<DeviceId>(all[i + 1]),
                                  to,
                                  all[i + 3],
                                  all[i + 4],
                                  all[i + 5],
                                  {to}});
    }
    std::sort(merged.transfers.begin(), merged.transfers.end(),
              [](const TransferRecord& x, const TransferRecord& y) {
                return x.start < y.start || (x.start == y.start && x.src < y.src);
              });
  }
  return engine_detail::to_result(
      *m.graph, a.device_of, a.devices, m.rank == 0 ? merged : [&] {
        engine_detail::RunRecord own = m.rec;
        own.makespan = merged.makespan;
        return own;
      }());
}

Measurement MpiEngine::measure(const Assignment& a, DispatchRule rule, int repeat, int warmup) {
  return measure_runs([&] { return run(a, rule); }, repeat, warmup);
}

std::vector<float> MpiEngine::gather_output(NodeId v) {
  Impl& m = *impl_;
  if (m.last.empty() || v < 0 || v >= m.graph->num_nodes()) return {};
  const DeviceId d = m.last[static_cast<std::size_t>(v)];
  const int src = owner(d);
  const auto numel = static_cast<int>(m.plan.kernels[static_cast<std::size_t>(v)].numel);
  std::vector<float> out;
  if (m.rank == 0) {
    out.resize(static_cast<std::size_t>(numel));
    if (src == 0) {
      std::memcpy(out.data(), m.runtime->host_floats(d, v), out.size() * sizeof(float));
    } else {
      MPI_Recv(out.data(), numel, MPI_FLOAT, src, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  } else if (m.rank == src) {
    MPI_Send(m.runtime->host_floats(d, v), numel, MPI_FLOAT, 0, 0, MPI_COMM_WORLD);
  }
  return out;
}

std::string MpiEngine::describe() const {
  const Impl& m = *impl_;
  std::string kernels = kernel_mode_name(m.plan.mode);
  if (m.plan.mode == KernelMode::real) kernels += " (OpenBLAS, 1 thread per worker)";
  if (m.plan.mode == KernelMode::synthetic)
    kernels += fmt::format(" (scale {:.3g} FLOP and byte per cost unit)", m.plan.scale);
  return fmt::format(
      "mpi engine, {} devices over {} ranks (device d on rank floor(d R / P)), {} kernels, link "
      "emulation {}",
      m.options.devices, m.ranks, kernels, m.options.link.label());
}

KernelMode MpiEngine::kernel_mode() const {
  return impl_->plan.mode;
}

double MpiEngine::total_flops() const {
  return impl_->plan.total_flops;
}

const std::vector<std::string>& MpiEngine::warnings() const {
  return impl_->warnings;
}

}  // namespace doppler
