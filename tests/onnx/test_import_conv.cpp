// ONNX import of convolutional ops on small hand-built models: values (block evaluator of
// docs/exec.md against plain loops) on 1-4 devices and with rows cut into blocks (halo rows),
// FLOPs by the formula, and one-line errors for malformed models.
#include <algorithm>
#include <cmath>
#include <limits>
#include <ostream>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "support/support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

using onnx_import::ImportOptions;
using test::Dense;
using test::import_and_eval;
using test::import_error;
using test::iota_values;
using test::ModelBuilder;

double max_rel_diff(const Dense& a, const Dense& b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i)
    m = std::max(m, std::abs(a.data[i] - b.data[i]) / std::max(1.0, std::abs(b.data[i])));
  return m;
}

struct ConvCase {
  std::int64_t c, oc, h, w, k, stride, pad, dil, groups;
  bool bias;
};

// Names the case in test names (its padding bytes would otherwise print as garbage).
void PrintTo(const ConvCase& cc, std::ostream* os) {
  *os << fmt::format("c{} oc{} {}x{} k{} s{} p{} d{} g{}{}", cc.c, cc.oc, cc.h, cc.w, cc.k,
                     cc.stride, cc.pad, cc.dil, cc.groups, cc.bias ? " bias" : "");
}

// Plain-loop NCHW convolution with zero padding.
Dense conv_loops(const Dense& x, const std::vector<float>& w, const std::vector<float>& b,
                 const ConvCase& cc, std::int64_t oh, std::int64_t ow) {
  const std::int64_t n = x.shape[0], icg = cc.c / cc.groups, opg = cc.oc / cc.groups;
  Dense y({n, cc.oc, oh, ow});
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t o = 0; o < cc.oc; ++o)
      for (std::int64_t r = 0; r < oh; ++r)
        for (std::int64_t q = 0; q < ow; ++q) {
          double s = cc.bias ? b[static_cast<std::size_t>(o)] : 0.0;
          for (std::int64_t ci = 0; ci < icg; ++ci)
            for (std::int64_t ky = 0; ky < cc.k; ++ky)
              for (std::int64_t kx = 0; kx < cc.k; ++kx) {
                const std::int64_t iy = r * cc.stride - cc.pad + ky * cc.dil;
                const std::int64_t ix = q * cc.stride - cc.pad + kx * cc.dil;
                if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w) continue;
                const std::int64_t c = (o / opg) * icg + ci;
                s += w[static_cast<std::size_t>(((o * icg + ci) * cc.k + ky) * cc.k + kx)] *
                     x[{i, c, iy, ix}];
              }
          y[{i, o, r, q}] = s;
        }
  return y;
}

class ConvImport : public ::testing::TestWithParam<ConvCase> {};

TEST_P(ConvImport, MatchesLoopsOnAnyPartitionWithExactFlops) {
  const ConvCase cc = GetParam();
  const std::int64_t n = 2, icg = cc.c / cc.groups;
  const std::int64_t oh = (cc.h + 2 * cc.pad - cc.dil * (cc.k - 1) - 1) / cc.stride + 1;
  const std::int64_t ow = (cc.w + 2 * cc.pad - cc.dil * (cc.k - 1) - 1) / cc.stride + 1;
  const auto w = iota_values(static_cast<std::size_t>(cc.oc * icg * cc.k * cc.k), 0.1f, -0.6f);
  const auto b = iota_values(static_cast<std::size_t>(cc.oc), 0.3f, -1.0f);
  ModelBuilder m;
  m.input("x", {n, cc.c, cc.h, cc.w})
      .output("y", {n, cc.oc, oh, ow})
      .weight("w", {cc.oc, icg, cc.k, cc.k}, w);
  std::vector<std::string> ins = {"x", "w"};
  if (cc.bias) {
    m.weight("b", {cc.oc}, b);
    ins.push_back("b");
  }
  m.node("Conv", ins, {"y"}, {{"group", cc.groups}},
         {{"kernel_shape", {cc.k, cc.k}},
          {"strides", {cc.stride, cc.stride}},
          {"pads", {cc.pad, cc.pad, cc.pad, cc.pad}},
          {"dilations", {cc.dil, cc.dil}}});
  const double out = static_cast<double>(n * cc.oc * oh * ow);
  const double flops = 2 * out * static_cast<double>(icg * cc.k * cc.k) + (cc.bias ? out : 0);
  std::vector<std::pair<int, std::map<std::string, std::vector<std::int64_t>>>> runs = {
      {1, {}},
      {2, {}},
      {4, {}},
      {3, {{"y", {1, 2, 3, 1}}}},
      {2, {{"y", {2, 1, std::min<std::int64_t>(oh, 4), 1}}}}};
  for (const auto& [p, partition] : runs) {
    const auto r = import_and_eval(m, p, partition);
    const Dense want = conv_loops(r.tensor("x"), w, b, cc, oh, ow);
    EXPECT_LT(max_rel_diff(r.tensor("y"), want), 1e-5) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.einsum_flops, 0)
        << "einsum_flops counts MatMul, Gemm and recurrent layers only";
  }
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvImport,
    ::testing::Values(ConvCase{4, 6, 9, 7, 3, 2, 1, 1, 2, true},      // stride 2, groups 2
                      ConvCase{3, 4, 10, 8, 3, 1, 2, 2, 1, false},    // dilation 2
                      ConvCase{4, 4, 8, 8, 3, 1, 1, 1, 4, true},      // depthwise
                      ConvCase{6, 5, 7, 5, 1, 1, 0, 1, 1, true},      // 1 x 1
                      ConvCase{3, 8, 16, 16, 4, 4, 0, 1, 1, true}));  // patch embedding

// Pooling, BatchNormalization and the hard activations, chained:
// y = flatten(gap(hardswish(clip(bn(avgpool(maxpool(x))))))) and z = hardsigmoid(avgpool_pad(x)).
TEST(ConvImportOps, PoolsBatchNormAndActivationsMatchLoops) {
  const std::int64_t n = 2, c = 3, h = 9, w = 8;
  ModelBuilder m(14);
  m.input("x", {n, c, h, w}).output("y", {n, c}).output("z", {n, c, 5, 4});
  m.weight("gamma", {c}, {1.5f, 0.5f, -1.0f}).weight("beta", {c}, {0.1f, -0.2f, 0.3f});
  m.weight("mean", {c}, {0.2f, 0.0f, -0.1f}).weight("var", {c}, {0.5f, 2.0f, 1.0f});
  m.weight("lo", {}, {-0.5f}).weight("hi", {}, {0.75f});
  m.node("MaxPool", {"x"}, {"a"}, {},
         {{"kernel_shape", {3, 3}}, {"strides", {2, 2}}, {"pads", {1, 1, 1, 1}}})
      .node("AveragePool", {"a"}, {"b"}, {{"count_include_pad", 0}},
            {{"kernel_shape", {3, 3}}, {"strides", {1, 1}}, {"pads", {1, 1, 1, 1}}})
      .node("BatchNormalization", {"b", "gamma", "beta", "mean", "var"}, {"bn"}, {}, {},
            {{"epsilon", 1e-3f}})
      .node("Clip", {"bn", "lo", "hi"}, {"cl"})
      .node("HardSwish", {"cl"}, {"hs"})
      .node("GlobalAveragePool", {"hs"}, {"g"})
      .node("Flatten", {"g"}, {"y"}, {{"axis", 1}})
      .node("AveragePool", {"x"}, {"ap"}, {{"count_include_pad", 1}},
            {{"kernel_shape", {2, 3}}, {"strides", {2, 2}}, {"pads", {1, 0, 1, 1}}})
      .node("HardSigmoid", {"ap"}, {"z"}, {}, {}, {{"alpha", 0.3f}, {"beta", 0.4f}});
  for (int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense x = r.tensor("x");
    // maxpool 3x3 s2 p1: 9x8 -> 5x4; avgpool 3x3 s1 p1 (mean of the positions inside): 5x4.
    Dense a({n, c, 5, 4}), b({n, c, 5, 4});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < c; ++k) {
        for (std::int64_t y = 0; y < 5; ++y)
          for (std::int64_t q = 0; q < 4; ++q) {
            double mx = -std::numeric_limits<double>::infinity();
            for (std::int64_t iy = 2 * y - 1; iy <= 2 * y + 1; ++iy)
              for (std::int64_t ix = 2 * q - 1; ix <= 2 * q + 1; ++ix)
                if (iy >= 0 && iy < h && ix >= 0 && ix < w) mx = std::max(mx, x[{i, k, iy, ix}]);
            a[{i, k, y, q}] = mx;
          }
        for (std::int64_t y = 0; y < 5; ++y)
          for (std::int64_t q = 0; q < 4; ++q) {
            double s = 0, cnt = 0;
            for (std::int64_t iy = y - 1; iy <= y + 1; ++iy)
              for (std::int64_t ix = q - 1; ix <= q + 1; ++ix)
                if (iy >= 0 && iy < 5 && ix >= 0 && ix < 4) s += a[{i, k, iy, ix}], cnt += 1;
            b[{i, k, y, q}] = s / cnt;
          }
      }
    const double gamma[] = {1.5, 0.5, -1.0}, beta[] = {0.1, -0.2, 0.3}, mean[] = {0.2, 0.0, -0.1},
                 var[] = {0.5, 2.0, 1.0};
    Dense want_y({n, c});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < c; ++k) {
        double s = 0;
        for (std::int64_t y = 0; y < 5; ++y)
          for (std::int64_t q = 0; q < 4; ++q) {
            const auto ku = static_cast<std::size_t>(k);
            double v =
                (b[{i, k, y, q}] - mean[ku]) / std::sqrt(var[ku] + 1e-3) * gamma[ku] + beta[ku];
            v = std::min(std::max(v, -0.5), 0.75);
            s += v * std::max(0.0, std::min(1.0, v / 6 + 0.5));
          }
        want_y(i, k) = s / 20;
      }
    EXPECT_LT(max_rel_diff(r.tensor("y"), want_y), 1e-5) << "P=" << p;
    // avgpool 2x3 s2, pads (top 1, left 0, bottom 1, right 1), whole window counted: 5x4.
    Dense want_z({n, c, 5, 4});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t k = 0; k < c; ++k)
        for (std::int64_t y = 0; y < 5; ++y)
          for (std::int64_t q = 0; q < 4; ++q) {
            double s = 0;
            for (std::int64_t iy = 2 * y - 1; iy < 2 * y + 1; ++iy)
              for (std::int64_t ix = 2 * q; ix < 2 * q + 3; ++ix)
                if (iy >= 0 && iy < h && ix >= 0 && ix < w) s += x[{i, k, iy, ix}];
            want_z[{i, k, y, q}] = std::max(0.0, std::min(1.0, 0.3 * s / 6 + 0.4));
          }
    EXPECT_LT(max_rel_diff(r.tensor("z"), want_z), 1e-5) << "P=" << p;
    // maxpool 9 and avgpool 9 per output (120 each); bn 2, clip 2, hardswish 5 per element (120);
    // gap: 1 per input element (120) + 1 per output (6), plus the sum of its K partial sums when
    // the rows are cut into K blocks (the auto rule cuts [2, 3, 5, 4] into min(P, 5) row blocks:
    // (K - 1) x 6); avgpool 6 and hardsigmoid 4 per z (120).
    const double partials = 6.0 * (std::min(p, 5) - 1);
    EXPECT_DOUBLE_EQ(r.res.report.total_flops,
                     120.0 * 9 + 120 * 9 + 120 * (2 + 2 + 5) + 120 + 6 + partials + 120 * (6 + 4));
  }
}

// A speech model's Conv1d at batch 1 (2 channels, 64 frames, kernel 3, pad 1): the length is the
// dimension the partition rule cuts, so on 4 devices the convolution is 4 blocks of 16 frames,
// each reading its rows and the halo rows beside them, and the values equal plain loops.
TEST(ConvImportOps, OneDimensionalLengthIsCutAtBatchOne) {
  const std::int64_t c = 2, oc = 2, len = 64, k = 3;
  const auto w = iota_values(static_cast<std::size_t>(oc * c * k), 0.1f, -0.5f);
  ModelBuilder m(14);
  m.input("x", {1, c, len}).output("y", {1, oc, len}).weight("w", {oc, c, k}, w);
  m.node("Conv", {"x", "w"}, {"y"}, {}, {{"kernel_shape", {k}}, {"pads", {1, 1}}});
  const auto r = import_and_eval(m, 4);
  std::vector<std::int64_t> starts;
  for (const Node& node : r.res.graph.nodes())
    if (node.exec && node.exec->op == "conv2d") starts.push_back(node.exec->origin[2]);
  std::sort(starts.begin(), starts.end());
  EXPECT_EQ(starts, (std::vector<std::int64_t>{0, 16, 32, 48}));
  const Dense x = r.tensor("x");
  Dense want({1, oc, len});
  for (std::int64_t o = 0; o < oc; ++o)
    for (std::int64_t q = 0; q < len; ++q)
      for (std::int64_t ci = 0; ci < c; ++ci)
        for (std::int64_t t = 0; t < k; ++t)
          if (q - 1 + t >= 0 && q - 1 + t < len)
            want[{0, o, q}] +=
                w[static_cast<std::size_t>((o * c + ci) * k + t)] * x[{0, ci, q - 1 + t}];
  EXPECT_LT(max_rel_diff(r.tensor("y"), want), 1e-6);
}

// 1-D: y = GlobalAveragePool(MaxPool1d(Conv1d(x))), the convolution strided, padded, dilated,
// grouped, with a bias (imported as the 2-D ops of [N, C, L, 1]): values against plain loops,
// FLOPs by the formulas.
TEST(ConvImportOps, OneDimensionalOpsMatchLoops) {
  const std::int64_t n = 2, c = 4, oc = 6, len = 17, k = 3, groups = 2, icg = c / groups;
  const auto w = iota_values(static_cast<std::size_t>(oc * icg * k), 0.1f, -0.5f);
  const auto b = iota_values(static_cast<std::size_t>(oc), 0.2f, -0.6f);
  // conv: stride 2, pads (2, 1), dilation 2: (17 + 3 - 4 - 1) / 2 + 1 = 8; pool 3, stride 2,
  // pad 1: (8 + 2 - 3) / 2 + 1 = 4
  const std::int64_t cl = 8, pl = 4;
  ModelBuilder m(14);
  m.input("x", {n, c, len}).output("y", {n, oc, 1}).output("p", {n, oc, pl});
  m.weight("w", {oc, icg, k}, w).weight("b", {oc}, b);
  m.node("Conv", {"x", "w", "b"}, {"cv"}, {{"group", groups}},
         {{"kernel_shape", {k}}, {"strides", {2}}, {"pads", {2, 1}}, {"dilations", {2}}})
      .node("MaxPool", {"cv"}, {"p"}, {},
            {{"kernel_shape", {3}}, {"strides", {2}}, {"pads", {1, 1}}})
      .node("GlobalAveragePool", {"p"}, {"y"});
  for (int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense x = r.tensor("x");
    Dense conv({n, oc, cl}), pool({n, oc, pl}), mean({n, oc, 1});
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t o = 0; o < oc; ++o) {
        for (std::int64_t q = 0; q < cl; ++q) {
          double s = b[static_cast<std::size_t>(o)];
          for (std::int64_t ci = 0; ci < icg; ++ci)
            for (std::int64_t t = 0; t < k; ++t) {
              const std::int64_t ix = q * 2 - 2 + t * 2;
              if (ix < 0 || ix >= len) continue;
              s += w[static_cast<std::size_t>((o * icg + ci) * k + t)] *
                   x[{i, (o / (oc / groups)) * icg + ci, ix}];
            }
          conv[{i, o, q}] = s;
        }
        for (std::int64_t q = 0; q < pl; ++q) {
          double mx = -std::numeric_limits<double>::infinity();
          for (std::int64_t t = 2 * q - 1; t <= 2 * q + 1; ++t)
            if (t >= 0 && t < cl) mx = std::max(mx, conv[{i, o, t}]);
          pool[{i, o, q}] = mx;
          mean[{i, o, 0}] += mx / pl;
        }
      }
    EXPECT_LT(max_rel_diff(r.tensor("p"), pool), 1e-5) << "P=" << p;
    EXPECT_LT(max_rel_diff(r.tensor("y"), mean), 1e-5) << "P=" << p;
    // conv 2 icg k + 1 per output (96), pool k per output (48), mean 1 per input + 1 per output
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, 96.0 * (2 * icg * k + 1) + 48.0 * 3 + 48 + 12)
        << "P=" << p;
  }
}

// LRN (AlexNet's): y = x (bias + alpha / size sum over channels c - (size - 1) / 2 .. c + size / 2
// of x^2)^-beta, on [2, 7, 3, 4] with an even and an odd size, against loops on 1-4 devices (the
// channels cut with their halo); FLOPs: size per element for the channel sum, 5 more (square,
// scale, add, power, product).
TEST(ConvImportOps, LocalResponseNormalizationMatchesLoops) {
  for (const std::int64_t size : {4, 5}) {
    ModelBuilder m(13);
    m.input("x", {2, 7, 3, 4}).output("y", {2, 7, 3, 4});
    m.node("LRN", {"x"}, {"y"}, {{"size", size}}, {},
           {{"alpha", 0.5f}, {"beta", 0.75f}, {"bias", 2.0f}});
    for (const int p : {1, 2, 4}) {
      const auto r = import_and_eval(m, p);
      const Dense x = r.tensor("x");
      Dense want({2, 7, 3, 4});
      for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t c = 0; c < 7; ++c)
          for (std::int64_t h = 0; h < 3; ++h)
            for (std::int64_t w = 0; w < 4; ++w) {
              double s = 0;
              for (std::int64_t k = c - (size - 1) / 2; k <= c + size / 2; ++k)
                if (k >= 0 && k < 7) s += x[{n, k, h, w}] * x[{n, k, h, w}];
              want[{n, c, h, w}] =
                  x[{n, c, h, w}] * std::pow(2.0 + 0.5 / static_cast<double>(size) * s, -0.75);
            }
      EXPECT_LT(max_rel_diff(r.tensor("y"), want), 1e-5) << size << " P=" << p;
      EXPECT_DOUBLE_EQ(r.res.report.total_flops, 168.0 * static_cast<double>(size + 5)) << p;
    }
  }
}

// GlobalMaxPool over the spatial axes of a 4-D and a 5-D tensor: the maximum per (n, c), by
// loops; FLOPs: one comparison per input element.
TEST(ConvImportOps, GlobalMaxPoolTakesTheSpatialMaximum) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{2, 3, 4, 5}, std::vector<std::int64_t>{1, 2, 3, 2, 2}}) {
    std::vector<test::Dim> dims(shape.begin(), shape.end()), ones(shape.size(), std::int64_t{1});
    ones[0] = shape[0], ones[1] = shape[1];
    ModelBuilder m;
    m.input("x", dims).output("y", ones);
    m.node("GlobalMaxPool", {"x"}, {"y"});
    std::int64_t rest = 1;
    for (std::size_t d = 2; d < shape.size(); ++d) rest *= shape[d];
    for (const int p : {1, 3}) {
      const auto r = import_and_eval(m, p);
      const Dense x = r.tensor("x"), y = r.tensor("y");
      ASSERT_EQ(y.data.size(), static_cast<std::size_t>(shape[0] * shape[1]));
      for (std::int64_t i = 0; i < shape[0] * shape[1]; ++i) {
        double mx = -1e300;
        for (std::int64_t e = 0; e < rest; ++e)
          mx = std::max(mx, x.data[static_cast<std::size_t>(i * rest + e)]);
        EXPECT_EQ(y.data[static_cast<std::size_t>(i)], mx) << i;
      }
      EXPECT_DOUBLE_EQ(r.res.report.total_flops, static_cast<double>(x.data.size())) << p;
    }
  }
}

TEST(ConvImportErrors, MalformedModelsNameTheNode) {
  {
    ModelBuilder m;  // a 5x5 kernel on a 3x3 input without padding
    m.input("x", {1, 1, 3, 3})
        .output("y", {"n", "c", "h", "w"})
        .weight("w", {1, 1, 5, 5}, std::vector<float>(25, 1));
    m.node("Conv", {"x", "w"}, {"y"});
    const std::string e = import_error(m);
    EXPECT_NE(e.find("bad.onnx"), std::string::npos) << e;
    EXPECT_NE(e.find("larger than the padded input"), std::string::npos) << e;
    EXPECT_NE(e.find("Conv_1"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
  {
    ModelBuilder m;  // 3 groups do not divide 4 channels
    m.input("x", {1, 4, 5, 5})
        .output("y", {"n", "c", "h", "w"})
        .weight("w", {3, 1, 3, 3}, std::vector<float>(27, 1));
    m.node("Conv", {"x", "w"}, {"y"}, {{"group", 3}});
    EXPECT_NE(import_error(m).find("group 3 does not divide"), std::string::npos)
        << import_error(m);
  }
  {
    ModelBuilder m;  // the weight is a graph input, not an initializer
    m.input("x", {1, 2, 5, 5}).input("w", {2, 2, 3, 3}).output("y", {"n", "c", "h", "w"});
    m.node("Conv", {"x", "w"}, {"y"});
    EXPECT_NE(import_error(m).find("weight"), std::string::npos) << import_error(m);
  }
}

}  // namespace
}  // namespace doppler
