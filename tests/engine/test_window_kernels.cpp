// The windowed kernels conv2d, maxpool2d and avgpool2d and the unary kernels clip, hardsigmoid
// and hardswish (docs/exec.md). Hand-built graphs run by the engine are checked against
// hand-computed values and against the independent evaluator (block_eval.cpp); blocked
// convolutions (output blocks over rows and channels whose windows come in several pieces, halo
// rows included) must equal the unblocked one; the engine's FLOPs are the documented counts;
// malformed descriptions are refused when the engine compiles the graph, naming the node.
#include <algorithm>
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler {
namespace {

using Shape = std::vector<std::int64_t>;
using Attrs = std::vector<std::pair<std::string, double>>;

// Builds a graph of exec nodes, one edge per operand.
class Program {
public:
  NodeId add(const std::string& name, ExecDesc e) {
    Node n;
    n.name = name;
    n.kind = workloads::find_kernel(e.op)->kind;
    n.out_bytes = 4.0 * static_cast<double>(e.numel());
    std::vector<NodeId> srcs;
    for (const ExecInput& in : e.inputs)
      if (std::find(srcs.begin(), srcs.end(), in.src) == srcs.end()) srcs.push_back(in.src);
    n.exec = std::move(e);
    const NodeId v = b_.add_node(std::move(n));
    for (NodeId u : srcs) b_.add_edge(u, v);
    return v;
  }
  NodeId load(const std::string& name, int tensor, Shape shape, Shape origin) {
    return add(name, {"load", std::move(shape), std::move(origin), {}, "", {{"tensor", tensor}}});
  }
  Graph build(std::vector<ConstantTensor> constants) {
    Graph g = b_.build();
    g.set_constants(std::move(constants));
    return g;
  }

private:
  GraphBuilder b_;
};

std::int64_t count(const Shape& s) {
  std::int64_t n = 1;
  for (auto x : s) n *= x;
  return n;
}

// Outputs of every node of g run on one device, checked against block_eval (relative error
// below 1e-5, element by element and norm-wise); `flops` gets the engine's total FLOPs.
std::vector<std::vector<float>> run(const Graph& g, double* flops = nullptr) {
  Engine e(g, {});
  EXPECT_EQ(e.kernel_mode(), KernelMode::real);
  e.run(test::single_device(g, 1));
  if (flops) *flops = e.total_flops();
  const auto out = test::all_outputs(e);
  const auto want = test::evaluate_blocks(g, true);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto& w = want[static_cast<std::size_t>(v)];
    const auto& o = out[static_cast<std::size_t>(v)];
    EXPECT_EQ(e.output_shape(v), w.shape) << g.label(v);
    EXPECT_EQ(o.size(), w.data.size()) << g.label(v);
    if (o.size() != w.data.size()) continue;
    test::Dense got(w.shape);
    for (std::size_t i = 0; i < o.size(); ++i) {
      got.data[i] = o[i];
      EXPECT_NEAR(o[i], w.data[i], 1e-5 * (1 + std::abs(w.data[i])))
          << g.label(v) << " [" << i << "]";
    }
    EXPECT_LT(test::relative_error(got, w), 1e-5) << g.label(v);
  }
  return out;
}

// Deterministic values in [-1, 1).
std::vector<float> random_values(std::int64_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& x : v) x = u(rng);
  return v;
}

// ---- hand-computed values ----

// The 1-channel 3x3 input 1 .. 9 (constant 0) as a [1, 1, 3, 3] block.
const ConstantTensor kNine = {"x", {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}};

// Attributes of a window over the whole of kNine.
Attrs nine_window(Attrs more) {
  Attrs a = {{"pieces", 1}, {"row0", 0}, {"c0", 0}, {"in_h", 3}, {"in_w", 3}};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(WindowKernels, ConvMatchesHandComputedValues) {
  Program p;
  const NodeId x = p.load("x", 0, {1, 1, 3, 3}, {0, 0, 0, 0});
  const NodeId ones = p.load("ones", 1, {1, 1, 3, 3}, {0, 0, 0, 0});
  const NodeId k4 = p.load("k4", 2, {1, 1, 2, 2}, {0, 0, 0, 0});  // 1 2 / 3 4
  const NodeId ones2 = p.load("ones2", 1, {1, 1, 2, 2}, {0, 0, 0, 0});
  const NodeId bias = p.load("bias", 3, {1}, {0});
  const auto conv = [&](const std::string& name, NodeId w, Shape shape, Attrs more,
                        bool with_bias = false) {
    std::vector<ExecInput> in = {{x, {}, {}}, {w, {}, {}}};
    if (with_bias) in.push_back({bias, {}, {}});
    Attrs a = nine_window(more);
    a.emplace_back("out_per_group", 1);
    if (with_bias) a.emplace_back("bias", 1);
    return p.add(name, {"conv2d", shape, {0, 0, 0, 0}, in, "", a});
  };
  // 3x3 box sums with zero padding 1.
  const NodeId box = conv("box", ones, {1, 1, 3, 3}, {{"pad_h", 1}, {"pad_w", 1}});
  // Stride 2 picks the corners of the box sums; the bias adds 0.5.
  const NodeId s2 = conv("s2", ones, {1, 1, 2, 2},
                         {{"pad_h", 1}, {"pad_w", 1}, {"stride_h", 2}, {"stride_w", 2}}, true);
  // Cross-correlation (no kernel flip) with 1 2 / 3 4.
  const NodeId xc = conv("xc", k4, {1, 1, 2, 2}, {});
  // Dilation 2: a 2x2 kernel of ones on the four corners.
  const NodeId dil = conv("dil", ones2, {1, 1, 1, 1}, {{"dil_h", 2}, {"dil_w", 2}});
  const Graph g = p.build({kNine,
                           {"ones", {1, 1, 3, 3}, std::vector<float>(9, 1.0f)},
                           {"k4", {1, 1, 2, 2}, {1, 2, 3, 4}},
                           {"b", {1}, {0.5f}}});
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(out[box], (std::vector<float>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
  EXPECT_EQ(out[s2], (std::vector<float>{12.5f, 16.5f, 24.5f, 28.5f}));
  EXPECT_EQ(out[xc], (std::vector<float>{37, 47, 67, 77}));
  EXPECT_EQ(out[dil], (std::vector<float>{20}));
  // 2 KH KW per output element (+1 with the bias); load nodes count 0.
  EXPECT_EQ(flops, 9 * 18 + 4 * 19 + 4 * 8 + 1 * 8);
}

TEST(WindowKernels, GroupsPickTheirInputChannels) {
  Program p;
  // x: 2 channels of 2 x 2: channel 0 = 1 2 3 4, channel 1 = 10 20 30 40.
  const NodeId x = p.load("x", 0, {1, 2, 2, 2}, {0, 0, 0, 0});
  const NodeId w = p.load("w", 1, {4, 1, 1, 1}, {0, 0, 0, 0});  // w[o] = o + 1
  const NodeId dw = p.load("dw", 2, {2, 1, 2, 2}, {0, 0, 0, 0});
  const Attrs win = {{"pieces", 1}, {"row0", 0}, {"c0", 0}, {"in_h", 2}, {"in_w", 2}};
  // 1x1, 4 outputs in 2 groups: out o = (o + 1) x channel o / 2.
  Attrs a = win;
  a.emplace_back("out_per_group", 2);
  const NodeId grouped =
      p.add("grouped", {"conv2d", {1, 4, 2, 2}, {0, 0, 0, 0}, {{x, {}, {}}, {w, {}, {}}}, "", a});
  // Output channels 1 .. 2 of the same conv: the block starts in the middle of group 0.
  const NodeId mid = p.add("mid", {"conv2d",
                                   {1, 2, 2, 2},
                                   {0, 1, 0, 0},
                                   {{x, {}, {}}, {w, {1, 0, 0, 0}, {2, 1, 1, 1}}},
                                   "",
                                   a});
  // Depthwise 2x2 (groups = channels): channel 0 with 1 0 / 0 1, channel 1 with 0 1 / 1 0.
  Attrs d = win;
  d.emplace_back("out_per_group", 1);
  const NodeId depth =
      p.add("depth", {"conv2d", {1, 2, 1, 1}, {0, 0, 0, 0}, {{x, {}, {}}, {dw, {}, {}}}, "", d});
  const Graph g = p.build({{"x", {1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}},
                           {"w", {4, 1, 1, 1}, {1, 2, 3, 4}},
                           {"dw", {2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0}}});
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(out[grouped],
            (std::vector<float>{1, 2, 3, 4, 2, 4, 6, 8, 30, 60, 90, 120, 40, 80, 120, 160}));
  EXPECT_EQ(out[mid], (std::vector<float>{2, 4, 6, 8, 30, 60, 90, 120}));
  EXPECT_EQ(out[depth], (std::vector<float>{1 + 4, 20 + 30}));
  EXPECT_EQ(flops, 16 * 2 + 8 * 2 + 2 * 8);
}

TEST(WindowKernels, PoolsMatchHandComputedValues) {
  Program p;
  const NodeId x = p.load("x", 0, {1, 1, 3, 3}, {0, 0, 0, 0});
  // ResNet's stem pool geometry: 3x3, stride 2, padding 1.
  const Attrs stem = {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2},
                      {"stride_w", 2}, {"pad_h", 1},    {"pad_w", 1}};
  const auto pool = [&](const std::string& op, Attrs more) {
    Attrs a = nine_window(stem);
    a.insert(a.end(), more.begin(), more.end());
    return p.add(op, {op, {1, 1, 2, 2}, {0, 0, 0, 0}, {{x, {}, {}}}, "", a});
  };
  const NodeId mx = pool("maxpool2d", {});
  const NodeId avg = pool("avgpool2d", {});  // count_include_pad defaults to 0
  const NodeId avg0 = pool("avgpool2d", {{"count_include_pad", 0}});
  const NodeId avg1 = pool("avgpool2d", {{"count_include_pad", 1}});
  // Dilation 2 on a 2x2 max: the corners.
  Attrs da = nine_window({{"kernel_h", 2}, {"kernel_w", 2}, {"dil_h", 2}, {"dil_w", 2}});
  const NodeId dmax =
      p.add("dmax", {"maxpool2d", {1, 1, 1, 1}, {0, 0, 0, 0}, {{x, {}, {}}}, "", da});
  // A padded max over negative values never reads the padding as 0.
  const NodeId nx = p.load("nx", 1, {1, 1, 3, 3}, {0, 0, 0, 0});
  Attrs na = nine_window(stem);
  const NodeId nmax =
      p.add("nmax", {"maxpool2d", {1, 1, 2, 2}, {0, 0, 0, 0}, {{nx, {}, {}}}, "", na});
  std::vector<float> neg;
  for (float v : kNine.values) neg.push_back(-v);
  const Graph g = p.build({kNine, {"nx", {1, 1, 3, 3}, neg}});
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(out[mx], (std::vector<float>{5, 6, 8, 9}));
  EXPECT_EQ(out[avg], (std::vector<float>{3, 4, 6, 7}));
  EXPECT_EQ(out[avg0], (std::vector<float>{3, 4, 6, 7}));
  const std::vector<float> sums = {12, 16, 24, 28};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(out[avg1][i], sums[i] / 9.0f);
  EXPECT_EQ(out[dmax], (std::vector<float>{9}));
  EXPECT_EQ(out[nmax], (std::vector<float>{-1, -2, -4, -5}));
  EXPECT_EQ(flops, 5 * 4 * 9 + 1 * 4);  // KH KW per output element
}

TEST(WindowKernels, ClipHardsigmoidHardswishMatchHandComputedValues) {
  Program p;
  const NodeId x = p.load("x", 0, {2, 3}, {0, 0});  // -4 -1 0 / 0.5 3 7
  const auto un = [&](const std::string& op, Attrs a) {
    return p.add(op, {op, {2, 3}, {0, 0}, {{x, {}, {}}}, "", std::move(a)});
  };
  const NodeId clip = un("clip", {{"min", -1}, {"max", 2}});
  const NodeId relu6 = un("clip", {{"min", 0}, {"max", 6}});
  const NodeId clip_none = un("clip", {});  // defaults: no clipping
  const NodeId clip_lo = un("clip", {{"min", 0.25}});
  const NodeId hsig = un("hardsigmoid", {});  // alpha 0.2, beta 0.5
  const NodeId hsig6 = un("hardsigmoid", {{"alpha", 1.0 / 6}, {"beta", 0.5}});
  const NodeId hswish = un("hardswish", {});
  const Graph g = p.build({{"x", {2, 3}, {-4, -1, 0, 0.5f, 3, 7}}});
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(out[clip], (std::vector<float>{-1, -1, 0, 0.5f, 2, 2}));
  EXPECT_EQ(out[relu6], (std::vector<float>{0, 0, 0, 0.5f, 3, 6}));
  EXPECT_EQ(out[clip_none], (std::vector<float>{-4, -1, 0, 0.5f, 3, 7}));
  EXPECT_EQ(out[clip_lo], (std::vector<float>{0.25f, 0.25f, 0.25f, 0.5f, 3, 7}));
  const std::vector<std::pair<NodeId, std::vector<double>>> want = {
      {hsig, {0, 0.3, 0.5, 0.6, 1, 1}},
      {hsig6, {0, 1.0 / 3, 0.5, 7.0 / 12, 1, 1}},
      {hswish, {0, -1.0 / 3, 0, 7.0 / 24, 3, 7}},
  };
  for (const auto& [v, w] : want)
    for (std::size_t i = 0; i < w.size(); ++i)
      EXPECT_NEAR(out[v][i], w[i], 1e-6) << g.label(v) << " [" << i << "]";
  EXPECT_EQ(flops, 6 * (4 * 2 + 2 * 4 + 5));
}

// ---- blocked windows against the whole tensor ----

// A convolution or pooling of x [N, C, H, W] (padding symmetric) and the blocks of x and of
// the output (boundaries, first 0 and last the extent; empty = one block).
struct Spec {
  std::string label;
  std::string op = "conv2d";
  Shape x;                              // N, C, H, W
  std::int64_t oc = 0, kh = 1, kw = 1;  // conv: output channels; window extent
  std::int64_t sh = 1, sw = 1, ph = 0, pw = 0, dh = 1, dw = 1;
  std::int64_t groups = 1;
  bool bias = false;
  int include_pad = -1;  // avgpool2d: count_include_pad (-1 = absent)
  Shape x_rows = {}, x_chans = {}, out_rows = {}, out_chans = {}, out_batch = {};

  bool conv() const { return op == "conv2d"; }
  std::int64_t out_c() const { return conv() ? oc : x[1]; }
  std::int64_t out_h() const { return (x[2] + 2 * ph - dh * (kh - 1) - 1) / sh + 1; }
  std::int64_t out_w() const { return (x[3] + 2 * pw - dw * (kw - 1) - 1) / sw + 1; }
  std::int64_t icg() const { return x[1] / groups; }
  Shape out_shape() const { return {x[0], out_c(), out_h(), out_w()}; }
  double flops_per_element() const {
    return conv() ? 2.0 * static_cast<double>(icg() * kh * kw) + (bias ? 1 : 0)
                  : static_cast<double>(kh * kw);
  }
};

Shape bounds(const Shape& cuts, std::int64_t extent) {
  return cuts.empty() ? Shape{0, extent} : cuts;
}

// One output block.
struct OutBlock {
  NodeId v;
  Shape origin, shape;
};

// Attributes of `s` for an output block whose window starts at row0, channel c0.
Attrs window_attrs(const Spec& s, std::int64_t pieces, std::int64_t row0, std::int64_t c0) {
  Attrs a = {{"pieces", static_cast<double>(pieces)},
             {"row0", static_cast<double>(row0)},
             {"c0", static_cast<double>(c0)},
             {"in_h", static_cast<double>(s.x[2])},
             {"in_w", static_cast<double>(s.x[3])}};
  const std::pair<const char*, std::int64_t> opt[] = {{"stride_h", s.sh}, {"stride_w", s.sw},
                                                      {"pad_h", s.ph},    {"pad_w", s.pw},
                                                      {"dil_h", s.dh},    {"dil_w", s.dw}};
  for (const auto& [name, value] : opt)  // defaults left out when they apply
    if (value != (name[0] == 'p' ? 0 : 1)) a.emplace_back(name, static_cast<double>(value));
  if (s.conv()) {
    a.emplace_back("out_per_group", static_cast<double>(s.oc / s.groups));
    if (s.bias) a.emplace_back("bias", 1);
  } else {
    a.emplace_back("kernel_h", static_cast<double>(s.kh));
    a.emplace_back("kernel_w", static_cast<double>(s.kw));
  }
  if (s.include_pad >= 0) a.emplace_back("count_include_pad", s.include_pad);
  return a;
}

// Adds the blocks of x (constant 0), the weight and bias loads (constants 1, 2) and the output
// blocks of `s` to p; `whole` ignores the blocking.
std::vector<OutBlock> add_windowed(Program& p, const Spec& s, const std::string& tag, bool whole) {
  const Shape xr = bounds(whole ? Shape{} : s.x_rows, s.x[2]);
  const Shape xc = bounds(whole ? Shape{} : s.x_chans, s.x[1]);
  const Shape orow = bounds(whole ? Shape{} : s.out_rows, s.out_h());
  const Shape och = bounds(whole ? Shape{} : s.out_chans, s.out_c());
  const Shape ob = bounds(whole ? Shape{} : s.out_batch, s.x[0]);
  std::vector<std::vector<NodeId>> xb(xc.size() - 1);  // [channel block][row block]
  for (std::size_t c = 0; c + 1 < xc.size(); ++c)
    for (std::size_t r = 0; r + 1 < xr.size(); ++r)
      xb[c].push_back(p.load(tag + "x" + std::to_string(c) + "." + std::to_string(r), 0,
                             {s.x[0], xc[c + 1] - xc[c], xr[r + 1] - xr[r], s.x[3]},
                             {0, xc[c], xr[r], 0}));
  NodeId w = -1, b = -1;
  if (s.conv()) w = p.load(tag + "w", 1, {s.oc, s.icg(), s.kh, s.kw}, {0, 0, 0, 0});
  if (s.bias) b = p.load(tag + "b", 2, {s.oc}, {0});
  std::vector<OutBlock> outs;
  for (std::size_t bi = 0; bi + 1 < ob.size(); ++bi)
    for (std::size_t oi = 0; oi + 1 < och.size(); ++oi)
      for (std::size_t yi = 0; yi + 1 < orow.size(); ++yi) {
        const std::int64_t n0 = ob[bi], nb = ob[bi + 1] - n0;
        const std::int64_t o0 = och[oi], cb = och[oi + 1] - o0;
        const std::int64_t y0 = orow[yi], yb = orow[yi + 1] - y0;
        // Rows and channels the block reads.
        const std::int64_t lo = std::max<std::int64_t>(0, y0 * s.sh - s.ph);
        const std::int64_t hi =
            std::min(s.x[2], (y0 + yb - 1) * s.sh - s.ph + (s.kh - 1) * s.dh + 1);
        std::int64_t c_lo = o0, c_hi = o0 + cb;
        if (s.conv()) {
          const std::int64_t opg = s.oc / s.groups;
          c_lo = o0 / opg * s.icg();
          c_hi = ((o0 + cb - 1) / opg + 1) * s.icg();
        }
        std::size_t cblk = 0;
        while (xc[cblk + 1] <= c_lo) ++cblk;
        EXPECT_LE(c_hi, xc[cblk + 1]) << s.label << ": channels of x must nest";
        std::vector<ExecInput> in;
        for (std::size_t r = 0; r + 1 < xr.size(); ++r) {
          const std::int64_t a = std::max(lo, xr[r]), z = std::min(hi, xr[r + 1]);
          if (a >= z) continue;
          in.push_back(
              {xb[cblk][r], {n0, c_lo - xc[cblk], a - xr[r], 0}, {nb, c_hi - c_lo, z - a, s.x[3]}});
        }
        const auto pieces = static_cast<std::int64_t>(in.size());
        if (s.conv()) in.push_back({w, {o0, 0, 0, 0}, {cb, s.icg(), s.kh, s.kw}});
        if (s.bias) in.push_back({b, {o0}, {cb}});
        const Shape origin = {n0, o0, y0, 0}, shape = {nb, cb, yb, s.out_w()};
        const std::string name = tag + s.op + "[" + std::to_string(n0) + "," + std::to_string(o0) +
                                 "," + std::to_string(y0) + "]";
        outs.push_back(
            {p.add(name, {s.op, shape, origin, in, "", window_attrs(s, pieces, lo, c_lo)}), origin,
             shape});
      }
  return outs;
}

// Runs `s` blocked and whole in one graph: every block equals the evaluator and its part of the
// whole output, and the engine's FLOPs are the documented count (twice the whole output's).
void check_blocked(const Spec& s) {
  SCOPED_TRACE(s.label);
  Program p;
  const auto blocks = add_windowed(p, s, "b:", false);
  const auto whole = add_windowed(p, s, "w:", true);
  ASSERT_EQ(whole.size(), 1u);
  std::vector<ConstantTensor> cs = {{"x", s.x, random_values(count(s.x), 1)}};
  const Shape ws = {s.oc, s.icg(), s.kh, s.kw};
  cs.push_back({"w", ws, random_values(s.conv() ? count(ws) : 1, 2)});
  cs.push_back({"b", {s.oc}, random_values(std::max<std::int64_t>(s.oc, 1), 3)});
  if (!s.conv()) cs[1].shape = {1}, cs[2].shape = {1};
  const Graph g = p.build(std::move(cs));
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(flops, 2 * static_cast<double>(count(s.out_shape())) * s.flops_per_element());
  const Shape os = s.out_shape();
  const auto& full = out[static_cast<std::size_t>(whole[0].v)];
  for (const OutBlock& b : blocks) {
    const auto& got = out[static_cast<std::size_t>(b.v)];
    Shape i(4, 0);
    for (std::size_t k = 0; k < got.size(); ++k) {
      std::int64_t f = 0;  // flat index of origin + i in the whole output
      for (std::size_t d = 0; d < 4; ++d) f = f * os[d] + b.origin[d] + i[d];
      const float want = full[static_cast<std::size_t>(f)];
      ASSERT_NEAR(got[k], want, 1e-5 * (1 + std::abs(want))) << g.label(b.v) << " [" << k << "]";
      for (std::size_t d = 4; d-- > 0;) {
        if (++i[d] < b.shape[d]) break;
        i[d] = 0;
      }
    }
  }
}

TEST(WindowKernels, BlockedConvEqualsTheWholeConv) {
  std::vector<Spec> specs;
  {  // 3x3 "same" conv with a bias; output row blocks read halo rows of two x blocks; the
     // second channel block starts at o0 = 5.
    Spec s{.label = "3x3 pad 1 bias", .x = {1, 4, 9, 7}, .oc = 16, .kh = 3, .kw = 3};
    s.ph = s.pw = 1, s.bias = true;
    s.x_rows = {0, 3, 6, 9}, s.out_rows = {0, 4, 9}, s.out_chans = {0, 5, 16};
    specs.push_back(s);
  }
  {  // stride 2, padding 1: two-row output blocks read five rows from three x blocks.
    Spec s{.label = "stride 2, 3 pieces", .x = {2, 3, 12, 9}, .oc = 10, .kh = 3, .kw = 3};
    s.sh = s.sw = 2, s.ph = s.pw = 1;
    s.x_rows = {0, 2, 4, 6, 8, 10, 12}, s.out_rows = {0, 2, 4, 6}, s.out_batch = {0, 1, 2};
    specs.push_back(s);
  }
  {  // dilation 2 (and padding 2): rows read with gaps.
    Spec s{.label = "dilation 2", .x = {1, 8, 10, 8}, .oc = 9, .kh = 3, .kw = 3};
    s.dh = s.dw = 2, s.ph = s.pw = 2, s.bias = true;
    s.x_rows = {0, 5, 10}, s.out_rows = {0, 3, 5, 10};
    specs.push_back(s);
  }
  {  // groups 2, 16 outputs per group: the block [4, 20) spans both groups from the middle of
     // group 0 (a 12-channel run by SGEMM and a 4-channel run by the direct loop).
    Spec s{.label = "groups 2", .x = {1, 6, 6, 6}, .oc = 32, .kh = 3, .kw = 3, .groups = 2};
    s.ph = s.pw = 1;
    s.x_rows = {0, 3, 6}, s.out_rows = {0, 2, 6}, s.out_chans = {0, 4, 20, 32};
    specs.push_back(s);
  }
  {  // depthwise 3x3 (groups = channels), x and the output cut by channels as well.
    Spec s{.label = "depthwise", .x = {2, 8, 8, 8}, .oc = 8, .kh = 3, .kw = 3, .groups = 8};
    s.ph = s.pw = 1, s.bias = true;
    s.x_rows = {0, 4, 8}, s.x_chans = {0, 3, 8}, s.out_rows = {0, 3, 8}, s.out_chans = {0, 3, 8};
    specs.push_back(s);
  }
  {  // depthwise stride 2 with channel multiplier 2 (MobileNet-like).
    Spec s{.label = "depthwise x2 stride 2", .x = {1, 4, 9, 9}, .oc = 8, .kh = 3, .kw = 3};
    s.groups = 4, s.sh = s.sw = 2, s.ph = s.pw = 1;
    s.x_rows = {0, 4, 9}, s.x_chans = {0, 2, 4}, s.out_rows = {0, 2, 5}, s.out_chans = {0, 4, 8};
    specs.push_back(s);
  }
  {  // 1x1 conv (the window rows are the GEMM's columns).
    Spec s{.label = "1x1", .x = {1, 8, 6, 5}, .oc = 16, .kh = 1, .kw = 1};
    s.bias = true;
    s.x_rows = {0, 2, 6}, s.out_rows = {0, 3, 6}, s.out_chans = {0, 9, 16};
    specs.push_back(s);
  }
  {  // 1x1 stride 2 (ResNet's downsampling shortcut).
    Spec s{.label = "1x1 stride 2", .x = {1, 8, 8, 8}, .oc = 12, .kh = 1, .kw = 1};
    s.sh = s.sw = 2;
    s.x_rows = {0, 3, 8}, s.out_rows = {0, 2, 4};
    specs.push_back(s);
  }
  {  // ResNet's stem: 7x7, stride 2, padding 3, 3 input channels.
    Spec s{.label = "7x7 stem", .x = {1, 3, 16, 16}, .oc = 8, .kh = 7, .kw = 7};
    s.sh = s.sw = 2, s.ph = s.pw = 3, s.bias = true;
    s.x_rows = {0, 4, 8, 12, 16}, s.out_rows = {0, 3, 5, 8};
    specs.push_back(s);
  }
  {  // ViT patch embedding: 4x4 patches, stride 4.
    Spec s{.label = "patches", .x = {1, 3, 8, 12}, .oc = 10, .kh = 4, .kw = 4};
    s.sh = s.sw = 4, s.bias = true;
    s.x_rows = {0, 4, 8}, s.out_rows = {0, 1, 2};
    specs.push_back(s);
  }
  {  // asymmetric: 3x1 with padding (1, 0), stride (2, 1), a column kernel of width 1.
    Spec s{.label = "3x1", .x = {1, 2, 7, 4}, .oc = 3, .kh = 3, .kw = 1};
    s.sh = 2, s.ph = 1;
    s.x_rows = {0, 1, 3, 7}, s.out_rows = {0, 1, 4};
    specs.push_back(s);
  }
  for (const Spec& s : specs) check_blocked(s);
}

TEST(WindowKernels, BlockedPoolsEqualTheWholePool) {
  std::vector<Spec> specs;
  {
    Spec s{.label = "max 3x3 stride 2 pad 1", .op = "maxpool2d", .x = {2, 5, 11, 10}};
    s.kh = s.kw = 3, s.sh = s.sw = 2, s.ph = s.pw = 1;
    s.x_rows = {0, 2, 4, 7, 11}, s.x_chans = {0, 2, 5}, s.out_rows = {0, 1, 3, 6},
    s.out_chans = {0, 2, 5}, s.out_batch = {0, 1, 2};
    specs.push_back(s);
  }
  {
    Spec s{.label = "max dilation 2", .op = "maxpool2d", .x = {1, 2, 9, 9}};
    s.kh = s.kw = 2, s.dh = s.dw = 2, s.ph = 1;
    s.x_rows = {0, 3, 9}, s.out_rows = {0, 4, 9};
    specs.push_back(s);
  }
  for (int include : {0, 1, -1}) {
    Spec s{.label = "avg 3x3 stride 2 pad 1", .op = "avgpool2d", .x = {1, 3, 10, 7}};
    s.kh = s.kw = 3, s.sh = s.sw = 2, s.ph = s.pw = 1, s.include_pad = include;
    s.label += " count_include_pad " + std::to_string(include);
    s.x_rows = {0, 3, 6, 10}, s.out_rows = {0, 2, 5};
    specs.push_back(s);
  }
  {  // global average pool (ResNet's head): one window over the whole input.
    Spec s{.label = "global avg", .op = "avgpool2d", .x = {2, 6, 7, 7}};
    s.kh = s.kw = 7;
    s.x_rows = {0, 3, 7}, s.x_chans = {0, 4, 6}, s.out_chans = {0, 4, 6};
    specs.push_back(s);
  }
  for (const Spec& s : specs) check_blocked(s);
}

TEST(WindowKernels, StridedWeightRegionIsGathered) {
  Program p;
  const Shape xs = {1, 2, 5, 5};
  const NodeId x = p.load("x", 0, xs, {0, 0, 0, 0});
  // Weight regions [cb, 2, 2, 2] inside [cb, 3, 3, 3] blocks: not contiguous within a row, so
  // the engine gathers them (8 outputs: one SGEMM; 4 outputs: the direct loop).
  const Attrs a = {{"pieces", 1}, {"row0", 0},  {"c0", 0},   {"in_h", 5},
                   {"in_w", 5},   {"pad_h", 1}, {"pad_w", 1}};
  std::vector<NodeId> convs;
  for (std::int64_t cb : {8, 4}) {
    const NodeId w = p.load("w" + std::to_string(cb), 1, {cb, 3, 3, 3}, {0, 0, 0, 0});
    Attrs ac = a;
    ac.emplace_back("out_per_group", static_cast<double>(cb));
    convs.push_back(
        p.add("c" + std::to_string(cb), {"conv2d",
                                         {1, cb, 6, 6},
                                         {0, 0, 0, 0},
                                         {{x, {}, {}}, {w, {0, 1, 1, 0}, {cb, 2, 2, 2}}},
                                         "",
                                         ac}));
  }
  const Graph g = p.build(
      {{"x", xs, random_values(count(xs), 4)}, {"w", {8, 3, 3, 3}, random_values(8 * 27, 5)}});
  double flops = 0;
  const auto out = run(g, &flops);
  EXPECT_EQ(out[convs[0]].size(), 288u);
  // The 4-output conv is the first half of the 8-output one.
  for (std::size_t i = 0; i < 144; ++i) EXPECT_NEAR(out[convs[1]][i], out[convs[0]][i], 1e-5) << i;
  EXPECT_EQ(flops, (288 + 144) * 2 * 8);
}

TEST(WindowKernels, AnyAssignmentReproducesTheSingleDeviceRun) {
  Spec s{.label = "depthwise", .x = {1, 4, 8, 8}, .oc = 4, .kh = 3, .kw = 3};
  s.groups = 4, s.ph = s.pw = 1, s.bias = true;
  s.x_rows = {0, 3, 8}, s.x_chans = {0, 2, 4}, s.out_rows = {0, 4, 8}, s.out_chans = {0, 2, 4};
  Program p;
  add_windowed(p, s, "a:", false);
  Spec t{.label = "grouped", .x = {1, 4, 8, 8}, .oc = 16, .kh = 3, .kw = 3, .groups = 2};
  t.sh = t.sw = 2, t.ph = t.pw = 1;
  t.x_rows = {0, 3, 8}, t.out_rows = {0, 2, 4}, t.out_chans = {0, 4, 12, 16};
  add_windowed(p, t, "b:", false);
  Spec u{.label = "pool", .op = "maxpool2d", .x = {1, 4, 8, 8}, .kh = 3, .kw = 3};
  u.sh = u.sw = 2, u.ph = u.pw = 1;
  u.x_rows = {0, 3, 8}, u.x_chans = {0, 2, 4}, u.out_rows = {0, 2, 4}, u.out_chans = {0, 2, 4};
  add_windowed(p, u, "c:", false);
  const Graph g = p.build({{"x", s.x, random_values(count(s.x), 6)},
                           {"w", {16, 2, 3, 3}, random_values(16 * 18, 7)},
                           {"b", {4}, random_values(4, 8)}});
  const auto want = run(g);
  EngineOptions o;
  o.devices = 3;
  Engine e(g, o);
  std::mt19937_64 rng(5);
  for (int rep = 0; rep < 4; ++rep) {
    e.run(test::random_assignment(g, 3, rng));
    EXPECT_EQ(test::all_outputs(e), want);
  }
}

TEST(WindowKernels, BadDescriptionsAreRefusedNamingTheNode) {
  // A 3x3 conv, padding 1, over x [1, 2, 4, 4] in row blocks 0..2, 2..4: output rows 0..1 of
  // 4 output channels, window rows 0..2 from block 0 (row 2 from block 1).
  const auto error = [](const std::function<void(ExecDesc&)>& edit) {
    Program p;
    const NodeId x0 = p.load("x0", 0, {1, 2, 2, 4}, {0, 0, 0, 0});
    const NodeId x1 = p.load("x1", 0, {1, 2, 2, 4}, {0, 0, 2, 0});
    const NodeId w = p.load("w", 1, {4, 2, 3, 3}, {0, 0, 0, 0});
    const NodeId b = p.load("b", 2, {4}, {0});
    ExecDesc e{"conv2d",
               {1, 4, 2, 4},
               {0, 0, 0, 0},
               {{x0, {}, {}}, {x1, {0, 0, 0, 0}, {1, 2, 1, 4}}, {w, {}, {}}, {b, {}, {}}},
               "",
               {{"pieces", 2},
                {"row0", 0},
                {"c0", 0},
                {"in_h", 4},
                {"in_w", 4},
                {"pad_h", 1},
                {"pad_w", 1},
                {"out_per_group", 4},
                {"bias", 1}}};
    edit(e);
    p.add("conv", std::move(e));
    return test::compile_error(p.build({{"x", {1, 2, 4, 4}, std::vector<float>(32, 1.0f)},
                                        {"w", {4, 2, 3, 3}, std::vector<float>(72, 1.0f)},
                                        {"b", {4}, {1, 2, 3, 4}}}));
  };
  const auto drop = [](const std::string& name) {
    return [name](ExecDesc& e) {
      std::erase_if(e.attrs, [&](const auto& a) { return a.first == name; });
    };
  };
  const auto set = [](const std::string& name, double value) {
    return [name, value](ExecDesc& e) {
      for (auto& a : e.attrs)
        if (a.first == name) a.second = value;
    };
  };
  EXPECT_EQ(error([](ExecDesc&) {}), "no error");
  const std::string node = "node 4 (conv): conv2d: ";
  for (const char* name : {"pieces", "row0", "c0", "in_h", "in_w", "out_per_group"})
    EXPECT_EQ(error(drop(name)), node + "attribute '" + name + "' is required") << name;
  EXPECT_EQ(error(set("pieces", 1)), node + "needs 3 operands, has 4");
  EXPECT_EQ(error([](ExecDesc& e) { e.attrs.emplace_back("stride_h", 0); }),
            node + "attribute 'stride_h' must be an integer >= 1");
  EXPECT_EQ(error([](ExecDesc& e) { e.attrs.emplace_back("dil_w", 1.5); }),
            node + "attribute 'dil_w' must be an integer >= 1");
  EXPECT_EQ(error(set("bias", 2)), node + "attribute 'bias' must be 0 or 1");
  // Without its halo row (the window rows 0 .. 1 only), row 2 is missing.
  EXPECT_EQ(error([&](ExecDesc& e) {
              e.inputs.erase(e.inputs.begin() + 1);
              set("pieces", 1)(e);
            }),
            node + "input row 2 is not in the window (rows 0 .. 1)");
  EXPECT_EQ(error(set("row0", 1)), node + "input row 0 is not in the window (rows 1 .. 3)");
  EXPECT_EQ(error(set("in_h", 2)), node + "window rows beyond in_h");
  EXPECT_EQ(error([](ExecDesc& e) {
              e.inputs[1].shape = {1, 2, 1, 3};
            }),
            node + "window piece 1 is not [nb, cw, rows, in_w] = [1, 2, rows, 4]");
  EXPECT_EQ(error([](ExecDesc& e) {
              e.inputs[2].shape = {3, 2, 3, 3}, e.inputs[2].offset = {0, 0, 0, 0};
            }),
            node + "the weight must be [cb, icg, KH, KW] with cb = 4");
  EXPECT_EQ(error([](ExecDesc& e) { e.inputs[3].shape = {2}, e.inputs[3].offset = {0}; }),
            node + "the bias must be [cb] = [4]");
  // 2 groups of 2 outputs with 2 input channels each need channels 0 .. 3.
  EXPECT_EQ(error(set("out_per_group", 2)),
            node +
                "input channels 0 .. 3 of the output channels are not in the window "
                "(channels 0 .. 1)");
  EXPECT_EQ(error(set("c0", 1)),
            node +
                "input channels 0 .. 1 of the output channels are not in the window "
                "(channels 1 .. 2)");
  EXPECT_EQ(error([](ExecDesc& e) {
              e.shape = {4, 2, 4}, e.origin = {0, 0, 0};
            }),
            node + "the output block must be 4-D [nb, cb, ohb, OW]");
  EXPECT_EQ(error([](ExecDesc& e) { e.origin[3] = 1; }),
            node + "the output block must span the whole width (origin[3] = 0)");
  // Pools: channels one to one, kernel attributes required, windows not all padding.
  const auto pool = [&](const std::function<void(ExecDesc&)>& edit) {
    return error([&](ExecDesc& e) {
      e.op = "maxpool2d";
      e.shape = {1, 2, 2, 4};
      e.inputs.resize(2);
      drop("out_per_group")(e);
      drop("bias")(e);
      e.attrs.emplace_back("kernel_h", 3);
      e.attrs.emplace_back("kernel_w", 3);
      edit(e);
    });
  };
  const std::string pnode = "node 4 (conv): maxpool2d: ";
  EXPECT_EQ(pool([](ExecDesc&) {}), "no error");
  EXPECT_EQ(pool(drop("kernel_w")), pnode + "attribute 'kernel_w' is required");
  EXPECT_EQ(pool([](ExecDesc& e) { e.shape[1] = 1; }),
            pnode + "channels map one to one: c0 must equal o0 and the window have cb channels");
  EXPECT_EQ(pool([](ExecDesc& e) { e.origin[1] = 1; }),
            pnode + "channels map one to one: c0 must equal o0 and the window have cb channels");
  EXPECT_EQ(pool([](ExecDesc& e) {
              e.shape[3] = 6;  // column 5 would read only the right padding
            }),
            pnode + "output column 5 reads only padding");
  EXPECT_EQ(pool([](ExecDesc& e) {
              e.op = "avgpool2d";
              e.attrs.emplace_back("dil_h", 2);
            }),
            "node 4 (conv): avgpool2d: dilation must be 1");
}

}  // namespace
}  // namespace doppler
