// One calibration of the real threads engine (two devices, one measured run per benchmark, one
// kernel of each kind of benchmark: --kernels, which a full calibration under ASan took 152 s
// of), checked for what holds on any machine: every benchmark took a positive, finite time on
// every device, the largest GEMM longer than the smallest, copies a positive bandwidth, and the
// profile written from it prices an op at least the launch overhead. No timing bound: it runs
// beside other tests. It runs under the sanitizers only: there it is the calibration's real-engine
// path
// (`make test-asan` leaves out CalibratedPrediction.KnownChainsArePredictedWithin25Percent, which
// times that path alone, 70 s there); elsewhere that check and
// CliCalibrate.WritesAProfileTheSimulatorAcceptsAndValidateSimUsesIt take it, with more checks.
#include <algorithm>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "support/sanitized.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/profile.hpp"
#include "doppler/validate/calibrate.hpp"

namespace doppler {
namespace {

bool positive(double x) {
  return std::isfinite(x) && x > 0;
}

TEST(RealCalibration, EveryBenchmarkIsMeasuredAndTheProfilePricesOps) {
  if (!test::kSanitized)
    GTEST_SKIP() << "run under the sanitizers only: CalibratedPrediction.KnownChains... and "
                    "CliCalibrate.WritesAProfile... take this path here";
  CalibrationOptions o;
  o.devices = 2;
  o.repeat = 1;
  // unary, binary, ternary, recurrent, reduction, aggregate, constant and data-movement kernels
  o.kernels = {"silu", "cos",  "add",      "where",  "lstm_cell", "reduce_sum", "topk",
               "sum",  "fill", "assemble", "stride", "gather",    "resize2d",   "transpose"};
  const Calibration cal = calibrate(o);
  EXPECT_EQ(cal.devices, 2);
  ASSERT_FALSE(cal.kernels.empty());
  const KernelSample* smallest = nullptr;
  const KernelSample* largest = nullptr;
  for (const KernelSample& k : cal.kernels) {
    EXPECT_TRUE(positive(k.seconds)) << k.what;
    EXPECT_TRUE(k.device_seconds.empty() || k.device_seconds.size() == 2) << k.what;
    for (double s : k.device_seconds) EXPECT_TRUE(positive(s)) << k.what;
    if (k.kind != "einsum") continue;
    if (smallest == nullptr || k.flops < smallest->flops) smallest = &k;
    if (largest == nullptr || k.flops > largest->flops) largest = &k;
  }
  ASSERT_NE(smallest, nullptr);
  ASSERT_GE(largest->flops, 64 * smallest->flops);  // 16^3 .. 512^3 or so
  EXPECT_GT(largest->seconds, smallest->seconds);
  ASSERT_FALSE(cal.copies.empty());
  for (const CopySample& c : cal.copies) EXPECT_TRUE(positive(c.bytes) && positive(c.seconds));
  EXPECT_TRUE(positive(cal.bandwidth));
  EXPECT_GE(cal.latency, 0);
  EXPECT_GE(cal.delay, 0);
  ASSERT_EQ(cal.device_slowdown.size(), 2u);
  for (double s : cal.device_slowdown) EXPECT_GE(s, 1);
  EXPECT_FALSE(cal.kernel_costs.empty());

  // A GEMM of the largest benchmarked size, priced by the profile written from it.
  GraphBuilder b;
  Node gemm;
  gemm.kind = OpKind::einsum;
  gemm.name = "gemm";
  gemm.flops = largest->flops;
  gemm.out_bytes = 4;
  b.add_node(gemm);
  const Graph g = b.build();
  const HardwareProfile hw =
      parse_hardware_profile(calibration_profile_json(cal, "real", "switch"), "real.json");
  const double priced = Platform::hardware(hw, 2).cost_model(g).compute(0, 0);
  EXPECT_GE(priced, cal.launch_overhead);
  EXPECT_LT(priced, 10.0);
}

}  // namespace
}  // namespace doppler
