// ONNX import of volumetric (3-D, NCDHW) Conv, MaxPool and AveragePool on small hand-built
// models: values against plain 3-D loops (block evaluator of docs/exec.md) on 1-4 devices, FLOPs
// by docs/onnx.md's formulas, and one-line errors.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <ostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "workloads/block_eval.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::import_error;
using test::iota_values;
using test::ModelBuilder;
using Dims = std::array<std::int64_t, 3>;                        // depth, height, width
const std::vector<test::Dim> kDims = {"n", "c", "d", "h", "w"};  // NCDHW outputs

// A 3-D window: kernel, strides, dilations, low and high pads per axis.
struct Window3 {
  Dims k, s = {1, 1, 1}, d = {1, 1, 1}, lo = {0, 0, 0}, hi = {0, 0, 0};
};

// Output extent along axis a (floor, or PyTorch's ceil_mode rule).
std::int64_t extent(std::int64_t in, const Window3& w, std::size_t a, bool ceil = false) {
  const std::int64_t span = (w.k[a] - 1) * w.d[a] + 1, padded = in + w.lo[a] + w.hi[a];
  std::int64_t out = (padded - span) / w.s[a] + 1;
  if (ceil && (padded - span) % w.s[a] != 0 && out * w.s[a] - w.lo[a] < in) ++out;
  return out;
}

// The 6 pads of an ONNX 3-D window: [d0, h0, w0, d1, h1, w1].
std::vector<std::int64_t> onnx_pads(const Window3& w) {
  return {w.lo[0], w.lo[1], w.lo[2], w.hi[0], w.hi[1], w.hi[2]};
}

// Calls f(z, y, x) for each input position of output (od, oh, ow)'s window inside the input
// `in`; returns the positions inside the padded input (count_include_pad's divisor).
template <typename F>
std::int64_t for_window(const Window3& w, const Dims& in, const Dims& o, F&& f) {
  std::int64_t padded = 1;
  for (std::size_t a = 0; a < 3; ++a) {
    const std::int64_t first = o[a] * w.s[a] - w.lo[a];
    const std::int64_t last = std::min(first + (w.k[a] - 1) * w.d[a], in[a] + w.hi[a] - 1);
    padded *= (last - first) / w.d[a] + 1;
  }
  for (std::int64_t i = 0; i < w.k[0]; ++i)
    for (std::int64_t j = 0; j < w.k[1]; ++j)
      for (std::int64_t l = 0; l < w.k[2]; ++l) {
        const Dims p = {o[0] * w.s[0] - w.lo[0] + i * w.d[0], o[1] * w.s[1] - w.lo[1] + j * w.d[1],
                        o[2] * w.s[2] - w.lo[2] + l * w.d[2]};
        bool inside = true;
        for (std::size_t a = 0; a < 3; ++a) inside = inside && p[a] >= 0 && p[a] < in[a];
        if (inside) f(p, Dims{i, j, l});
      }
  return padded;
}

// "DxHxW".
std::string text(const Dims& d) {
  return fmt::format("{}x{}x{}", d[0], d[1], d[2]);
}

struct Conv3Case {
  std::int64_t c, oc, groups;
  Dims in;
  Window3 w;
  bool bias;
};

// Names the case in test names (its padding bytes would otherwise print as garbage).
void PrintTo(const Conv3Case& cc, std::ostream* os) {
  *os << fmt::format("c{} oc{} g{} in{} k{} s{} d{} lo{} hi{}{}", cc.c, cc.oc, cc.groups,
                     text(cc.in), text(cc.w.k), text(cc.w.s), text(cc.w.d), text(cc.w.lo),
                     text(cc.w.hi), cc.bias ? " bias" : "");
}

// Plain-loop NCDHW convolution with zero padding.
Dense conv3_loops(const Dense& x, const std::vector<float>& w, const std::vector<float>& b,
                  const Conv3Case& cc, const Dims& out) {
  const std::int64_t n = x.shape[0], icg = cc.c / cc.groups, opg = cc.oc / cc.groups;
  const auto& k = cc.w.k;
  Dense y({n, cc.oc, out[0], out[1], out[2]});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < cc.oc; ++o)
      for (std::int64_t od = 0; od < out[0]; ++od)
        for (std::int64_t oh = 0; oh < out[1]; ++oh)
          for (std::int64_t ow = 0; ow < out[2]; ++ow) {
            double s = cc.bias ? b[static_cast<std::size_t>(o)] : 0.0;
            for (std::int64_t ci = 0; ci < icg; ++ci)
              for_window(cc.w, cc.in, {od, oh, ow}, [&](const Dims& p, const Dims& t) {
                const auto wi = (((o * icg + ci) * k[0] + t[0]) * k[1] + t[1]) * k[2] + t[2];
                s += w[static_cast<std::size_t>(wi)] *
                     x[{i, (o / opg) * icg + ci, p[0], p[1], p[2]}];
              });
            y[{i, o, od, oh, ow}] = s;
          }
  return y;
}

class Conv3dImport : public ::testing::TestWithParam<Conv3Case> {};

TEST_P(Conv3dImport, MatchesLoopsOnAnyDeviceCountWithExactFlops) {
  const Conv3Case cc = GetParam();
  const std::int64_t n = 2, icg = cc.c / cc.groups;
  Dims out;
  for (std::size_t a = 0; a < 3; ++a) out[a] = extent(cc.in[a], cc.w, a);
  const auto& k = cc.w.k;
  const auto w =
      iota_values(static_cast<std::size_t>(cc.oc * icg * k[0] * k[1] * k[2]), 0.1f, -0.6f);
  const auto b = iota_values(static_cast<std::size_t>(cc.oc), 0.3f, -1.0f);
  ModelBuilder m;
  m.input("x", {n, cc.c, cc.in[0], cc.in[1], cc.in[2]})
      .output("y", {n, cc.oc, out[0], out[1], out[2]})
      .weight("w", {cc.oc, icg, k[0], k[1], k[2]}, w);
  std::vector<std::string> ins = {"x", "w"};
  if (cc.bias) {
    m.weight("b", {cc.oc}, b);
    ins.push_back("b");
  }
  m.node("Conv", ins, {"y"}, {{"group", cc.groups}},
         {{"kernel_shape", {k[0], k[1], k[2]}},
          {"strides", {cc.w.s[0], cc.w.s[1], cc.w.s[2]}},
          {"pads", onnx_pads(cc.w)},
          {"dilations", {cc.w.d[0], cc.w.d[1], cc.w.d[2]}}});
  const double outputs = static_cast<double>(n * cc.oc * out[0] * out[1] * out[2]);
  const double flops =
      2 * outputs * static_cast<double>(icg * k[0] * k[1] * k[2]) + (cc.bias ? outputs : 0);
  for (const int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense want = conv3_loops(r.tensor("x"), w, b, cc, out);
    EXPECT_LT(test::max_abs_diff(r.tensor("y"), want), 1e-4) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << "P=" << p;
  }
}

// One case per entry, fields as in Conv3Case.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Shapes, Conv3dImport,
    ::testing::Values(
        // 3x3x3, pad 1, groups 2, bias (a video ResNet's block)
        Conv3Case{4, 6, 2, {5, 6, 7},
                  Window3{{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}, true},
        // depth stride 2, dilation 2, uneven pads, no bias
        Conv3Case{3, 4, 1, {9, 5, 6},
                  Window3{{3, 2, 3}, {2, 1, 2}, {2, 1, 1}, {2, 0, 1}, {1, 1, 0}}, false},
        // depthwise, temporal only (3, 1, 1)
        Conv3Case{4, 4, 4, {6, 4, 5},
                  Window3{{3, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 0, 0}, {1, 0, 0}}, true},
        // 1x1x1, stride 2 (a downsampling shortcut)
        Conv3Case{5, 3, 1, {5, 7, 6}, Window3{{1, 1, 1}, {2, 2, 2}}, true},
        // spatial only (1, 3, 3), stride (1, 2, 2)
        Conv3Case{2, 4, 1, {3, 8, 8},
                  Window3{{1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}}, true}));
// clang-format on

struct ConvT3Case {
  std::int64_t c, oc, groups;
  Dims in, k, s, d, lo, hi, out_pad;
  bool bias;
};

void PrintTo(const ConvT3Case& t, std::ostream* os) {
  *os << fmt::format("c{} oc{} g{} in{} k{} s{} d{} lo{} hi{} op{}{}", t.c, t.oc, t.groups,
                     text(t.in), text(t.k), text(t.s), text(t.d), text(t.lo), text(t.hi),
                     text(t.out_pad), t.bias ? " bias" : "");
}

// Plain-loop NCDHW transposed convolution: every input element scatters into the outputs its
// kernel positions reach (z s + i d - lo along each axis), the weight [C, OC / group, K...].
Dense conv_t3_loops(const Dense& x, const std::vector<float>& w, const std::vector<float>& b,
                    const ConvT3Case& t, const Dims& out) {
  const std::int64_t n = x.shape[0], icg = t.c / t.groups, opg = t.oc / t.groups;
  Dense y({n, t.oc, out[0], out[1], out[2]});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t c = 0; c < t.c; ++c)
      for (std::int64_t z = 0; z < t.in[0]; ++z)
        for (std::int64_t r = 0; r < t.in[1]; ++r)
          for (std::int64_t q = 0; q < t.in[2]; ++q)
            for (std::int64_t o = 0; o < opg; ++o)
              for (std::int64_t a = 0; a < t.k[0]; ++a)
                for (std::int64_t e = 0; e < t.k[1]; ++e)
                  for (std::int64_t f = 0; f < t.k[2]; ++f) {
                    const Dims p = {z * t.s[0] + a * t.d[0] - t.lo[0],
                                    r * t.s[1] + e * t.d[1] - t.lo[1],
                                    q * t.s[2] + f * t.d[2] - t.lo[2]};
                    if (p[0] < 0 || p[0] >= out[0] || p[1] < 0 || p[1] >= out[1] || p[2] < 0 ||
                        p[2] >= out[2])
                      continue;
                    const auto wi = (((c * opg + o) * t.k[0] + a) * t.k[1] + e) * t.k[2] + f;
                    y[{i, (c / icg) * opg + o, p[0], p[1], p[2]}] +=
                        w[static_cast<std::size_t>(wi)] * x[{i, c, z, r, q}];
                  }
  if (t.bias)
    for (std::size_t e = 0; e < y.data.size(); ++e)
      y.data[e] += b[static_cast<std::size_t>(
          (static_cast<std::int64_t>(e) / (out[0] * out[1] * out[2])) % t.oc)];
  return y;
}

class ConvTranspose3dImport : public ::testing::TestWithParam<ConvT3Case> {};

// Values on 1, 2 and 4 devices; FLOPs: 2 (OC / group) KD KH KW per input element (every case's
// rows and columns are the input's times the stride, so none is cropped), 1 per output with a
// bias, and KD - 1 per output when two depth taps reach a depth.
TEST_P(ConvTranspose3dImport, MatchesLoopsWithTheirFlops) {
  const ConvT3Case t = GetParam();
  const std::int64_t n = 2, opg = t.oc / t.groups;
  Dims out;
  for (std::size_t a = 0; a < 3; ++a)
    out[a] = (t.in[a] - 1) * t.s[a] + (t.k[a] - 1) * t.d[a] + 1 + t.out_pad[a] - t.lo[a] - t.hi[a];
  const auto w =
      iota_values(static_cast<std::size_t>(t.c * opg * t.k[0] * t.k[1] * t.k[2]), 0.1f, -0.6f);
  const auto b = iota_values(static_cast<std::size_t>(t.oc), 0.3f, -1.0f);
  const auto ints = [](const Dims& d) { return std::vector<std::int64_t>(d.begin(), d.end()); };
  ModelBuilder m;
  m.input("x", {n, t.c, t.in[0], t.in[1], t.in[2]})
      .output("y", {n, t.oc, out[0], out[1], out[2]})
      .weight("w", {t.c, opg, t.k[0], t.k[1], t.k[2]}, w);
  std::vector<std::string> ins = {"x", "w"};
  if (t.bias) {
    m.weight("b", {t.oc}, b);
    ins.push_back("b");
  }
  m.node("ConvTranspose", ins, {"y"}, {{"group", t.groups}},
         {{"strides", ints(t.s)},
          {"dilations", ints(t.d)},
          {"pads", {t.lo[0], t.lo[1], t.lo[2], t.hi[0], t.hi[1], t.hi[2]}},
          {"output_padding", ints(t.out_pad)}});
  const double outputs = static_cast<double>(n * t.oc * out[0] * out[1] * out[2]);
  const double inputs = static_cast<double>(n * t.c * t.in[0] * t.in[1] * t.in[2]);
  const bool overlap = (t.k[0] - 1) * t.d[0] + 1 > t.s[0];
  const double flops = 2 * inputs * static_cast<double>(opg * t.k[0] * t.k[1] * t.k[2]) +
                       (t.bias ? outputs : 0) +
                       (overlap ? static_cast<double>(t.k[0] - 1) * outputs : 0);
  for (const int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense want = conv_t3_loops(r.tensor("x"), w, b, t, out);
    EXPECT_LT(test::max_abs_diff(r.tensor("y"), want), 1e-4) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << "P=" << p;
  }
}

// One case per entry, fields as in ConvT3Case.
// clang-format off
INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvTranspose3dImport,
    ::testing::Values(
        // a U-Net's up-sampling: 2x2x2, stride 2 (taps side by side), bias
        ConvT3Case{4, 6, 1, {3, 4, 5},
                   {2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, true},
        // 3x3x3, stride 2, pads 1, output_padding 1 (taps overlapping), groups 2
        ConvT3Case{4, 6, 2, {3, 4, 4},
                   {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, true},
        // depth stride 3 with a kernel of 2 (a zero slot between taps), uneven depth pads
        // cropping the first depth and output_padding 2 adding after
        ConvT3Case{3, 2, 1, {3, 3, 3},
                   {2, 1, 1}, {3, 1, 1}, {1, 1, 1}, {1, 0, 0}, {0, 0, 0}, {2, 0, 0}, false},
        // depth dilation 2, stride 1 (every tap shifted and summed)
        ConvT3Case{2, 3, 1, {4, 3, 3},
                   {2, 1, 1}, {1, 1, 1}, {2, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, true}));
// clang-format on

// Plain-loop 3-D pooling: the maximum, or the mean over the window's positions inside the input
// (or, with count_include_pad, divided by the positions inside the padded input).
Dense pool3_loops(const Dense& x, const Window3& w, const Dims& out, bool max, bool include_pad) {
  const Dims in = {x.shape[2], x.shape[3], x.shape[4]};
  Dense y({x.shape[0], x.shape[1], out[0], out[1], out[2]});
  for (std::int64_t i = 0; i < x.shape[0]; ++i)
    for (std::int64_t c = 0; c < x.shape[1]; ++c)
      for (std::int64_t od = 0; od < out[0]; ++od)
        for (std::int64_t oh = 0; oh < out[1]; ++oh)
          for (std::int64_t ow = 0; ow < out[2]; ++ow) {
            double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
            std::int64_t inside = 0;
            const std::int64_t padded = for_window(w, in, {od, oh, ow}, [&](const Dims& p, auto) {
              const double v = x[{i, c, p[0], p[1], p[2]}];
              acc = max ? std::max(acc, v) : acc + v;
              ++inside;
            });
            y[{i, c, od, oh, ow}] =
                max ? acc : acc / static_cast<double>(include_pad ? padded : inside);
          }
  return y;
}

// y = MaxPool (ceil_mode, pads, depth dilation), z = AveragePool (pads, not counted), v =
// AveragePool (count_include_pad) and u = AveragePool over a kernel of depth 1, all of one input.
TEST(Conv3dImportOps, PoolsMatchLoopsWithTheirFlops) {
  const Dims in = {7, 6, 5};
  const Window3 mw{{3, 2, 2}, {2, 2, 2}, {2, 1, 1}, {1, 0, 0}, {0, 0, 0}};  // ceil: 3 x 3 x 3
  const Window3 aw{{3, 3, 2}, {2, 1, 2}, {1, 1, 1}, {1, 1, 0}, {1, 1, 0}};
  const Window3 uw{{1, 2, 2}, {1, 2, 2}};
  const Dims mo = {extent(in[0], mw, 0, true), extent(in[1], mw, 1, true),
                   extent(in[2], mw, 2, true)};
  Dims ao, uo;
  for (std::size_t a = 0; a < 3; ++a) ao[a] = extent(in[a], aw, a), uo[a] = extent(in[a], uw, a);
  const auto ints = [](const Dims& d) { return std::vector<std::int64_t>(d.begin(), d.end()); };
  ModelBuilder m;
  m.input("x", {2, 3, in[0], in[1], in[2]})
      .output("y", kDims)
      .output("z", kDims)
      .output("v", kDims)
      .output("u", kDims);
  m.node("MaxPool", {"x"}, {"y"}, {{"ceil_mode", 1}},
         {{"kernel_shape", ints(mw.k)},
          {"strides", ints(mw.s)},
          {"dilations", ints(mw.d)},
          {"pads", onnx_pads(mw)}});
  m.node("AveragePool", {"x"}, {"z"}, {},
         {{"kernel_shape", ints(aw.k)}, {"strides", ints(aw.s)}, {"pads", onnx_pads(aw)}});
  m.node("AveragePool", {"x"}, {"v"}, {{"count_include_pad", 1}},
         {{"kernel_shape", ints(aw.k)}, {"strides", ints(aw.s)}, {"pads", onnx_pads(aw)}});
  m.node("AveragePool", {"x"}, {"u"}, {}, {{"kernel_shape", ints(uw.k)}, {"strides", ints(uw.s)}});
  const auto count = [](const Dims& o) { return 2.0 * 3 * o[0] * o[1] * o[2]; };
  // Each depth tap pooled in 2-D (KH KW per output), the KD taps combined (KD - 1), an average
  // divided once more (1) unless its kernel has depth 1.
  const double flops =
      count(mo) * (3 * 2 * 2 + 2) + 2 * count(ao) * (3 * 3 * 2 + 2 + 1) + count(uo) * (2 * 2);
  for (const int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense x = r.tensor("x");
    EXPECT_LT(test::max_abs_diff(r.tensor("y"), pool3_loops(x, mw, mo, true, false)), 1e-6) << p;
    EXPECT_LT(test::max_abs_diff(r.tensor("z"), pool3_loops(x, aw, ao, false, false)), 1e-6) << p;
    EXPECT_LT(test::max_abs_diff(r.tensor("v"), pool3_loops(x, aw, ao, false, true)), 1e-6) << p;
    EXPECT_LT(test::max_abs_diff(r.tensor("u"), pool3_loops(x, uw, uo, false, false)), 1e-6) << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << p;
  }
}

// auto_pad SAME_UPPER on the depth as on the rows: the output has ceil(D / stride) depths, the odd
// padding element at the end; GlobalAveragePool of the result reduces D, H and W.
TEST(Conv3dImportOps, SameUpperPadsTheDepthLikeTheRows) {
  const Conv3Case cc{
      2,    3, 1, {6, 5, 4}, Window3{{4, 3, 2}, {2, 1, 1}, {1, 1, 1}, {1, 1, 0}, {1, 1, 1}},
      false};  // SAME_UPPER's pads for these kernels, strides and extents
  const auto& k = cc.w.k;
  const auto w = iota_values(static_cast<std::size_t>(3 * 2 * k[0] * k[1] * k[2]), 0.1f, -0.5f);
  ModelBuilder m;
  m.input("x", {2, 2, 6, 5, 4})
      .output("y", kDims)
      .output("g", kDims)
      .weight("w", {3, 2, k[0], k[1], k[2]}, w);
  m.node("Conv", {"x", "w"}, {"y"}, {}, {{"strides", {2, 1, 1}}}).attr("auto_pad", "SAME_UPPER");
  m.node("GlobalAveragePool", {"y"}, {"g"});
  const Dims out = {3, 5, 4};
  for (const int p : {1, 3}) {
    const auto r = import_and_eval(m, p);
    const Dense want = conv3_loops(r.tensor("x"), w, {}, cc, out);
    EXPECT_LT(test::max_abs_diff(r.tensor("y"), want), 1e-4) << p;
    const Dense g = r.tensor("g");
    ASSERT_EQ(g.shape, (std::vector<std::int64_t>{2, 3, 1, 1, 1}));
    for (std::int64_t i = 0; i < 2; ++i)
      for (std::int64_t o = 0; o < 3; ++o) {
        double s = 0;
        for (std::int64_t e = 0; e < 60; ++e)
          s += want.data[static_cast<std::size_t>((i * 3 + o) * 60 + e)];
        EXPECT_NEAR((g[{i, o, 0, 0, 0}]), s / 60, 1e-5);
      }
  }
}

TEST(Conv3dImportErrors, MalformedModelsNameTheProblem) {
  {
    ModelBuilder m;  // MaxPool's indices
    m.input("x", {1, 1, 4, 4, 4}).output("y", kDims).output("i", kDims, onnx::TensorProto::INT64);
    m.node("MaxPool", {"x"}, {"y", "i"}, {}, {{"kernel_shape", {2, 2, 2}}});
    const std::string e = import_error(m);
    EXPECT_NE(e.find("MaxPool's Indices output is not supported"), std::string::npos) << e;
    EXPECT_NE(e.find("bad.onnx"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  {
    ModelBuilder m;  // a depth kernel larger than the padded depth
    m.input("x", {1, 2, 2, 5, 5})
        .output("y", kDims)
        .weight("w", {2, 2, 3, 1, 1}, std::vector<float>(12, 1));
    m.node("Conv", {"x", "w"}, {"y"});
    EXPECT_NE(import_error(m).find("larger than the padded input"), std::string::npos)
        << import_error(m);
  }
  {
    ModelBuilder m;  // a 4-D convolution
    m.input("x", {1, 1, 3, 3, 3, 3})
        .output("y", {"n", "c", "a", "b", "h", "w"})
        .weight("w", {1, 1, 1, 1, 1, 1}, {1.0f});
    m.node("Conv", {"x", "w"}, {"y"});
    EXPECT_NE(import_error(m).find("only 1-D, 2-D and 3-D Conv"), std::string::npos)
        << import_error(m);
  }
  {
    ModelBuilder m;  // --partition of a 3-D op's output
    m.input("x", {1, 2, 4, 4, 4}).output("y", kDims).weight("w", {2, 2, 1, 1, 1}, {1, 2, 3, 4});
    m.node("Conv", {"x", "w"}, {"y"});
    onnx_import::ImportOptions o;
    o.devices = 2;
    o.partition = {{"y", {1, 2, 1, 1, 1}}};
    try {
      onnx_import::import_onnx_bytes(m.bytes(), "p.onnx", o);
      ADD_FAILURE() << "no error";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("--partition y"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace doppler
