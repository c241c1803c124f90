// Tensors stored as bf16 (`--gpu-dtype bf16`) checked on the host before a GPU runs them: the
// conversion, every kernel of the device path against the CPU kernels on the same rounded
// inputs, and whole runs of the CPU engine with EngineOptions::gpu_split (--verify's reference
// for a bf16 GPU run, which stores bf16 and copies bf16 between its devices) against an
// independent emulation (tests' HostExec<Bf16>: the element functions, GEMMs summed in double,
// each result rounded once) and against the exact f32 kernels.
#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "device_ops_check.hpp"
#include "engine/device_ops.hpp"
#include "engine/host_device_exec.hpp"
#include "engine/runtime.hpp"
#include "engine_support.hpp"
#include "node_errors.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

namespace dev = engine_detail::dev;
using engine_detail::Plan;

float via_bf16(float x) {
  return dev::as_f32(dev::to_bf16(x));
}

TEST(Bf16Storage, ConversionRoundsToNearestEven) {
  const float ulp = std::ldexp(1.0f, -7);  // bf16's step just above 1
  EXPECT_EQ(via_bf16(1.0f), 1.0f);
  EXPECT_EQ(via_bf16(1.0f + ulp / 2), 1.0f);                   // a tie: to the even neighbour
  EXPECT_EQ(via_bf16(1.0f + 3 * ulp / 2), 1.0f + 2 * ulp);     // a tie: to the even neighbour
  EXPECT_EQ(via_bf16(1.0f + ulp / 2 + ulp / 64), 1.0f + ulp);  // above the tie
  EXPECT_EQ(via_bf16(-1.0f - ulp), -1.0f - ulp);               // kept, with its sign
  EXPECT_EQ(dev::to_bf16(1.0f).bits, 0x3f80);
  EXPECT_EQ(dev::to_bf16(-2.0f).bits, 0xc000);
  EXPECT_TRUE(std::signbit(via_bf16(-0.0f)));
  EXPECT_EQ(via_bf16(INFINITY), INFINITY);
  EXPECT_EQ(via_bf16(-INFINITY), -INFINITY);
  EXPECT_EQ(via_bf16(std::numeric_limits<float>::max()), INFINITY);  // past bf16's largest
  EXPECT_EQ(via_bf16(3.3895314e38f), 3.3895314e38f);                 // bf16's largest
  EXPECT_TRUE(std::isnan(via_bf16(NAN)));
  // a NaN whose payload lies in the dropped bits stays a NaN (rounding would make it infinite)
  EXPECT_TRUE(std::isnan(via_bf16(std::bit_cast<float>(std::uint32_t{0x7f800001}))));
  // subnormals round like the rest (bf16 keeps f32's exponent range, with 7 mantissa bits)
  EXPECT_EQ(via_bf16(std::ldexp(1.0f, -133)), std::ldexp(1.0f, -133));  // bf16's smallest
  EXPECT_EQ(via_bf16(std::numeric_limits<float>::denorm_min()), 0.0f);  // below half of it
  EXPECT_EQ(via_bf16(std::ldexp(1.0f, -134) + std::ldexp(1.0f, -140)), std::ldexp(1.0f, -133));
}

// The same rounding as the GEMM operands' of `--gpu-math bf16` (host_device_exec.cpp, a
// separate implementation) on a million random finite values, and the nearest bf16 each time.
TEST(Bf16Storage, ConversionAgreesWithTheGemmOperandRoundingAndIsNearest) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<std::uint32_t> bits;
  int checked = 0;
  while (checked < 1000000) {
    const float x = std::bit_cast<float>(bits(rng));
    if (!std::isfinite(x)) continue;
    ++checked;
    const float r = via_bf16(x);
    ASSERT_EQ(std::bit_cast<std::uint32_t>(r) & 0xffffu, 0u) << x;
    if (!std::isfinite(r)) continue;  // rounded past the largest bf16
    ASSERT_EQ(r, engine_detail::round_gemm_operand(GpuDevices::Math::bf16, x)) << x;
    // no bf16 neighbour of r is nearer to x
    const auto u = std::bit_cast<std::uint32_t>(r);
    for (const std::uint32_t n : {u + 0x10000u, u - 0x10000u}) {
      const float y = std::bit_cast<float>(n);
      if (std::isfinite(y)) {
        ASSERT_LE(std::abs(double{r} - x), std::abs(double{y} - x)) << x;
      }
    }
  }
}

TEST(Bf16Storage, EveryKernelOfTheWorkloadsAgreesWithTheCpuKernelsRounded) {
  std::set<engine_detail::KernelOp> seen;
  for (const auto& w : test::small_workloads(2)) {
    const auto s = test::expect_bf16_device_path_agrees(w.graph, KernelMode::real, w.label);
    seen.insert(s.begin(), s.end());
  }
  EXPECT_TRUE(seen.count(engine_detail::KernelOp::gemm));
  EXPECT_TRUE(seen.count(engine_detail::KernelOp::rotary));
  EXPECT_TRUE(seen.count(engine_detail::KernelOp::reduce));
}

// The workloads' graphs, training ones included, with a wider Llama layer.
std::vector<test::SmallWorkload> workloads() {
  std::vector<test::SmallWorkload> w = test::small_workloads(2);
  w.push_back(test::wide_llama_layer());
  return w;
}

// --verify's tolerance for bf16 tensors (apps/doppler/cmd_execute.cpp, verify_tolerance).
constexpr double kBf16StorageTolerance = 2e-2;

// The CPU engine storing bf16 on 2 devices (a random placement, so that blocks cross between
// them) gives the emulation's outputs up to sums in another order, which now and then round to
// the other neighbour and carry that step on; every output it reads back is a bf16; against the
// exact f32 kernels the forward graphs move by about what one rounding per node implies.
TEST(Bf16Storage, TheGpuSplitEngineStoresBf16AsTheEmulationDoes) {
  std::mt19937_64 rng(11);
  for (const auto& w : workloads()) {
    EngineOptions o;
    o.devices = 2;
    o.kernels = KernelMode::real;
    o.gpu_split = true;
    o.gpu.storage = GpuDevices::Storage::bf16;
    Engine engine(w.graph, o);
    engine.run(test::random_assignment(w.graph, 2, rng));
    const auto got = test::all_outputs(engine);
    for (const auto& out : got)
      for (float x : out) ASSERT_EQ(std::bit_cast<std::uint32_t>(x) & 0xffffu, 0u) << w.label;
    engine_detail::configure_process();
    const Plan plan = engine_detail::compile_plan(w.graph, KernelMode::real, 1.0);
    test::HostExec<dev::Bf16> exec(plan);
    const auto emulated = test::run_end_to_end<dev::Bf16>(plan, w.graph, &exec);
    const auto exact = test::run_end_to_end<float>(plan, w.graph, nullptr);
    const test::WorstNode e = test::worst_node(w.graph, got, emulated);
    const test::WorstNode f = test::worst_node(w.graph, got, exact);
    std::cout << w.label << ": bf16 storage against the emulation " << e.error << " (" << e.name
              << "), against f32 " << f.error << " (" << f.name << ")\n";
    EXPECT_LT(e.error, kBf16StorageTolerance / 10) << w.label << ": " << e.name;
    EXPECT_GT(f.error, std::ldexp(1.0, -9) / 5) << w.label;  // the rounding is there
  }
}

// A HostExec that counts its aggregate launches.
class CountingExec : public test::HostExec<dev::Bf16> {
public:
  using HostExec::HostExec;
  void aggregate(const dev::AggregateArgs& a, const dev::Operands<dev::Bf16>& in,
                 dev::Bf16* out) override {
    ++aggregates;
    HostExec::aggregate(a, in, out);
  }
  int aggregates = 0;
};

// An aggregate of k bf16 blocks (the partial products of a GEMM whose contracted label is cut k
// ways) is their sum in f32, in block order, rounded once per launch; a launch takes 8 blocks,
// a later one the running sum and 7 more. Adding the blocks one at a time, rounding each partial
// sum as a framework adding bf16 tensors does, lands elsewhere in some elements (checked, so
// that this test tells the two apart).
TEST(Bf16Storage, AnAggregateRoundsOncePerLaunchOfEightBlocks) {
  for (const int k : {5, 8, 9, 16}) {
    workloads::BlockedProgram p(workloads::DType::f32);
    const auto& a = p.input("a", {4, 16}, 0.5, 1.0);  // in [0.5, 1.5): partial sums grow
    const auto& b = p.input("b", {16, 6}, 0.5, 1.0);
    std::vector<std::int64_t> cuts;
    for (int j = 0; j <= k; ++j) cuts.push_back(16 * j / k);
    p.einsum("mm", "ab,bc->ac", {&a, &b}, {{'b', cuts}});
    const Graph g = p.build({"aggregate", "test", {}});
    const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
    CountingExec exec(plan);
    const auto out = test::run_end_to_end<dev::Bf16>(plan, g, &exec);
    const int launches = k <= 8 ? 1 : 1 + (k - 8 + 6) / 7;
    EXPECT_EQ(exec.aggregates, launches) << k << " blocks";
    int aggregates = 0, differs = 0;
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      const auto& kp = plan.kernels[static_cast<std::size_t>(v)];
      if (kp.op != engine_detail::KernelOp::aggregate) continue;
      ++aggregates;
      ASSERT_EQ(kp.in.size(), static_cast<std::size_t>(k));
      for (std::size_t i = 0; i < static_cast<std::size_t>(kp.numel); ++i) {
        float once = 0, each = 0;  // rounded per launch / per partial sum
        for (int j = 0; j < k; ++j) {
          const auto& view = kp.in[static_cast<std::size_t>(j)];
          ASSERT_EQ(view.offset, 0);  // each block a buffer of the output's shape
          const float x = out[static_cast<std::size_t>(view.src)][i];
          once = j == 0 ? x : once + x;
          each = j == 0 ? x : via_bf16(each + x);
          if (j >= 7 && (j - 7) % 7 == 0) once = via_bf16(once);  // a launch ends
        }
        EXPECT_EQ(out[static_cast<std::size_t>(v)][i], via_bf16(once)) << k << " blocks, " << i;
        differs += via_bf16(once) != each;
      }
    }
    EXPECT_EQ(aggregates, 1) << k << " blocks";
    EXPECT_GT(differs, 0) << k << " blocks: rounding each partial sum would pass too";
  }
}

TEST(Bf16Storage, TensorCoreMathOtherThanBf16IsABadRequest) {
  GpuDevices g;
  g.storage = GpuDevices::Storage::bf16;
  EXPECT_EQ(effective_gpu_math(g), GpuDevices::Math::bf16);
  g.math = GpuDevices::Math::tf32;
  EXPECT_THROW(effective_gpu_math(g), InputError);
  g.storage = GpuDevices::Storage::f32;
  EXPECT_EQ(effective_gpu_math(g), GpuDevices::Math::tf32);
  EXPECT_EQ(gpu_storage_bytes(GpuDevices::Storage::bf16), 2);
  EXPECT_EQ(gpu_storage_bytes(GpuDevices::Storage::f32), 4);
  EXPECT_THROW(parse_gpu_storage("f16"), InputError);
}

}  // namespace
}  // namespace doppler
