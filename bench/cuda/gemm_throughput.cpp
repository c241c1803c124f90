// bench_cuda_gemm: issue 49's GEMM targets on one GPU split into P SM partitions (green contexts).
//  1. One partition: a chain of L square n x n GEMMs through the engine, every op on device 0 of
//     P, against the same GEMM calls back to back on that partition's stream (cuBLAS alone, a
//     handle told the partition's SMs, as the engine's). Target: the engine at least 80%.
//  2. Every partition at once: P such chains through the engine, chain c on device c, against
//     the P x L GEMMs back to back on the whole GPU (cuBLAS alone, no partition). Target: 90%.
// Throughput counts the GEMMs' FLOPs over the time from the first GEMM's start to the last one's
// finish (device events for cuBLAS, the engine's measured schedule for the engine), the median of
// --repeat runs after one unmeasured run. Exit 0 when measured (met or not: the output says),
// 1 when CUDA fails ("no CUDA driver or GPU: ..." without one), 2 for a bad request.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "engine/cuda/context_scope.hpp"
#include "engine/cuda/cublas_api.hpp"
#include "engine/cuda/cuda_exec.hpp"
#include "engine/cuda/driver_api.hpp"
#include "engine/cuda/green_partitions.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/gpus.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/median_interval.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace {

using namespace doppler;
using cuda_detail::check;
using cuda_detail::check_blas;

struct Settings {
  std::int64_t n = 4096;  // GEMM size (n x n times n x n)
  int layers = 8;         // GEMMs per chain
  int partitions = 4;     // P
  int repeat = 5;         // measured runs (after one unmeasured)
  int gpu = 0;            // CUDA ordinal
  std::string math = "f32";
  std::string dtype = "f32";  // tensors' storage type
  bool json = false;
};

double gemm_flops(const Settings& s) {
  return 2.0 * static_cast<double>(s.n) * static_cast<double>(s.n) * static_cast<double>(s.n);
}

// ---- cuBLAS alone ----

// Device memory of a raw chain: an input, a weight and two outputs taken in turn (n x n of T,
// float or bf16).
template <class T>
class RawBuffers {
public:
  explicit RawBuffers(std::int64_t n) : n_(n) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<T> host(static_cast<std::size_t>(n * n));
    for (T*& p : bufs_) {
      check(cudaMalloc(reinterpret_cast<void**>(&p), host.size() * sizeof(T)), "cudaMalloc");
      for (T& x : host) engine_detail::dev::put(&x, u(rng));
      check(cudaMemcpy(p, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice),
            "cudaMemcpy");
    }
  }
  ~RawBuffers() {
    for (T* p : bufs_) cudaFree(p);
  }
  RawBuffers(const RawBuffers&) = delete;
  RawBuffers& operator=(const RawBuffers&) = delete;

  // GEMM i of a chain: out_i = in_i W, in_0 the input, then the previous output.
  engine_detail::GemmCall<T> call(int i) const {
    engine_detail::GemmCall<T> g;
    g.m = g.n = g.k = g.lda = g.ldb = g.ldc = n_;
    g.a = i == 0 ? bufs_[0] : bufs_[2 + (i + 1) % 2];
    g.b = bufs_[1];
    g.c = bufs_[2 + i % 2];
    return g;
  }

private:
  std::int64_t n_;
  T* bufs_[4] = {};
};

// Median seconds of `gemms` GEMMs back to back on `stream`, from events around them (made in
// `ctx`, the stream's context: a partition's, or null for the primary one), tensors stored as T
// (the engine's GEMM calls: bf16 tensors take Tensor Cores whatever `math` says).
template <class T>
double time_raw(cudaStream_t stream, CUcontext ctx, int sms, cublasComputeType_t math, int gemms,
                const Settings& s) {
  RawBuffers<T> bufs(s.n);
  const cuda_detail::CublasApi& api = cuda_detail::cublas_api();
  cublasHandle_t blas = nullptr;
  check_blas(api.cublasCreate_v2(&blas), "cublasCreate");
  cudaEvent_t ev[2] = {};
  std::vector<double> times;
  try {
    check_blas(api.cublasSetStream_v2(blas, stream), "cublasSetStream");
    if (sms > 0) check_blas(api.cublasSetSmCountTarget(blas, sms), "cublasSetSmCountTarget");
    {
      const cuda_detail::ContextScope in(ctx);
      for (cudaEvent_t& e : ev) check(cudaEventCreate(&e), "cudaEventCreate");
    }
    cuda_detail::ExecResources r;
    r.stream = stream;
    r.blas = blas;
    r.math = math;
    cuda_detail::CudaExec<T> exec(r);
    for (int run = 0; run <= s.repeat; ++run) {
      check(cudaEventRecord(ev[0], stream), "cudaEventRecord");
      for (int i = 0; i < gemms; ++i) exec.gemm(bufs.call(i));
      check(cudaEventRecord(ev[1], stream), "cudaEventRecord");
      check(cudaEventSynchronize(ev[1]), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, ev[0], ev[1]), "cudaEventElapsedTime");
      if (run > 0) times.push_back(ms * 1e-3);
    }
  } catch (...) {
    for (cudaEvent_t e : ev) cudaEventDestroy(e);
    api.cublasDestroy_v2(blas);
    throw;
  }
  for (cudaEvent_t e : ev) cudaEventDestroy(e);
  api.cublasDestroy_v2(blas);
  return median_interval(times).median;
}

cublasComputeType_t compute_type(GpuDevices::Math m) {
  if (m == GpuDevices::Math::tf32) return CUBLAS_COMPUTE_32F_FAST_TF32;
  if (m == GpuDevices::Math::bf16) return CUBLAS_COMPUTE_32F_FAST_16BF;
  return CUBLAS_COMPUTE_32F;
}

// ---- the engine ----

// `chains` chains of s.layers GEMMs y = y W (W scaled so that values keep their magnitude).
Graph chains_graph(int chains, const Settings& s) {
  workloads::BlockedProgram prog(workloads::DType::f32);
  for (int c = 0; c < chains; ++c) {
    const std::string id = std::to_string(c);
    const auto* y = &prog.input("x" + id, {s.n, s.n});
    const auto& w = prog.input("w" + id, {s.n, s.n}, std::sqrt(3.0 / static_cast<double>(s.n)));
    for (int l = 0; l < s.layers; ++l)
      y = &prog.einsum("y" + id + "_" + std::to_string(l), "ij,jk->ik", {y, &w}, {});
  }
  GraphMeta meta;
  meta.name = "gemm-chains";
  return prog.build(std::move(meta));
}

// Chain c's ops (named x<c>, w<c>, y<c>_<l>) on device c of s.partitions.
Assignment chains_assignment(const Graph& g, const Settings& s) {
  Assignment a;
  a.devices = s.partitions;
  for (const Node& node : g.nodes())
    a.device_of.push_back(static_cast<DeviceId>(std::stoi(node.name.substr(1))));
  return a;
}

// Median seconds from the first GEMM's start to the last one's finish over s.repeat runs of
// `chains` chains, chain c on device c of P.
double time_engine(int chains, GpuDevices::Math math, GpuDevices::Storage dtype,
                   const Settings& s) {
  const Graph g = chains_graph(chains, s);
  EngineOptions o;
  o.devices = s.partitions;
  o.kernels = KernelMode::real;
  o.backend = Backend::cuda;
  o.gpu.partitions = s.partitions;
  o.gpu.gpus = {s.gpu};
  o.gpu.math = math;
  o.gpu.storage = dtype;
  Engine engine(g, o);
  const Assignment a = chains_assignment(g, s);
  std::vector<double> spans;
  for (int run = 0; run <= s.repeat; ++run) {
    const Schedule sch = engine.run(a).schedule;
    double first = INFINITY, last = 0;
    for (std::size_t v = 0; v < g.nodes().size(); ++v) {
      if (g.nodes()[v].flops <= 0) continue;
      first = std::min(first, sch.start[v]);
      last = std::max(last, sch.finish[v]);
    }
    if (run > 0) spans.push_back(last - first);
  }
  return median_interval(spans).median;
}

// ---- the two targets ----

nlohmann::json target(double cublas_s, double engine_s, double flops, double goal) {
  const double ratio = cublas_s / engine_s;
  return {{"cublas_tflops", flops / cublas_s * 1e-12},
          {"engine_tflops", flops / engine_s * 1e-12},
          {"ratio", ratio},
          {"target", goal},
          {"met", ratio >= goal}};
}

nlohmann::json measure(const Settings& s) {
  const GpuDevices::Storage dtype = parse_gpu_storage(s.dtype);
  GpuDevices spec;
  spec.math = parse_gpu_math(s.math);
  spec.storage = dtype;
  const GpuDevices::Math math = effective_gpu_math(spec);
  const bool bf16 = dtype == GpuDevices::Storage::bf16;
  const auto raw = bf16 ? &time_raw<engine_detail::dev::Bf16> : &time_raw<float>;
  const double chain_flops = gemm_flops(s) * s.layers;
  const std::vector<GpuInfo> gpus = list_gpus();
  if (s.gpu < 0 || s.gpu >= static_cast<int>(gpus.size()))
    throw InputError("--gpu " + std::to_string(s.gpu) + ": this machine has " +
                     std::to_string(gpus.size()) + " GPUs");
  double raw_part = 0, raw_whole = 0;
  int part_sms = 0;
  {
    cuda_detail::GreenPartitions parts(s.gpu, s.partitions);
    part_sms = parts[0].sms;
    raw_part = raw(parts[0].compute, parts[0].ctx, part_sms, compute_type(math), s.layers, s);
  }
  {
    cudaStream_t whole = nullptr;
    check(cudaStreamCreateWithFlags(&whole, cudaStreamNonBlocking), "cudaStreamCreate");
    try {
      raw_whole = raw(whole, nullptr, 0, compute_type(math), s.partitions * s.layers, s);
    } catch (...) {
      cudaStreamDestroy(whole);
      throw;
    }
    cudaStreamDestroy(whole);
  }
  enable_cuda_backend();
  const double eng_part = time_engine(1, math, dtype, s);
  const double eng_all = time_engine(s.partitions, math, dtype, s);
  const GpuInfo& info = gpus[static_cast<std::size_t>(s.gpu)];
  return {{"gpu", info.name},
          {"sms", info.sms},
          {"partitions", s.partitions},
          {"partition_sms", part_sms},
          {"n", s.n},
          {"layers", s.layers},
          {"math", gpu_math_name(math)},
          {"dtype", s.dtype},
          {"repeat", s.repeat},
          {"one_partition", target(raw_part, eng_part, chain_flops, 0.8)},
          {"all_partitions", target(raw_whole, eng_all, chain_flops * s.partitions, 0.9)}};
}

void print_table(const nlohmann::json& j) {
  std::printf(
      "%s, %d SMs; %d partitions of %d SMs; %d GEMMs of %lld^3 per chain, %s math, %s tensors\n",
      j["gpu"].get<std::string>().c_str(), j["sms"].get<int>(), j["partitions"].get<int>(),
      j["partition_sms"].get<int>(), j["layers"].get<int>(), j["n"].get<long long>(),
      j["math"].get<std::string>().c_str(), j["dtype"].get<std::string>().c_str());
  std::printf("%-40s %12s %12s %7s %7s\n", "", "cuBLAS TF/s", "engine TF/s", "ratio", "target");
  const auto row = [](const char* what, const nlohmann::json& t) {
    std::printf("%-40s %12.2f %12.2f %7.3f %6.2f%s\n", what, t["cublas_tflops"].get<double>(),
                t["engine_tflops"].get<double>(), t["ratio"].get<double>(),
                t["target"].get<double>(), t["met"].get<bool>() ? "" : " (not met)");
  };
  row("one partition (cuBLAS on it alone)", j["one_partition"]);
  row("all partitions (cuBLAS on the whole GPU)", j["all_partitions"]);
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{
      "Engine GEMM throughput on SM partitions of one GPU against cuBLAS alone "
      "(issue 49's targets: one partition >= 80%, all partitions >= 90% of the whole "
      "GPU)"};
  app.add_option("--n", s.n, "GEMM size n (n x n times n x n)")
      ->capture_default_str()
      ->check(CLI::Range(64, 32768));
  app.add_option("--layers", s.layers, "GEMMs per chain")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--partitions", s.partitions, "SM partitions P")
      ->capture_default_str()
      ->check(CLI::Range(1, 16));
  app.add_option("--gpu-math", s.math, "f32, tf32 or bf16 (Tensor Cores)")->capture_default_str();
  app.add_option("--gpu-dtype", s.dtype, "tensors stored as f32 or bf16 (bf16: bf16 GEMMs)")
      ->capture_default_str();
  app.add_option("--repeat", s.repeat, "measured runs (after one unmeasured)")
      ->capture_default_str()
      ->check(CLI::Range(1, 100));
  app.add_option("--gpu", s.gpu, "CUDA ordinal of the GPU")->capture_default_str();
  app.add_flag("--json", s.json, "print one JSON object");
  CLI11_PARSE(app, argc, argv);
  try {
    const nlohmann::json j = measure(s);
    if (s.json)
      std::cout << j.dump() << "\n";
    else
      print_table(j);
    return 0;
  } catch (const InputError& e) {
    std::cerr << "bench_cuda_gemm: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench_cuda_gemm: error: " << e.what() << "\n";
    return 1;
  }
}
