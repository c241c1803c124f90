// Tensor Core GEMMs (`--gpu-math tf32|bf16`) on the host, to check `execute --verify` before a
// GPU runs them. An independent emulation (tests' HostExec: GEMM operands rounded to nearest,
// tf32 keeping 10 mantissa bits and bf16 7, products summed in double) runs every node on the
// emulated outputs of the nodes before it, as on the GPU, so that the rounding carries through
// the layers. Against the exact f32 kernels the forward graphs move by what the rounding implies,
// while ReLU's gradient flips; against --verify's reference for a GPU run (the CPU engine with
// EngineOptions::gpu_split: the GPU's kernel split, GEMM operands rounded likewise) only the
// order of sums differs, on every graph.
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "device_ops_check.hpp"
#include "engine/host_device_exec.hpp"
#include "engine/kernel_driver.hpp"
#include "engine/runtime.hpp"
#include "engine_support.hpp"
#include "node_errors.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using engine_detail::Plan;

using Math = GpuDevices::Math;

using test::worst_node;
using test::WorstNode;

// Every node's output of `g` run end to end through the device path with GEMM operands rounded
// as `math` says (`exact`: the CPU kernels instead, f32).
std::vector<std::vector<float>> end_to_end(const Graph& g, Math math, bool exact) {
  engine_detail::configure_process();
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  test::HostExec<float> exec(plan, math);
  return test::run_end_to_end<float>(plan, g, exact ? nullptr : &exec);
}

// The forward graphs of the small-workload suite (with `training`, its training graphs instead),
// and in the forward set the Llama layer at 4x its width.
std::vector<test::SmallWorkload> workloads(bool training) {
  std::vector<test::SmallWorkload> w;
  for (auto& x : test::small_workloads(2))
    if ((x.label.find("training") != std::string::npos) == training) w.push_back(std::move(x));
  if (training) return w;
  w.push_back(test::wide_llama_layer());
  return w;
}

std::vector<test::SmallWorkload> all_workloads() {
  auto w = workloads(false);
  for (auto& x : workloads(true)) w.push_back(std::move(x));
  return w;
}

// --verify's tolerances with --backend cuda (apps/doppler/cmd_execute.cpp, verify_tolerance),
// and the tolerances --verify had against the exact f32 kernels before its reference rounded.
constexpr double kF32Tolerance = 1e-4, kTensorCoreTolerance = 1e-2;
constexpr double kOldTf32Tolerance = 1e-2, kOldBf16Tolerance = 5e-2;

struct Errors {
  WorstNode f32, tf32, bf16;
};

// The largest node error of the emulation with each math against the exact f32 kernels.
Errors errors(const test::SmallWorkload& w) {
  const auto exact = end_to_end(w.graph, Math::f32, true);
  const auto vs_exact = [&](Math m) {
    return worst_node(w.graph, end_to_end(w.graph, m, false), exact);
  };
  Errors e{vs_exact(Math::f32), vs_exact(Math::tf32), vs_exact(Math::bf16)};
  std::cout << w.label << ": largest node error against f32: f32 " << e.f32.error << " ("
            << e.f32.name << "), tf32 " << e.tf32.error << " (" << e.tf32.name << "), bf16 "
            << e.bf16.error << " (" << e.bf16.name << ")\n";
  return e;
}

TEST(TensorCoreError, ForwardGraphsMoveFromF32AsTheRoundingImplies) {
  for (const auto& w : workloads(false)) {
    const Errors e = errors(w);
    EXPECT_LT(e.f32.error, kF32Tolerance / 4) << w.label << ": " << e.f32.name;
    // Within the old tolerances against f32, a factor of 4 to spare.
    EXPECT_LT(e.tf32.error, kOldTf32Tolerance / 4) << w.label << ": " << e.tf32.name;
    EXPECT_LT(e.bf16.error, kOldBf16Tolerance / 4) << w.label << ": " << e.bf16.name;
    // One rounding of each operand is a relative error of about 2^-11 (tf32) and 2^-8 (bf16)
    // at most, a fifth of that at least on a dot product of many terms.
    EXPECT_GT(e.tf32.error, std::ldexp(1.0, -11) / 5) << w.label;
    EXPECT_GT(e.bf16.error, std::ldexp(1.0, -8) / 5) << w.label;
  }
}

// ReLU's gradient, `x > 0 ? dy : 0`, flips where a rounded GEMM moves x across 0, and a fraction
// f of flipped elements is a norm-wise error of about sqrt(f): against the exact f32 kernels
// ffnn's training graph leaves even the old bf16 tolerance, so --verify could not compare a
// Tensor Core run with them; Llama's (SiLU, smooth) stays inside.
TEST(TensorCoreError, ReluGradientsFlipAgainstF32WhileSmoothGraphsDoNot) {
  for (const auto& w : workloads(true)) {
    const Errors e = errors(w);
    EXPECT_LT(e.f32.error, kF32Tolerance / 4) << w.label << ": " << e.f32.name;
    if (w.label.rfind("ffnn", 0) == 0)
      EXPECT_GT(e.bf16.error, kOldBf16Tolerance) << w.label << ": " << e.bf16.name;
    else
      EXPECT_LT(e.bf16.error, kOldBf16Tolerance / 4) << w.label << ": " << e.bf16.name;
  }
}

// --verify's reference for a GPU run: the CPU engine with gpu_split on 2 devices (a random
// placement) gives the independent emulation's outputs with the same rounding, on every graph
// (the training ones included, ReLU's gradient no longer flipping), within a tenth of
// --verify's tolerance.
TEST(TensorCoreError, TheGpuSplitEngineRoundsWhereTheEmulationDoes) {
  std::mt19937_64 rng(7);
  for (const Math math : {Math::f32, Math::tf32, Math::bf16}) {
    for (const auto& w : all_workloads()) {
      EngineOptions o;
      o.devices = 2;
      o.kernels = KernelMode::real;
      o.gpu_split = true;
      o.gpu.math = math;
      Engine engine(w.graph, o);
      engine.run(test::random_assignment(w.graph, 2, rng));
      const auto got = test::all_outputs(engine);
      const WorstNode e = worst_node(w.graph, got, end_to_end(w.graph, math, false));
      std::cout << w.label << " " << gpu_math_name(math) << ": gpu_split engine against the "
                << "emulation " << e.error << " (" << e.name << ")\n";
      // f32 sums against double ones; with rounding, now and then an operand across a rounding
      // boundary (one ulp of that operand).
      EXPECT_LT(e.error, math == Math::f32 ? 1e-5 : kTensorCoreTolerance / 10)
          << w.label << " " << gpu_math_name(math) << ": " << e.name;
      // and the rounding is there: bf16 moves the engine's outputs from the exact kernels
      if (math == Math::bf16) {
        EXPECT_GT(worst_node(w.graph, got, end_to_end(w.graph, Math::f32, true)).error,
                  std::ldexp(1.0, -8) / 5)
            << w.label;
      }
    }
  }
}

TEST(TensorCoreError, TheGpuSplitIsTheCpuBackendsAlone) {
  const auto w = test::small_workloads(1);
  EngineOptions o;
  o.gpu_split = true;
  o.backend = Backend::cuda;
  try {
    Engine e(w.front().graph, o);
    ADD_FAILURE() << "gpu_split with the CUDA backend was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_split"), std::string::npos) << e.what();
  }
}

TEST(TensorCoreError, RoundingIsToNearestEvenWithTheKeptBits) {
  const auto bf16 = [](float x) { return engine_detail::round_gemm_operand(Math::bf16, x); };
  const auto tf32 = [](float x) { return engine_detail::round_gemm_operand(Math::tf32, x); };
  EXPECT_EQ(bf16(1.0f), 1.0f);
  EXPECT_EQ(bf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);  // a tie: to the even neighbour
  EXPECT_EQ(bf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(bf16(1.0f + std::ldexp(1.0f, -7)), 1.0f + std::ldexp(1.0f, -7));  // kept
  EXPECT_EQ(tf32(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(tf32(1.0f + std::ldexp(1.0f, -10)), 1.0f + std::ldexp(1.0f, -10));
  EXPECT_EQ(tf32(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(bf16(-3.0f), -3.0f);
  EXPECT_EQ(engine_detail::round_gemm_operand(Math::f32, 1.0f + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -20));
  EXPECT_TRUE(std::isinf(bf16(INFINITY)));
  EXPECT_TRUE(std::isnan(bf16(NAN)));
}

}  // namespace
}  // namespace doppler
