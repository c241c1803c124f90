// The Engine on the CUDA backend (Backend::cuda). Without a driver or GPU (CI) asking for it is
// the one-line "no CUDA driver or GPU" error and the GPU checks skip with it. With a GPU: every
// node's output equals the CPU engine's within f32 rounding (the kernels' math is checked on the
// host by tests/engine/test_device_ops.cpp; here the launches, copies and memory), the times
// come from the device and make a valid dataflow execution, and bad requests are InputErrors.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/cuda/driver_api.hpp"
#include "support/support.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/engine/gpus.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

#define DOPPLER_REQUIRE_GPU() \
  if (const std::string why = cuda_detail::no_gpu_reason(); !why.empty()) GTEST_SKIP() << why

Graph workload(const std::string& name, bool training, int devices) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = {{"dim", "64"}, {"heads", "4"}, {"ffn", "96"}, {"seq", "32"}};
  if (name == "ffnn") s.params = {{"batch", "64"}, {"dim", "16"}, {"hidden", "64"}};
  s.dtype = "f32";
  s.devices = devices;
  s.training = training;
  return workloads::generate_workload(s);
}

EngineOptions cuda_options(int devices, int partitions) {
  enable_cuda_backend();
  EngineOptions o;
  o.devices = devices;
  o.backend = Backend::cuda;
  o.gpu.partitions = partitions;
  return o;
}

Assignment random_assignment(const Graph& g, int devices, unsigned seed) {
  std::mt19937 rng(seed);
  Assignment a;
  a.devices = devices;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    a.device_of.push_back(static_cast<DeviceId>(rng() % static_cast<unsigned>(devices)));
  return a;
}

// L2 error of `got` relative to `want` (equal elements, infinities included, add none).
double rel_error(std::span<const float> got, std::span<const float> want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (std::isfinite(want[i])) den += double{want[i]} * want[i];
    if (got[i] == want[i]) continue;  // equal infinities (masked scores) agree
    num += (double{got[i]} - want[i]) * (double{got[i]} - want[i]);
  }
  return num == 0 ? 0.0 : std::sqrt(num / std::max(den, 1e-300));
}

TEST(CudaEngine, WithoutAGpuItIsTheDriversOneLineError) {
  const std::string why = cuda_detail::no_gpu_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is present";
  const Graph g = workload("ffnn", false, 2);
  try {
    Engine e(g, cuda_options(2, 2));
    FAIL() << "an Engine on the CUDA backend was made without a GPU";
  } catch (const EngineError& e) {
    EXPECT_EQ(std::string(e.what()), why);
  }
}

// Every node's output against the CPU engine on one device (running the GPU's kernel split with
// its GEMM rounding and tensor storage, as --verify does); op times inside the run, and each op
// starts after its inputs arrived.
void expect_matches_cpu(const Graph& g, const EngineOptions& o, unsigned seed,
                        double tolerance = 1e-4) {
  EngineOptions cpu;
  cpu.devices = 1;
  cpu.gpu_split = true;
  cpu.gpu.math = o.gpu.math;
  cpu.gpu.storage = o.gpu.storage;
  Engine ref(g, cpu);
  Assignment one;
  one.devices = 1;
  one.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  ref.run(one);
  Engine gpu(g, o);
  const Assignment a = random_assignment(g, o.devices, seed);
  const EngineResult r = gpu.run(a);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto want = ref.output(v);
    const auto got = gpu.output(v);
    ASSERT_EQ(got.size(), want.size()) << g.label(v);
    EXPECT_LE(rel_error(got, want), tolerance) << g.label(v);
    const auto i = static_cast<std::size_t>(v);
    EXPECT_LE(0.0, r.schedule.start[i]) << g.label(v);
    EXPECT_LE(r.schedule.start[i], r.schedule.finish[i]) << g.label(v);
    EXPECT_LE(r.schedule.finish[i], r.makespan_seconds * (1 + 1e-9)) << g.label(v);
    for (NodeId u : g.predecessors(v))
      EXPECT_LE(r.schedule.finish[static_cast<std::size_t>(u)], r.schedule.start[i] + 1e-6)
          << g.label(u) << " -> " << g.label(v);
  }
  EXPECT_GT(r.makespan_seconds, 0);
}

TEST(CudaEngine, PartitionsComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  expect_matches_cpu(workload("ffnn", false, 2), cuda_options(2, 2), 1);
  expect_matches_cpu(workload("llama-block", false, 4), cuda_options(4, 4), 2);
  expect_matches_cpu(workload("llama-block", true, 2), cuda_options(2, 2), 3);
}

TEST(CudaEngine, CopiesStagedThroughTheHostDeliverTheSameBlocks) {
  DOPPLER_REQUIRE_GPU();
  EngineOptions o = cuda_options(4, 4);
  o.gpu.link = GpuDevices::Link::host;
  expect_matches_cpu(workload("llama-block", false, 4), o, 8);
}

TEST(CudaEngine, AWholeGpuComputesWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  expect_matches_cpu(workload("llama-block", false, 1), cuda_options(1, 0), 4);
}

// Tensor Core GEMMs (operands rounded to tf32 or bf16) within the tolerance of --verify, on a
// forward graph and a training one (ReLU's gradient: ffnn).
TEST(CudaEngine, TensorCoreGemmsStayWithinTheirTolerance) {
  DOPPLER_REQUIRE_GPU();
  for (const Graph& g : {workload("llama-block", false, 2), workload("ffnn", true, 2)}) {
    EngineOptions o = cuda_options(2, 2);
    o.gpu.math = GpuDevices::Math::tf32;
    expect_matches_cpu(g, o, 6, 1e-2);
    o.gpu.math = GpuDevices::Math::bf16;
    expect_matches_cpu(g, o, 7, 1e-2);
  }
}

// bf16 tensors (--gpu-dtype bf16): within --verify's tolerance of the CPU engine storing bf16, on
// a forward graph and a training one, with raw and host-staged copies (2 bytes an element); every
// output read back is a bf16.
TEST(CudaEngine, Bf16TensorsStayWithinTheirTolerance) {
  DOPPLER_REQUIRE_GPU();
  for (const Graph& g : {workload("llama-block", false, 4), workload("ffnn", true, 4)}) {
    EngineOptions o = cuda_options(4, 4);
    o.gpu.storage = GpuDevices::Storage::bf16;
    expect_matches_cpu(g, o, 12, 2e-2);
    o.gpu.link = GpuDevices::Link::host;
    expect_matches_cpu(g, o, 13, 2e-2);
    Engine e(g, o);
    e.run(random_assignment(g, 4, 14));
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      for (float x : e.output(v))
        ASSERT_EQ(std::bit_cast<std::uint32_t>(x) & 0xffffu, 0u) << g.label(v);
  }
}

TEST(CudaEngine, RepeatedRunsGiveTheSameOutputs) {
  DOPPLER_REQUIRE_GPU();
  const Graph g = workload("llama-block", false, 2);
  Engine e(g, cuda_options(2, 2));
  const Assignment a = random_assignment(g, 2, 5);
  e.run(a);
  std::vector<std::vector<float>> first;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto s = e.output(v);
    first.emplace_back(s.begin(), s.end());
  }
  e.run(a);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto s = e.output(v);
    EXPECT_EQ(std::vector<float>(s.begin(), s.end()), first[static_cast<std::size_t>(v)])
        << g.label(v);
  }
}

// Synthetic kernels scaled so that the buffers exceed any GPU's memory: the run fails with the
// allocation's error, and the GPU still serves the next engine.
TEST(CudaEngine, OutOfDeviceMemoryIsAnErrorAndTheNextEngineWorks) {
  DOPPLER_REQUIRE_GPU();
  const Graph g = workload("ffnn", false, 2);
  EngineOptions huge = cuda_options(2, 2);
  huge.kernels = KernelMode::synthetic;
  huge.synthetic_scale = 1e7;  // tens of GB per block
  try {
    Engine e(g, huge);
    e.run(random_assignment(g, 2, 9));
    FAIL() << "a run allocated more than the GPU holds";
  } catch (const EngineError& e) {
    EXPECT_NE(std::string(e.what()).find("out of device memory"), std::string::npos) << e.what();
  }
  expect_matches_cpu(g, cuda_options(2, 2), 10);
}

// A faulting kernel (a trap: CUDA's sticky error, after which the process cannot use the GPU)
// ends the CLI's run in one line, exit 1, without hanging; in a process of its own.
TEST(CudaEngine, AFaultingKernelEndsTheRunWithOneLine) {
  DOPPLER_REQUIRE_GPU();
  test::TempDir dir;
  const std::string g = (dir / "g.json").string(), a = (dir / "a.json").string();
  ASSERT_EQ(test::run_cli("generate llama-layer -p dim=64 -p heads=4 -p seq=32 -p ffn=96 "
                          "-p vocab=100 --dtype f32 --devices 2 -o " +
                          g)
                .exit_code,
            0);
  ASSERT_EQ(test::run_cli("place " + g + " --devices 2 --method critical-path -o " + a).exit_code,
            0);
  const auto r = test::run_cli("execute " + g + " -a " + a +
                               " --backend cuda --inject-fault trap:100 --timeout 60");
  // The fault is the context's: another device's worker may report it first.
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.rfind("doppler: error: ", 0), 0u) << r.err;
  EXPECT_NE(r.err.find(" failed: "), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// An embedding lookup: rows of a `rows` x 16 table at 4 x 8 indices in [0, rows), cut in 2 x 2.
Graph gather_graph(std::int64_t rows) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& table = p.input("table", {rows, 16});
  const double half = static_cast<double>(rows) / 2;
  const auto& ids = p.input("ids", {4, 8}, half, half);
  const auto& x = p.gather("x", table, ids, {{0, 2, 4}, {0, 8}, {0, 8, 16}});
  p.map("y", "relu", {&x}, {{0, 2, 4}, {0, 8}, {0, 8, 16}});
  return p.build({"gather", "test", {}});
}

TEST(CudaEngine, GathersComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  expect_matches_cpu(gather_graph(1000), cuda_options(2, 2), 5, 0);
  EngineOptions o = cuda_options(2, 2);
  o.gpu.storage = GpuDevices::Storage::bf16;
  expect_matches_cpu(gather_graph(200), o, 6, 0);  // indices below 256: exact in bf16
}

// A decoder: a stride-2 transposed convolution (cuBLAS GEMM, then col2im) and a bilinear
// resize, output rows cut so that windows come in two pieces.
Graph decoder_graph() {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {2, 16, 12, 10}, 1, 0, {{0, 2}, {0, 16}, {0, 6, 12}, {0, 10}});
  const auto& w = p.input("w", {8, 16, 2, 2}, 0.3);
  const auto& b = p.input("b", {8});
  workloads::Window2d s2;
  s2.stride_h = s2.stride_w = 2;
  const auto& up =
      p.conv_transpose2d("up", x, w, &b, s2, 24, 20, {{0, 1, 2}, {0, 8}, {0, 12, 24}, {0, 20}});
  workloads::Resize2d bilinear;
  bilinear.linear = true;
  bilinear.coord = resize::Coord::pytorch_half_pixel;
  p.resize2d("smooth", up, bilinear, 48, 40, {{0, 2}, {0, 4, 8}, {0, 16, 48}, {0, 40}});
  return p.build({"decoder", "test", {}});
}

TEST(CudaEngine, DecodersComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  expect_matches_cpu(decoder_graph(), cuda_options(2, 2), 7);
  EngineOptions o = cuda_options(2, 2);
  o.gpu.storage = GpuDevices::Storage::bf16;
  expect_matches_cpu(decoder_graph(), o, 8, 2e-2);
}

// A computed mask: comparisons, a connective, not, where with an infinite branch, and the
// running count of a mask (position ids).
TEST(CudaEngine, MasksComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& a = p.input("a", {8, 64}, 1, 0, {{0, 4, 8}, {0, 64}});
  const auto& b = p.input("b", {64}, 1);
  const auto& s = p.fill("s", {}, {}, {{"value", -INFINITY}});
  const std::vector<workloads::Cuts> cuts = {{0, 4, 8}, {0, 32, 64}};
  const auto& lt = p.map("lt", "less", {&a, &b}, cuts);
  const auto& ge = p.map("ge", "greater_equal", {&a, &s}, cuts);
  const auto& both = p.map("both", "and", {&lt, &ge}, cuts);
  const auto& no = p.map("no", "not", {&both}, cuts);
  p.map("masked", "where", {&no, &s, &a}, cuts);
  p.map("ids", "cumsum", {&lt}, {{0, 4, 8}, {0, 64}});  // counts: exact in f32
  const Graph g = p.build({"mask", "test", {}});
  expect_matches_cpu(g, cuda_options(2, 2), 9, 0);  // exact: selections, 0 / 1 and counts
}

// Top-k values and indices of rows (one thread per row, k passes): exact selections.
TEST(CudaEngine, TopksComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {64, 300}, 1, 0, {{0, 32, 64}, {0, 300}});
  p.topk("max8", x, 8, true, false);
  p.topk("max8i", x, 8, true, true);
  p.topk("min3i", x, 3, false, true);
  const Graph g = p.build({"topk", "test", {}});
  expect_matches_cpu(g, cuda_options(2, 2), 9, 0);
}

// Elements of each row at computed indices (gather_along), rows cut over two devices: exact.
TEST(CudaEngine, GathersAlongRowsComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {64, 200}, 1, 0, {{0, 32, 64}, {0, 200}});
  const auto& ids = p.input("ids", {64, 16}, 199, 0, {{0, 32, 64}, {0, 16}});
  p.gather_along("g", x, ids, {{0, 32, 64}, {0, 8, 16}});
  const Graph g = p.build({"gather_along", "test", {}});
  expect_matches_cpu(g, cuda_options(2, 2), 9, 0);
}

// Strided and reversed slices (kernel stride) of an input cut along both axes: exact copies.
TEST(CudaEngine, StridedSlicesComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {9, 40}, 1, 0, {{0, 4, 9}, {0, 17, 40}});
  p.strided("rows", x, {1, 0}, {4, 40}, 0, 2);
  p.strided("flip", x, {0, 0}, {9, 40}, 1, -1);
  p.strided("back3", x, {2, 5}, {3, 12}, 1, -3);
  const Graph g = p.build({"stride", "test", {}});
  expect_matches_cpu(g, cuda_options(2, 2), 9, 0);
}

// Fused recurrent steps (an LSTM's cell and output, a GRU's step with and without Rb_n) over
// rows cut in two, f32 and bf16 storage.
TEST(CudaEngine, RecurrentCellsComputeWhatTheCpuEngineComputes) {
  DOPPLER_REQUIRE_GPU();
  workloads::BlockedProgram p(workloads::DType::f32);
  const std::int64_t h = 96;
  const std::vector<workloads::Cuts> cuts = {{0, 1}, {0, 4, 8}, {0, h}};
  const auto& gates = p.input("gates", {1, 8, 4 * h}, 3, 0, {{0, 1}, {0, 4, 8}, {0, 4 * h}});
  const auto& c = p.input("c", {1, 8, h}, 1, 0, cuts);
  const auto& x = p.input("x", {1, 8, 3 * h}, 2, 0, {{0, 1}, {0, 4, 8}, {0, 3 * h}});
  const auto& hr = p.input("hr", {1, 8, 3 * h}, 2, 0, {{0, 1}, {0, 4, 8}, {0, 3 * h}});
  const auto& rb = p.input("rb", {1, 1, h}, 1, 0, {{0, 1}, {0, 1}, {0, h}});
  const auto& c2 = p.cell("c2", "lstm_cell", {&gates, &c}, {1, 8, h}, cuts, 12);
  p.cell("h2", "lstm_hidden", {&gates, &c2}, {1, 8, h}, cuts, 6);
  p.cell("g4", "gru_cell", {&x, &hr, &c, &rb}, {1, 8, h}, cuts, 17);
  p.cell("g3", "gru_cell", {&x, &hr, &c}, {1, 8, h}, cuts, 16);
  const Graph g = p.build({"cells", "test", {}});
  expect_matches_cpu(g, cuda_options(2, 2), 10);
  EngineOptions o = cuda_options(2, 2);
  o.gpu.storage = GpuDevices::Storage::bf16;
  expect_matches_cpu(g, o, 11, 2e-2);
}

// bf16 holds whole numbers exactly only up to 256: a table of more rows is a bad request, said
// before any GPU is looked for (so also here, without one).
TEST(CudaEngine, Bf16StorageRefusesIndicesOfLongerTables) {
  EngineOptions o = cuda_options(1, 1);
  o.gpu.storage = GpuDevices::Storage::bf16;
  try {
    Engine e(gather_graph(300), o);
    FAIL() << "no error";
  } catch (const InputError& e) {  // nodes 0-3: the index and table blocks
    EXPECT_EQ(std::string(e.what()),
              "node 4 gathers rows of a 300-row table, and --gpu-dtype bf16 holds indices exactly "
              "only up to 256: use --gpu-dtype f32");
  }
  workloads::BlockedProgram p(workloads::DType::f32);  // gather_along: elements of 300-rows
  const auto& x = p.input("x", {4, 300});
  p.gather_along("g", x, p.input("ids", {4, 2}, 299), {{0, 4}, {0, 2}});
  try {
    Engine e(p.build({"along", "test", {}}), o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 2 gathers elements of 300-element rows, and --gpu-dtype bf16 holds indices "
              "exactly only up to 256: use --gpu-dtype f32");
  }
  const std::string why = cuda_detail::no_gpu_reason();
  if (why.empty()) GTEST_SKIP() << "a GPU is present: the accepted requests run elsewhere";
  for (const std::int64_t rows : {256, 300})  // accepted: then the driver's error
    try {
      EngineOptions f = o;
      if (rows == 300) f.gpu.storage = GpuDevices::Storage::f32;
      Engine e(gather_graph(rows), f);
      FAIL() << "an Engine on the CUDA backend was made without a GPU";
    } catch (const EngineError& e) {
      EXPECT_EQ(std::string(e.what()), why) << rows;
    }
}

// The same for the argmax of an axis longer than 256 (its index would be rounded).
TEST(CudaEngine, Bf16StorageRefusesArgmaxOfLongerAxes) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {2, 300}, 1, 0, {{0, 2}, {0, 300}});
  p.reduce("i", "reduce_argmax", x);
  const Graph g = p.build({"argmax", "test", {}});
  EngineOptions o = cuda_options(1, 1);
  o.gpu.storage = GpuDevices::Storage::bf16;
  try {
    Engine e(g, o);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "node 1 takes the index of the largest of 300 elements, and --gpu-dtype bf16 holds "
              "indices exactly only up to 256: use --gpu-dtype f32");
  }
}

TEST(CudaEngine, FewerPartitionsThanDevicesAreABadRequest) {
  DOPPLER_REQUIRE_GPU();
  const Graph g = workload("ffnn", false, 2);
  EXPECT_THROW(Engine(g, cuda_options(4, 2)), InputError);
  EXPECT_NO_THROW(Engine(g, cuda_options(2, 4)));  // the first two of four
  EngineOptions o = cuda_options(2, 0);
  o.gpu.gpus = {0, 999};
  EXPECT_THROW(Engine(g, o), InputError);
}

}  // namespace
}  // namespace doppler
