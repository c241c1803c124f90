// doppler execute GRAPH --assignment A.json: runs an assignment on the real engine (threads on
// this machine, or MPI ranks) and reports the measured makespan.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include "commands.hpp"
#include "common.hpp"
#include "engine_options.hpp"
#include "tensor_save.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/mpi_backend.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/report/trace.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/npy.hpp"
#include "doppler/util/parse.hpp"
#include "doppler/util/progress.hpp"

namespace doppler::cli {

namespace {

struct ExecuteOptions {
  std::string graph, assignment, order = "fifo", trace, gantt, backend = "local", fault;
  int devices = 0, repeat = 5, warmup = 1;
  EngineCliOptions engine;
  std::vector<std::string> save;  // --save NAME=FILE.npy
  bool verify = false, json = false;
};

// A tensor reassembled from the blocks' outputs, to be written by --save.
struct SavedTensor {
  TensorSave request;
  std::vector<std::int64_t> shape;
  std::vector<float> values;
};

// Comparison of every node's output with a single-device run of the same kernels.
struct Verification {
  int nodes = 0;
  int identical = 0;
  double max_relative_error = 0;
  std::string worst;
  std::string reference;  // what the outputs were compared with
  // Tensor Core math: the largest error against the exact f32 CPU kernels (-1: not computed).
  double f32_error = -1;
  std::string f32_worst;
  std::string f32_cause;  // what moves the outputs: "Tensor Core GEMMs" or "bf16 tensors"
};

// Norm-wise relative error of a against b.
double rel_error(std::span<const float> a, std::span<const float> b) {
  if (a.size() != b.size()) return INFINITY;
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (static_cast<double>(a[i]) - b[i]) * (static_cast<double>(a[i]) - b[i]);
    den += static_cast<double>(b[i]) * b[i];
  }
  return num == 0 ? 0.0 : std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

// The one-device CPU run --verify compares with: the CPU kernels, or with `split` the CUDA
// backend's split of them with GEMM operands rounded as `gpu.math` says and tensors stored as
// `gpu.storage` says (where the GPU rounds).
std::unique_ptr<Engine> reference_run(const Graph& g, const EngineOptions& eo, bool split,
                                      const GpuDevices& gpu) {
  EngineOptions one = eo;
  one.devices = 1;
  one.fault = {};
  one.backend = Backend::cpu;
  one.gpu = {};
  one.gpu.math = gpu.math;
  one.gpu.storage = gpu.storage;
  one.gpu_split = split;
  auto ref = std::make_unique<Engine>(g, one);
  Assignment a;
  a.devices = 1;
  a.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  ref->run(a);
  return ref;
}

// Compares output(v) with `ref`'s for every node: identical count, largest error and its node.
template <class OutputOf>
Verification compare_outputs(const Graph& g, const Engine& ref, OutputOf& output) {
  Verification r;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const std::vector<float> got = output(v);
    const auto want = ref.output(v);
    ++r.nodes;
    if (got.size() == want.size() &&
        std::equal(got.begin(), got.end(), want.begin(),
                   [](float x, float y) { return std::memcmp(&x, &y, sizeof(float)) == 0; })) {
      ++r.identical;
      continue;
    }
    const double e = rel_error(got, want);
    if (e >= r.max_relative_error) {
      r.max_relative_error = e;
      r.worst = g.label(v);
    }
  }
  return r;
}

// Runs `g` on one device of the CPU engine and compares `output(v)` with it for every node: with
// --backend cuda the reference runs the GPU's split of the kernels with its GEMM rounding and
// tensor storage, and Tensor Core math or bf16 tensors are also compared with the exact f32
// kernels (f32_error).
template <class OutputOf>
Verification verify(const Graph& g, const EngineOptions& eo, OutputOf&& output) {
  const bool cuda = eo.backend == Backend::cuda;
  const GpuDevices gpu = cuda ? eo.gpu : GpuDevices{};
  Verification r = compare_outputs(g, *reference_run(g, eo, cuda, gpu), output);
  r.reference =
      cuda ? fmt::format("the CPU engine running the GPU's kernel split ({} GEMMs, {} tensors)",
                         gpu_math_name(gpu.math), gpu_storage_name(gpu.storage))
           : "the CPU engine";
  if (gpu.math != GpuDevices::Math::f32 || gpu.storage != GpuDevices::Storage::f32) {
    const Verification exact = compare_outputs(g, *reference_run(g, eo, false, {}), output);
    r.f32_error = exact.max_relative_error;
    r.f32_cause = gpu.storage == GpuDevices::Storage::bf16 ? "bf16 tensors" : "Tensor Core GEMMs";
    r.f32_worst = exact.worst;
  }
  return r;
}

void report(const ExecuteOptions& o, const Graph& g, const Assignment& a, const Measurement& m,
            const std::string& engine, KernelMode kernels, double total_flops,
            const Verification* ver, const std::vector<SavedTensor>& saved = {}) {
  const Schedule& s = m.median_run.schedule;
  const std::string title = fmt::format("{} on {} devices (engine, {}{})", g.meta().name, a.devices,
                                        o.backend, a.method.empty() ? "" : ", " + a.method);
  if (!o.trace.empty()) write_file_atomic(o.trace, format_chrome_trace(g, s, title));
  if (!o.gantt.empty()) write_file_atomic(o.gantt, format_gantt_svg(g, s, {title, 1400, true}));
  const auto ops = a.ops_per_device();
  if (o.json) {
    ojson j;
    j["graph"] = g.meta().name;
    j["ops"] = g.num_nodes();
    j["devices"] = a.devices;
    j["backend"] = o.backend;
    j["engine"] = engine;
    j["kernels"] = kernel_mode_name(kernels);
    j["order"] = o.order;
    j["link_emulation"] =
        LinkEmulation::from(o.engine.link_bandwidth, o.engine.link_latency, o.engine.link_profile)
            .label();
    j["warmup"] = o.warmup;
    j["repeat"] = o.repeat;
    j["makespans"] = m.makespans;
    j["makespan_median"] = m.median;
    j["makespan_min"] = m.min;
    j["makespan_max"] = m.max;
    j["makespan_median_interval"] = {
        {"low", m.interval.lo}, {"high", m.interval.hi}, {"coverage", m.interval.coverage}};
    j["total_flops"] = total_flops;
    j["gflops_per_s"] = m.median > 0 ? total_flops / m.median / 1e9 : 0.0;
    j["copies"] = s.cross_transfers;
    j["bytes_copied"] = s.cross_bytes;
    ojson devs = ojson::array();
    for (int d = 0; d < a.devices; ++d)
      devs.push_back({{"device", d},
                      {"ops", ops[static_cast<std::size_t>(d)]},
                      {"busy", s.busy[static_cast<std::size_t>(d)]},
                      {"utilization", s.utilization(d)}});
    j["per_device"] = std::move(devs);
    if (ver) {
      j["verify"] = {{"nodes", ver->nodes},
                     {"identical", ver->identical},
                     {"max_relative_error", ver->max_relative_error},
                     {"reference", ver->reference}};
      if (ver->f32_error >= 0) j["verify"]["max_relative_error_vs_f32"] = ver->f32_error;
    }
    if (!saved.empty()) {
      ojson js = ojson::array();
      for (const SavedTensor& t : saved)
        js.push_back({{"name", t.request.name}, {"file", t.request.file}, {"shape", t.shape}});
      j["saved"] = std::move(js);
    }
    print_json(j);
    return;
  }
  const auto t = [](double x) { return format_time(x, CostUnit::seconds); };
  std::cout << fmt::format("{:<16}{} ({} ops) on {} devices, order {}\n", "graph", g.meta().name,
                           g.num_nodes(), a.devices, o.order);
  std::cout << fmt::format("{:<16}{}\n", "engine", engine);
  std::cout << fmt::format("{:<16}median {}, min {}, max {} ({} runs after {} warm-up)\n",
                           "makespan", t(m.median), t(m.min), t(m.max), o.repeat, o.warmup);
  std::cout << fmt::format("{:<16}{} .. {} ({:.0f}% order-statistic interval, +-{:.1f}%)\n",
                           "  median in", t(m.interval.lo), t(m.interval.hi),
                           100 * m.interval.coverage, 100 * m.interval.relative_halfwidth());
  if (total_flops > 0)
    std::cout << fmt::format("{:<16}{:.2f} GFLOP/s ({} FLOPs per run)\n", "throughput",
                             total_flops / m.median / 1e9, format_sig(total_flops));
  std::cout << fmt::format("{:<16}{} cross-device, {} bytes\n", "copies", s.cross_transfers,
                           format_sig(s.cross_bytes));
  Table tab;
  for (const char* c : {"device", "ops", "busy", "busy %"}) tab.add_column(c);
  for (int d = 0; d < a.devices; ++d)
    tab.add_row({std::to_string(d), std::to_string(ops[static_cast<std::size_t>(d)]),
                 t(s.busy[static_cast<std::size_t>(d)]),
                 fmt::format("{:.1f}%", 100 * s.utilization(d))});
  std::cout << tab.to_text();
  if (ver) {
    if (ver->identical == ver->nodes) {
      std::cout << fmt::format("{:<16}outputs of all {} nodes identical to a single-device run\n",
                               "verify", ver->nodes);
    } else {
      std::cout << fmt::format(
          "{:<16}{} of {} nodes identical to a single-device run; max relative error {:.3g} "
          "({})\n",
          "verify", ver->identical, ver->nodes, ver->max_relative_error, ver->worst);
    }
    if (ver->f32_error >= 0)
      std::cout << fmt::format(
          "{:<16}{} move node outputs by at most {:.3g} ({}) from the exact f32 kernels\n",
          "  vs f32", ver->f32_cause, ver->f32_error, ver->f32_worst);
  }
  for (const SavedTensor& t : saved)
    std::cout << fmt::format("{:<16}{} [{}] to {}\n", "saved", t.request.name,
                             fmt::join(t.shape, ", "), t.request.file);
}

// Largest relative (L2) error --verify accepts: the same kernels on the CPU add in the same
// order up to OpenBLAS's blocking; cuBLAS and the GPU's reductions add in other orders. The
// reference of a GPU run rounds Tensor Core GEMM operands as the GPU does: against the exact
// f32 kernels ReLU's gradient flips where the rounding moves its input across 0 (0.079 on
// ffnn's training graph with bf16, tests/engine/test_tensor_core_error.cpp), beyond any
// tolerance that would still catch a bug. Sums in another order still put an operand across a
// rounding boundary now and then (up to 5.4e-4 between OpenBLAS's f32 sums and double sums
// there); 1e-2 leaves room for Tensor Cores' own accumulation (to be checked on a GPU). With bf16
// tensors every kernel's result is rounded to bf16, so a sum in another order lands on the other
// bf16 neighbour (2^-8 relative) now and then and carries it on: up to 5.9e-4 between OpenBLAS's
// sums and double ones (tests/engine/test_bf16_storage.cpp); 2e-2 leaves room for the GPU's.
double verify_tolerance(const EngineOptions& eo) {
  if (eo.backend != Backend::cuda) return 1e-5;
  if (eo.gpu.storage == GpuDevices::Storage::bf16) return 2e-2;
  return eo.gpu.math == GpuDevices::Math::f32 ? 1e-4 : 1e-2;
}

void check_verification(const Verification& v, const EngineOptions& eo) {
  if (v.max_relative_error > verify_tolerance(eo))
    throw std::runtime_error(
        fmt::format("verification failed: node {} differs from {} by {:.3g} (relative; at most "
                    "{:g} allowed)",
                    v.worst, v.reference, v.max_relative_error, verify_tolerance(eo)));
}

// "fail:NODE", "hang:NODE" or "trap:NODE" (test hook), or none when empty.
FaultInjection parse_fault(const std::string& spec, const Graph& g) {
  if (spec.empty()) return {};
  const auto colon = spec.find(':');
  std::int64_t node = -1;
  std::string why;
  const std::string kind = spec.substr(0, colon);
  using Kind = FaultInjection::Kind;
  const Kind k = kind == "fail"   ? Kind::fail
                 : kind == "hang" ? Kind::hang
                 : kind == "trap" ? Kind::trap
                                  : Kind::none;
  if (colon == std::string::npos || k == Kind::none ||
      !parse_int64(spec.substr(colon + 1), node, why) || node < 0 || node >= g.num_nodes())
    throw InputError(
        "--inject-fault: expected fail:NODE, hang:NODE or trap:NODE with a node id of the graph");
  return {k, static_cast<NodeId>(node)};
}

void run_execute(const ExecuteOptions& o) {
  const Graph g = load_graph_logged(o.graph);
  const Assignment a = load_assignment(o.assignment, g, o.devices);
  const DispatchRule rule = parse_dispatch_rule(o.order);
  if (rule == DispatchRule::priority && a.order.empty())
    throw InputError(o.assignment, 0, "--order priority needs an \"order\" in the assignment");
  EngineOptions eo =
      engine_options(o.engine, a.devices, o.backend == "cuda" ? Backend::cuda : Backend::cpu);
  eo.fault = parse_fault(o.fault, g);
  if (o.backend == "mpi" && !o.save.empty())
    throw InputError("--save is not supported with --backend mpi (run with the local backend)");
  // --save: every tensor is found and checked before anything runs.
  std::vector<TensorSave> requests;
  std::vector<TensorBlocks> tensors;
  for (const std::string& spec : o.save) {
    requests.push_back(parse_tensor_save(spec));
    tensors.push_back(find_tensor_blocks(g, requests.back().name, o.graph));
  }
  if (o.backend == "mpi") {
    MpiEngine e(g, eo);
    for (const auto& w : e.warnings()) spdlog::warn("{}", w);
    // Test hook (tests/engine/test_mpi_faults.cpp): DOPPLER_READY_DIR/rank<r> marks a rank that
    // is past MPI_Init and its setup, about to run.
    if (const char* ready = std::getenv("DOPPLER_READY_DIR"); ready && *ready)
      write_file_atomic(std::filesystem::path(ready) / ("rank" + std::to_string(e.rank())), "");
    const Measurement m = e.measure(a, rule, o.repeat, o.warmup);
    Verification ver;
    if (o.verify) {
      std::vector<std::vector<float>> outs;
      for (NodeId v = 0; v < g.num_nodes(); ++v) outs.push_back(e.gather_output(v));
      if (e.rank() == 0)
        ver = verify(g, eo, [&](NodeId v) { return outs[static_cast<std::size_t>(v)]; });
    }
    if (e.rank() != 0) return;
    report(o, g, a, m, e.describe(), e.kernel_mode(), e.total_flops(), o.verify ? &ver : nullptr);
    if (o.verify) check_verification(ver, eo);
    return;
  }
  Engine e(g, eo);
  for (const auto& w : e.warnings()) spdlog::warn("{}", w);
  if (!tensors.empty() && e.kernel_mode() != KernelMode::real)
    throw InputError(fmt::format("--save needs real kernels, but this run uses {} kernels",
                                 kernel_mode_name(e.kernel_mode())));
  Progress progress("execute", o.warmup + o.repeat);
  int done = 0;  // runs so far, warm-up ones first
  const Measurement m = measure_runs(
      [&] {
        EngineResult r = e.run(a, rule);
        if (++done <= o.warmup)
          progress.update(done);
        else
          progress.update(
              done, fmt::format("last {}", format_time(r.makespan_seconds, CostUnit::seconds)));
        return r;
      },
      o.repeat, o.warmup);
  progress.finish();
  Verification ver;
  if (o.verify)
    ver = verify(g, eo, [&](NodeId v) {
      const auto s = e.output(v);
      return std::vector<float>(s.begin(), s.end());
    });
  std::vector<SavedTensor> saved;
  for (std::size_t i = 0; i < tensors.size(); ++i)
    saved.push_back({requests[i], tensors[i].shape,
                     assemble_tensor(g, tensors[i], [&](NodeId v) { return e.output(v); })});
  report(o, g, a, m, e.describe(), e.kernel_mode(), e.total_flops(), o.verify ? &ver : nullptr,
         saved);
  if (o.verify) check_verification(ver, eo);
  for (const SavedTensor& t : saved) write_npy(t.request.file, t.shape, t.values);
}

}  // namespace

void add_execute(CLI::App& app) {
  auto o = std::make_shared<ExecuteOptions>();
  auto* cmd = app.add_subcommand(
      "execute",
      "Run an assignment on the real work-conserving engine (one compute and one copy worker "
      "thread per device, OpenBLAS kernels; or MPI ranks with --backend mpi): a warm-up run, "
      "then --repeat measured runs; prints the median/min/max makespan, per-device busy time and "
      "bytes copied. Graphs without exec descriptions run synthetic kernels sized by their costs.");
  cmd->add_option("graph", o->graph, "graph file (.txt or .json)")->required();
  cmd->add_option("-a,--assignment", o->assignment,
                  "assignment file (doppler-assignment JSON or a bare array)")
      ->required();
  add_devices_option(*cmd, o->devices, false)
      ->description("device count (default: the assignment's)");
  cmd->add_option("--order", o->order,
                  "dispatch rule among ready ops: fifo (the simulator's rule) or priority (the "
                  "assignment's order)")
      ->check(CLI::IsMember({"fifo", "priority"}))
      ->capture_default_str();
  cmd->add_option("--repeat", o->repeat, "measured runs")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--warmup", o->warmup, "unmeasured runs first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--trace", o->trace, "write a Chrome Trace Event JSON file of the median run");
  cmd->add_option("--gantt", o->gantt, "write an SVG Gantt chart of the median run");
  cmd->add_option("--backend", o->backend,
                  "local (threads), mpi (start with mpirun -np R; devices spread over ranks) or "
                  "cuda (GPU devices: SM partitions of one GPU, --gpu-partitions, or whole GPUs, "
                  "--gpus; op and copy times from CUDA events)")
      ->check(CLI::IsMember({"local", "mpi", "cuda"}))
      ->capture_default_str();
  add_engine_options(*cmd, o->engine);
  cmd->add_flag("--verify", o->verify,
                "compare every node's output with a single-device run of the CPU engine (exit 1 "
                "above 1e-5 relative error); with --backend cuda the CPU engine runs the GPU's "
                "kernel split, rounds GEMM operands as --gpu-math does and stores tensors as "
                "--gpu-dtype does (1e-4; tf32 and bf16 math 1e-2; bf16 tensors 2e-2), and Tensor "
                "Core math and bf16 tensors are also compared with the exact f32 kernels");
  cmd->add_option("--save", o->save,
                  "after the runs, write tensor NAME as a NumPy .npy file (f32), reassembled "
                  "from its blocks (nodes labelled agg:NAME[...], else NAME[...]); repeatable; "
                  "real kernels, the local and cuda backends")
      ->type_name("NAME=FILE.npy")
      ->take_all()
      ->allow_extra_args(false);
  cmd->add_flag("--json", o->json, "print one JSON object instead of text");
  cmd->add_option("--inject-fault", o->fault,
                  "test hook: fail:NODE, hang:NODE or trap:NODE (a faulting kernel on the "
                  "device)")
      ->group("");
  cmd->callback([o] { run_execute(*o); });
}

}  // namespace doppler::cli
