// The device path of kernel plans (src/engine/kernel_driver.hpp, device_ops.hpp), run on the
// host: every node of every small workload, of a blocked CNN (convolutions on the GEMM, direct
// and 1x1 paths, windows in several pieces, pools), of looped einsums and of a synthetic graph is
// run through run_with() with a host KernelExec (the element functions in loops, a plain loop for
// the GEMM calls) on the inputs the CPU engine's kernels computed, and must give run_kernel's
// output within f32 rounding. The GPU runs the same element functions and GEMM calls
// (src/engine/cuda/); what this cannot check is the launches themselves.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "device_ops_check.hpp"
#include "engine/kernel_driver.hpp"
#include "engine_support.hpp"

#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace doppler {
namespace {

using engine_detail::KernelOp;
using engine_detail::Plan;
using test::expect_device_path_agrees;
using test::HostExec;
namespace dev = engine_detail::dev;

TEST(DeviceOps, EveryNodeOfTheSmallWorkloadsAgreesWithTheCpuKernels) {
  std::set<KernelOp> seen;
  for (const auto& w : test::small_workloads(3)) {
    const auto s = expect_device_path_agrees(w.graph, KernelMode::real, w.label);
    seen.insert(s.begin(), s.end());
  }
  // The workloads cover these kinds; each was checked above.
  for (KernelOp op : {KernelOp::constant, KernelOp::gemm, KernelOp::aggregate, KernelOp::pieces,
                      KernelOp::unary, KernelOp::binary, KernelOp::reduce, KernelOp::rotary})
    EXPECT_TRUE(seen.count(op)) << "kernel op " << static_cast<int>(op) << " not covered";
}

// A small blocked CNN: a 3x3 conv with bias whose output rows are cut (windows in several
// pieces, halo rows), a strided depthwise conv (direct kernel), a 1x1 conv on a relayout (GEMM
// on the window rows), max and average pooling with padding.
Graph blocked_cnn() {
  using workloads::Window2d;
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {2, 8, 10, 10});
  const auto& w1 = p.input("w1", {16, 8, 3, 3}, 0.3);
  const auto& b1 = p.input("b1", {16});
  Window2d pad1;
  pad1.pad_h = pad1.pad_w = 1;
  const auto& c1 =
      p.conv2d("c1", x, w1, &b1, pad1, 10, 10, {{0, 1, 2}, {0, 16}, {0, 4, 10}, {0, 10}});
  const auto& r1 = p.map("r1", "relu", {&c1}, {{0, 1, 2}, {0, 16}, {0, 4, 10}, {0, 10}});
  const auto& wd = p.input("wd", {16, 1, 3, 3}, 0.5);
  Window2d dw = pad1;
  dw.groups = 16;
  dw.stride_h = dw.stride_w = 2;
  const auto& c2 = p.conv2d("c2", r1, wd, nullptr, dw, 5, 5, {{0, 2}, {0, 8, 16}, {0, 5}, {0, 5}});
  const auto& w3 = p.input("w3", {12, 16, 1, 1}, 0.4);
  const auto& c3 =
      p.conv2d("c3", c2, w3, nullptr, Window2d{}, 5, 5, {{0, 2}, {0, 12}, {0, 5}, {0, 5}});
  Window2d mp;
  mp.kernel_h = mp.kernel_w = 3;
  mp.stride_h = mp.stride_w = 2;
  mp.pad_h = mp.pad_w = 1;
  p.pool2d("mp", "maxpool2d", c3, mp, 3, 3, {{0, 2}, {0, 12}, {0, 3}, {0, 3}});
  Window2d ap;
  ap.kernel_h = ap.kernel_w = 2;
  ap.pad_h = ap.pad_w = 1;
  p.pool2d("ap", "avgpool2d", c3, ap, 6, 6, {{0, 2}, {0, 12}, {0, 3, 6}, {0, 6}});
  return p.build({"blocked-cnn", "test", {}});
}

TEST(DeviceOps, ConvolutionsAndPoolsAgreeWithTheCpuKernels) {
  const auto seen = expect_device_path_agrees(blocked_cnn(), KernelMode::real, "blocked-cnn");
  for (KernelOp op : {KernelOp::conv2d, KernelOp::maxpool2d, KernelOp::avgpool2d})
    EXPECT_TRUE(seen.count(op)) << "kernel op " << static_cast<int>(op) << " not covered";
  // with bf16 tensors (the im2col, direct and pool kernels on bf16 windows and weights)
  test::expect_bf16_device_path_agrees(blocked_cnn(), KernelMode::real, "blocked-cnn bf16");
}

// Comparisons and connectives (0 / 1) of broadcast operands, not, and where of a computed
// condition with an infinite branch (masked attention scores).
TEST(DeviceOps, ComparisonsAndWhereAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& a = p.input("a", {4, 6, 5}, 1, 0, {{0, 2, 4}, {0, 6}, {0, 5}});
  const auto& b = p.input("b", {6, 1}, 1);
  const auto& s = p.fill("s", {}, {}, {{"value", -INFINITY}});
  const std::vector<workloads::Cuts> cuts = {{0, 2, 4}, {0, 3, 6}, {0, 5}};
  for (const char* op :
       {"less", "greater", "equal", "less_equal", "greater_equal", "and", "or", "xor"})
    p.map(op, op, {&a, &b}, cuts);
  const auto& lt = p.map("lt", "less", {&a, &b}, cuts);
  p.map("not", "not", {&lt}, cuts);
  p.map("masked", "where", {&lt, &s, &a}, cuts);
  p.map("picked", "where", {&b, &a, &lt}, cuts);  // a broadcast condition
  p.expand("expanded", b, {4, 6, 5}, cuts);       // [6, 1] repeated
  p.reduce("argmax", "reduce_argmax", a);
  p.reduce("argmax_last", "reduce_argmax", lt, {{"last", 1}});  // ties everywhere
  const Graph g = p.build({"compare", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "compare");
  EXPECT_TRUE(seen.count(KernelOp::where));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "compare bf16");
}

// Fused recurrent steps over row blocks: lstm_cell and lstm_hidden of [rows, 4h] gates, gru_cell
// with and without Rb_n (one row for all), the rows cut in two.
TEST(DeviceOps, RecurrentCellsAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const std::int64_t h = 5;
  const std::vector<workloads::Cuts> rows = {{0, 1}, {0, 2, 3}};
  const auto& gates = p.input("gates", {1, 3, 4 * h}, 3, 0, {{0, 1}, {0, 2, 3}, {0, 4 * h}});
  const auto& c = p.input("c", {1, 3, h}, 1, 0, {{0, 1}, {0, 2, 3}, {0, h}});
  const auto& x = p.input("x", {1, 3, 3 * h}, 2, 0, {{0, 1}, {0, 2, 3}, {0, 3 * h}});
  const auto& hr = p.input("hr", {1, 3, 3 * h}, 2, 0, {{0, 1}, {0, 2, 3}, {0, 3 * h}});
  const auto& rb = p.input("rb", {1, 1, h}, 1, 0, {{0, 1}, {0, 1}, {0, h}});
  std::vector<workloads::Cuts> cuts = rows;
  cuts.push_back({0, h});
  const auto& c2 = p.cell("c2", "lstm_cell", {&gates, &c}, {1, 3, h}, cuts, 12);
  p.cell("h2", "lstm_hidden", {&gates, &c2}, {1, 3, h}, cuts, 6);
  p.cell("g4", "gru_cell", {&x, &hr, &c, &rb}, {1, 3, h}, cuts, 17);
  p.cell("g3", "gru_cell", {&x, &hr, &c}, {1, 3, h}, cuts, 16);
  const Graph g = p.build({"cells", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "cells");
  EXPECT_TRUE(seen.count(KernelOp::cell));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "cells bf16");
}

// Running sums of row blocks and of a transposed (strided) operand, every direction.
TEST(DeviceOps, CumsumsAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {6, 300}, 1, 0, {{0, 3, 6}, {0, 300}});
  const std::vector<workloads::Cuts> cuts = {{0, 3, 6}, {0, 300}};
  for (double exclusive : {0.0, 1.0})
    for (double reverse : {0.0, 1.0})
      p.map("s" + std::to_string(static_cast<int>(2 * exclusive + reverse)), "cumsum", {&x}, cuts,
            {{"exclusive", exclusive}, {"reverse", reverse}});
  const auto& t = p.transpose("t", x, {1, 0});
  p.map("ts", "cumsum", {&t}, t.cuts);
  const Graph g = p.build({"cumsum", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "cumsum");
  EXPECT_TRUE(seen.count(KernelOp::scan));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "cumsum bf16");
}

// Nearest and linear resizes of row-cut NCHW tensors (windows in one and two pieces), every
// coordinate transformation.
TEST(DeviceOps, ResizesAgreeWithTheCpuKernels) {
  using resize::Coord;
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {2, 4, 7, 6}, 1, 0, {{0, 2}, {0, 2, 4}, {0, 3, 7}, {0, 6}});
  const std::vector<workloads::Cuts> up = {{0, 2}, {0, 2, 4}, {0, 5, 14}, {0, 12}};
  for (int c = 0; c <= resize::kMaxCoord; ++c)
    for (bool linear : {false, true}) {
      workloads::Resize2d r;
      r.linear = linear, r.coord = static_cast<Coord>(c);
      r.rounding = static_cast<resize::Rounding>(c % (resize::kMaxRounding + 1));
      p.resize2d("r" + std::to_string(c) + (linear ? "l" : "n"), x, r, 14, 12, up);
    }
  workloads::Resize2d down;
  down.linear = true;
  p.resize2d("down", x, down, 3, 4, {{0, 2}, {0, 4}, {0, 2, 3}, {0, 4}});
  const Graph g = p.build({"resize", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "resize");
  EXPECT_TRUE(seen.count(KernelOp::resize2d));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "resize bf16");
}

// Transposed convolutions of row-cut tensors: strided, padded with output padding, grouped,
// depthwise, dilated, and a stride above the kernel (blocks of bias alone).
TEST(DeviceOps, TransposedConvolutionsAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {2, 4, 7, 5}, 1, 0, {{0, 2}, {0, 4}, {0, 3, 7}, {0, 5}});
  const auto add = [&](const std::string& name, std::int64_t oc, std::int64_t k, std::int64_t s,
                       std::int64_t pad, std::int64_t d, std::int64_t groups, std::int64_t oh,
                       std::int64_t ow) {
    workloads::Window2d g;
    g.stride_h = g.stride_w = s, g.pad_h = g.pad_w = pad, g.dil_h = g.dil_w = d;
    g.groups = groups;
    const auto& w = p.input(name + ".w", {oc, 4 / groups, k, k}, 0.4);
    const auto& b = p.input(name + ".b", {oc});
    p.conv_transpose2d(name, x, w, &b, g, oh, ow,
                       {{0, 2}, {0, oc / 2, oc}, {0, oh / 2, oh}, {0, ow}});
  };
  add("k2s2", 16, 2, 2, 0, 1, 1, 14, 10);   // runs of 16 / 2 = 8 channels: GEMMs of 32 rows
  add("k3s2p1", 6, 3, 2, 1, 1, 1, 14, 10);  // output padding 1
  add("k4s2g2", 6, 4, 2, 1, 1, 2, 14, 10);  // two groups
  add("dw", 4, 3, 1, 1, 1, 4, 7, 5);        // depthwise
  add("k3s3d2", 4, 3, 3, 2, 2, 2, 19, 13);  // dilation
  add("k1s3", 2, 1, 3, 0, 1, 1, 19, 13);    // rows of bias alone
  const Graph g = p.build({"conv-transpose", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "conv-transpose");
  EXPECT_TRUE(seen.count(KernelOp::conv_transpose2d));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "conv-transpose bf16");
}

// Einsums that are not one GEMM, GEMMs whose operands are gathered or whose output is
// scattered, transposes and reshapes.
TEST(DeviceOps, LoopedEinsumsAndStridedCopiesAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& a = p.input("a", {6, 7});
  const auto& b = p.input("b", {7, 5});
  const auto& c = p.input("c", {5, 4});
  const auto& t = p.input("t", {3, 4, 5, 2});
  p.einsum("sum_c", "ab,bc->a", {&a, &b}, {});                // c summed over one operand only
  p.einsum("chain3", "ab,bc,cd->ad", {&a, &b, &c}, {});       // three operands
  p.einsum("mm", "ab,bc->ac", {&a, &b}, {{'b', {0, 3, 7}}});  // a GEMM with aggregated parts
  p.einsum("gather", "hbkm,kn->nhmb", {&t, &c}, {});          // packed A, C transposed
  p.einsum("scatter", "hbkm,kn->hnmb", {&t, &c}, {});         // packed A, C scattered
  const auto& tt = p.transpose("tt", t, {2, 0, 3, 1});
  p.reshape("flat", tt, {5, 3, 8});
  const Graph g = p.build({"einsums", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "einsums");
  for (KernelOp op : {KernelOp::einsum_loop, KernelOp::gemm, KernelOp::copy})
    EXPECT_TRUE(seen.count(op)) << "kernel op " << static_cast<int>(op) << " not covered";
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "einsums bf16");
}

// Top-k values and indices of rows (largest and smallest; k of 1, a few and the whole row), of
// whole blocks and of a transposed (strided) operand.
TEST(DeviceOps, TopksAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {6, 200}, 1, 0, {{0, 3, 6}, {0, 200}});
  for (std::int64_t k : {1, 5, 200})
    for (bool largest : {true, false})
      for (bool indices : {false, true})
        p.topk("k" + std::to_string(k) + (largest ? "max" : "min") + (indices ? "_i" : ""), x, k,
               largest, indices);
  const auto& t = p.transpose("t", x, {1, 0});
  p.topk("t3", t, 3, true, true);
  const Graph g = p.build({"topk", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "topk");
  EXPECT_TRUE(seen.count(KernelOp::topk));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "topk bf16");
}

// Elements of each row at computed indices (gather_along, GatherElements): of whole blocks, of
// table and indices cut along the rows, and of a transposed (strided) table.
TEST(DeviceOps, GathersAlongRowsAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {6, 40}, 1, 0, {{0, 3, 6}, {0, 40}});
  const auto& ids = p.input("ids", {6, 9}, 45, 0, {{0, 2, 6}, {0, 9}});  // -45 .. 45: clamped too
  p.gather_along("g", x, ids, {{0, 3, 6}, {0, 4, 9}});
  const auto& t = p.transpose("t", x, {1, 0});
  const auto& tids = p.input("tids", {40, 2}, 6, 0, {{0, 40}, {0, 2}});
  p.gather_along("tg", t, tids, {{0, 20, 40}, {0, 2}});
  const Graph g = p.build({"gather_along", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "gather_along");
  EXPECT_TRUE(seen.count(KernelOp::gather));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "gather_along bf16");
}

// Strided and reversed slices (kernel stride: a copy with a scaled, possibly negative, stride and
// a start at the region's far end) of an input cut along both axes.
TEST(DeviceOps, StridedSlicesAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {9, 40}, 1, 0, {{0, 4, 9}, {0, 17, 40}});
  p.strided("rows", x, {1, 0}, {4, 40}, 0, 2);     // rows 1, 3, 5, 7
  p.strided("flip", x, {0, 0}, {9, 40}, 1, -1);    // columns reversed
  p.strided("back3", x, {2, 5}, {3, 12}, 1, -3);   // columns 38, 35, .., 5 of rows 2..4
  p.strided("up", x, {0, 3}, {3, 40 - 3}, 0, -4);  // rows 8, 4, 0
  const Graph g = p.build({"stride", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "stride");
  EXPECT_TRUE(seen.count(KernelOp::copy));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "stride bf16");
}

// Embedding lookups of a rank-3 table, indices in [-50, 50) for 40 rows: negative ones counted
// from the end, out-of-range ones clamped.
TEST(DeviceOps, GathersAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& table = p.input("table", {40, 6, 2});
  const auto& ids = p.input("ids", {3, 5}, 50, 0);
  p.gather("x", table, ids, {{0, 2, 3}, {0, 5}, {0, 3, 6}, {0, 2}});
  const Graph g = p.build({"gather", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "gather");
  EXPECT_TRUE(seen.count(KernelOp::gather));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "gather bf16");
}

// The activations of imported models (positive inputs for log and power's base), the rounding and
// trigonometric kernels and the broadcast maximum, minimum, power and prelu.
TEST(DeviceOps, ImportedActivationsAgreeWithTheCpuKernels) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {6, 10}, 4);
  const auto& pos = p.input("pos", {6, 10}, 2, 2.5);
  const std::vector<workloads::Cuts> cuts = {{0, 3, 6}, {0, 10}};
  p.map("leaky", "leaky_relu", {&x}, cuts, {{"alpha", 0.2}});
  p.map("elu", "elu", {&x}, cuts, {{"alpha", 1.5}});
  p.map("softplus", "softplus", {&x}, cuts);
  p.map("abs", "abs", {&x}, cuts);
  p.map("log", "log", {&pos}, cuts);
  for (const char* k : {"reciprocal", "floor", "ceil", "round", "sign", "sin", "cos", "tan", "atan",
                        "sinh", "cosh", "selu", "celu", "isnan", "isinf"})
    p.map(k, k, {&x}, cuts);
  const auto& unit = p.input("unit", {6, 10}, 0.9);  // in (-0.9, 0.9)
  for (const char* k : {"asin", "acos"}) p.map(k, k, {&unit}, cuts);
  const auto& row = p.input("row", {10}, 3);
  for (const char* k : {"maximum", "minimum", "prelu", "mod", "fmod"})
    p.map(k, k, {&x, &row}, cuts);
  p.map("power", "power", {&pos, &row}, cuts);
  const Graph g = p.build({"activations", "test", {}});
  const auto seen = expect_device_path_agrees(g, KernelMode::real, "activations");
  EXPECT_TRUE(seen.count(KernelOp::unary));
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "activations bf16");
}

TEST(DeviceOps, SyntheticKernelsAgreeWithTheCpuKernels) {
  const Graph g = test::small_workloads(2)[3].graph;  // llama-block
  const auto seen =
      expect_device_path_agrees(g, KernelMode::synthetic, "synthetic llama-block", 1e-3);
  EXPECT_TRUE(seen.count(KernelOp::synthetic));
  test::expect_bf16_device_path_agrees(g, KernelMode::synthetic, "synthetic llama-block bf16",
                                       1e-3);
}

// A HostExec that notes the rank of each elementwise launch, by kind, and the lanes per row of
// each reduction.
class RankExec : public HostExec<float> {
public:
  using HostExec::HostExec;
  void unary(const dev::UnaryArgs& a, const float* x, float* o) override {
    ranks["unary"].push_back(a.shape.rank);
    HostExec::unary(a, x, o);
  }
  void binary(const dev::BinaryArgs& a, const float* x, const float* y, float* o) override {
    ranks["binary"].push_back(a.shape.rank);
    HostExec::binary(a, x, y, o);
  }
  void aggregate(const dev::AggregateArgs& a, const dev::Operands<float>& in, float* o) override {
    ranks["aggregate"].push_back(a.shape.rank);
    HostExec::aggregate(a, in, o);
  }
  void copy(const dev::CopyArgs& a, const float* src, float* dst) override {
    ranks["copy"].push_back(a.shape.rank);
    HostExec::copy(a, src, dst);
  }
  void reduce(const dev::ReduceArgs& a, const float* x, float* o) override {
    lanes.push_back(a.lanes);
    HostExec::reduce(a, x, o);
  }
  std::map<std::string, std::vector<int>> ranks;
  std::vector<int> lanes;  ///< of each reduction launch
};

// Elementwise launches divide each element index by the extents of their shape: dimensions that
// every operand walks as one go as one (a contiguous operand of any rank is one dimension), a
// broadcast row keeps the rows apart, a transpose keeps its two dimensions. The outputs stay the
// CPU kernels' (the workloads' check above covers every kernel; this one the shapes).
TEST(DeviceOps, ElementwiseLaunchesMergeTheDimensionsTheirOperandsWalkAsOne) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {4, 6, 8});
  const auto& row = p.input("row", {8});
  const auto& a = p.input("a", {8, 12});
  const auto& b = p.input("b", {12, 5});
  const std::vector<std::vector<std::int64_t>> whole = {{0, 4}, {0, 6}, {0, 8}};
  p.map("relu", "relu", {&x}, whole);                             // unary, contiguous: rank 1
  p.map("add", "add", {&x, &row}, whole);                         // binary, a row broadcast: rank 2
  p.einsum("mm", "ab,bc->ac", {&a, &b}, {{'b', {0, 4, 8, 12}}});  // aggregate of 3: rank 1
  p.transpose("t", x, {0, 2, 1});  // copy [4, 8, 6] of [4, 6, 8]: rank 3
  const Graph g = p.build({"ranks", "test", {}});
  expect_device_path_agrees(g, KernelMode::real, "ranks");
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  RankExec exec(plan);
  test::run_end_to_end<float>(plan, g, &exec);
  using R = std::vector<int>;
  EXPECT_EQ(exec.ranks["unary"], R({1}));
  EXPECT_EQ(exec.ranks["binary"], R({2}));
  EXPECT_EQ(exec.ranks["aggregate"], R({1}));
  // the transpose, and each input's values (constants: rank 1)
  R copies = exec.ranks["copy"];
  std::sort(copies.begin(), copies.end());
  ASSERT_GE(copies.size(), 2u);
  EXPECT_EQ(copies.back(), 3);
  EXPECT_EQ(copies[copies.size() - 2], 1);
}

// A row of at least dev::kLaneRowLength elements is reduced by 32 lanes, each summing every
// 32nd element in double, then combined pairwise: within one f32 rounding of the sequential
// double sum (the max exactly), on rows whose length is no multiple of 32, read with a stride.
TEST(DeviceOps, LongRowsAreReducedByLanesWithinOneRounding) {
  constexpr dev::I64 kRows = 3, kLen = 1000, kStep = 3;
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(kRows * kLen * kStep));
  for (float& e : x) e = u(rng);
  for (const engine_detail::Fn fn :
       {engine_detail::Fn::sum, engine_detail::Fn::max, engine_detail::Fn::sumsq}) {
    dev::ReduceArgs a;
    a.rows.rank = 1, a.rows.ext[0] = kRows, a.in[0] = kLen * kStep;
    a.n = kRows, a.len = kLen, a.step = kStep, a.fn = fn, a.lanes = dev::kReduceLanes;
    std::vector<float> out(kRows);
    for (dev::I64 r = 0; r < kRows; ++r) dev::reduce_element(a, r, x.data(), out.data());
    for (dev::I64 r = 0; r < kRows; ++r) {
      double want = fn == engine_detail::Fn::max ? -1e300 : 0.0;
      for (dev::I64 i = 0; i < kLen; ++i) {
        const double v = x[static_cast<std::size_t>(r * kLen * kStep + i * kStep)];
        want = fn == engine_detail::Fn::max ? std::max(want, v)
                                            : want + (fn == engine_detail::Fn::sumsq ? v * v : v);
      }
      const auto got = out[static_cast<std::size_t>(r)];
      if (fn == engine_detail::Fn::max)
        EXPECT_EQ(got, static_cast<float>(want));
      else
        EXPECT_LE(std::abs(got - want), std::abs(want) * 0x1p-23) << static_cast<int>(fn);
    }
  }
}

// The driver gives rows of kLaneRowLength or more 32 lanes and shorter ones one, and either way
// the outputs are the CPU kernels'.
TEST(DeviceOps, OnlyLongRowsTakeLanes) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& x = p.input("x", {4, 512}, 1, 0, {{0, 4}, {0, 512}});
  const auto& y = p.input("y", {4, 100}, 1, 0, {{0, 4}, {0, 100}});
  p.reduce("long", "reduce_sumsq", x);
  p.reduce("short", "reduce_max", y);
  const Graph g = p.build({"rows", "test", {}});
  expect_device_path_agrees(g, KernelMode::real, "rows");
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  RankExec exec(plan);
  test::run_end_to_end<float>(plan, g, &exec);
  std::vector<int> lanes = exec.lanes;
  std::sort(lanes.begin(), lanes.end());
  EXPECT_EQ(lanes, std::vector<int>({1, dev::kReduceLanes}));
}

// The batch of a GEMM whose batch labels collapse goes as one strided-batched call.
TEST(DeviceOps, CollapsibleBatchesAreOneGemmCall) {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& a = p.input("a", {3, 4, 5, 6});
  const auto& b = p.input("b", {3, 4, 6, 2});
  p.einsum("batched", "hbmk,hbkn->hbmn", {&a, &b}, {});
  const Graph g = p.build({"batched", "test", {}});
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  NodeId mm = -1;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    if (plan.kernels[static_cast<std::size_t>(v)].op == KernelOp::gemm) mm = v;
  ASSERT_GE(mm, 0);
  HostExec<float> exec(plan);
  std::vector<float> xa(3 * 4 * 5 * 6, 1.0f), xb(3 * 4 * 6 * 2, 2.0f), out(3 * 4 * 5 * 2, 0.0f);
  const std::vector<const float*> in = {xa.data(), xb.data()};
  engine_detail::run_with<float>(plan, mm, in, out.data(), exec);
  EXPECT_EQ(exec.gemms, 1);
  for (float y : out) ASSERT_EQ(y, 12.0f);  // 6 products of 1 x 2
}

// The (one) block of tensor `name`: the node named "name" or "name[0,...]" (throws when none).
NodeId block_of(const Graph& g, const std::string& name) {
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const std::string& n = g.node(v).name;
    if (n == name || n.rfind(name + "[", 0) == 0) return v;
  }
  throw std::logic_error("no node " + name);
}

// GEMM calls and copy launches of the block of `name` in `g` through run_with(), on the CPU
// kernels' outputs of the nodes before it.
struct Launches {
  int gemms = 0;
  std::size_t copies = 0;
};

Launches launches_of(const Graph& g, const std::string& name) {
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  const auto outs = test::run_end_to_end<float>(plan, g, nullptr);
  const NodeId v = block_of(g, name);
  const auto& k = plan.kernels[static_cast<std::size_t>(v)];
  std::vector<const float*> in;
  for (const auto& view : k.in) in.push_back(outs[static_cast<std::size_t>(view.src)].data());
  std::vector<float> out(static_cast<std::size_t>(std::max<dev::I64>(k.numel, 1)));
  RankExec exec(plan);
  engine_detail::run_with<float>(plan, v, in, out.data(), exec);
  return {exec.gemms, exec.ranks["copy"].size()};
}

// Batched einsums whose batch labels do not all collapse: attention heads read in place from
// [b, s, h, d] (b and h are not one stride), a packed operand with a scattered output, and both
// with an outer label that does not collapse.
Graph batched_einsums() {
  workloads::BlockedProgram p(workloads::DType::f32);
  const auto& q = p.input("q", {2, 5, 3, 4});  // b s h d
  const auto& k = p.input("k", {2, 6, 3, 4});  // b t h d
  p.einsum("heads", "bshd,bthd->bhst", {&q, &k}, {});
  const auto& x = p.input("x", {3, 4, 5, 2});  // h i k j: rows (i, j) are not one stride
  const auto& w = p.input("w", {3, 5, 6});     // h k n
  p.einsum("packed", "hikj,hkn->hinj", {&x, &w}, {});
  const auto& y = p.input("y", {2, 3, 4, 5, 2});  // b h i k j
  const auto& u = p.input("u", {2, 5, 3, 6});     // b k h n: b and h are not one stride
  p.einsum("outer", "bhikj,bkhn->bhinj", {&y, &u}, {});
  const auto& y2 = p.input("y2", {2, 3, 4, 5, 2});  // g h i k j
  const auto& u2 = p.input("u2", {2, 3, 5, 6});     // g h k n
  p.einsum("two", "ghikj,ghkn->ghinj", {&y2, &u2}, {});
  return p.build({"batched-einsums", "test", {}});
}

// A GEMM's batch goes as few strided-batched calls as its operands allow: the batch labels
// every operand not packed walks as one stride are one call, the labels before them loop, and a
// packed operand or a scattered output is one copy launch for all the batch elements of a call
// (it was a call, a gather and a scatter per batch element: 6, 3 and 6 calls, 0, 6 and 12
// copies). The outputs are the CPU kernels', which run one batch element at a time.
TEST(DeviceOps, BatchedGemmsLoopOnlyOverTheLabelsThatDoNotCollapse) {
  const Graph g = batched_einsums();
  expect_device_path_agrees(g, KernelMode::real, "batched einsums");
  test::expect_bf16_device_path_agrees(g, KernelMode::real, "batched einsums bf16");
  const Launches heads = launches_of(g, "heads"), packed = launches_of(g, "packed"),
                 outer = launches_of(g, "outer");
  EXPECT_EQ(heads.gemms, 2);  // one per b, h batched
  EXPECT_EQ(heads.copies, 0u);
  EXPECT_EQ(packed.gemms, 1);
  EXPECT_EQ(packed.copies, 2u);  // the gather and the scatter
  EXPECT_EQ(outer.gemms, 2);
  EXPECT_EQ(outer.copies, 4u);
}

// gemm_batching() by hand: strides of the labels batched, and a scratch budget that moves the
// split inwards (88 elements per batch element: A's 8 x 5 gathered, C's 8 x 6 scattered).
TEST(DeviceOps, GemmBatchesKeepTheirScratchWithinTheBudget) {
  const Graph g = batched_einsums();
  const Plan plan = engine_detail::compile_plan(g, KernelMode::real, 1.0);
  const auto gemm_of = [&](const std::string& name) -> const engine_detail::GemmPlan& {
    return plan.kernels[static_cast<std::size_t>(block_of(g, name))].gemm;
  };
  const auto heads = engine_detail::gemm_batching(gemm_of("heads"));
  EXPECT_EQ(heads.split, 1u);
  EXPECT_EQ(heads.count, 3);
  EXPECT_EQ(heads.calls, 2);
  EXPECT_EQ(heads.sa, 4);   // h in q [b, s, h, d]
  EXPECT_EQ(heads.sb, 4);   // h in k
  EXPECT_EQ(heads.sc, 30);  // h in [b, h, s, t]
  EXPECT_EQ(heads.scratch, 0);
  const auto& two = gemm_of("two");
  struct Case {
    dev::I64 budget;
    std::size_t split;
    dev::I64 count, calls;
  };
  for (const Case& c : {Case{88 * 6, 0, 6, 1}, Case{88 * 6 - 1, 1, 3, 2}, Case{88 * 3, 1, 3, 2},
                        Case{88 * 2, 2, 1, 6}, Case{1, 2, 1, 6}}) {
    const auto b = engine_detail::gemm_batching(two, c.budget);
    EXPECT_EQ(b.split, c.split) << c.budget;
    EXPECT_EQ(b.count, c.count) << c.budget;
    EXPECT_EQ(b.calls, c.calls) << c.budget;
    EXPECT_EQ(b.scratch, 88 * c.count) << c.budget;
    EXPECT_EQ(b.sa, 40) << c.budget;                    // packed A
    EXPECT_EQ(b.sc, 48) << c.budget;                    // scattered C
    EXPECT_EQ(b.sb, c.count > 1 ? 30 : 0) << c.budget;  // h in u2 [g, h, k, n]
  }
}

// The 32-bit index path (shapes under 2^31 elements) and the 64-bit one give every element the
// offset of its row-major index, computed here digit by digit.
TEST(DeviceOps, NarrowAndWideIndicesGiveTheSameOffsets) {
  dev::Shape s;
  s.rank = 3;
  s.ext[0] = 3, s.ext[1] = 5, s.ext[2] = 7;
  const dev::I64 st[3] = {1000, -20, 3};
  for (dev::I64 i = 0; i < 3 * 5 * 7; ++i) {
    const dev::I64 want = (i / 35) * 1000 + (i / 7 % 5) * -20 + (i % 7) * 3;
    s.narrow = true;
    ASSERT_EQ(dev::offset_at(i, s, st), want) << i;
    s.narrow = false;
    ASSERT_EQ(dev::offset_at(i, s, st), want) << i;
  }
}

// This test program links no CUDA backend: an Engine asked for one is a bad request that says
// what is missing, and nothing is started.
TEST(DeviceOps, AnEngineOnAnUnregisteredCudaBackendIsABadRequest) {
  const Graph g = test::small_workloads(2)[0].graph;
  EngineOptions o;
  o.devices = 2;
  o.backend = Backend::cuda;
  try {
    Engine e(g, o);
    FAIL() << "an Engine was made on a CUDA backend nobody registered";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--backend cuda"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doppler
