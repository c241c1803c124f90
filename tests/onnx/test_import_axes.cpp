// Softmax, LogSoftmax and LayerNormalization along axes other than the last: values against
// plain loops (ONNX's definitions: opset 13's Softmax along one axis, the earlier ones over the
// input coerced to 2-D, LayerNormalization over every axis from `axis` on), FLOPs by
// docs/onnx.md (transposes and reshapes cost none).
#include <algorithm>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "workloads/block_eval.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::iota_values;
using test::ModelBuilder;

// softmax (or log-softmax) of x [2, 3, 4] over the elements (i, j, k) that `group` maps to the
// same key, in row-major order.
Dense grouped_softmax(const Dense& x, const std::function<int(int, int, int)>& group, bool log) {
  std::vector<double> mx(24, -1e300), sum(24, 0);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        double& m = mx[static_cast<std::size_t>(group(i, j, k))];
        m = std::max(m, x[{i, j, k}]);
      }
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const auto g = static_cast<std::size_t>(group(i, j, k));
        sum[g] += std::exp(x[{i, j, k}] - mx[g]);
      }
  Dense y({2, 3, 4});
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      for (int k = 0; k < 4; ++k) {
        const auto g = static_cast<std::size_t>(group(i, j, k));
        const double v = x[{i, j, k}] - mx[g];
        y[{i, j, k}] = log ? v - std::log(sum[g]) : std::exp(v) / sum[g];
      }
  return y;
}

// Opset 13: Softmax along the middle axis, LogSoftmax along the first, Softmax along the last;
// 5, 6 and 5 FLOPs per element.
TEST(OnnxImportAxes, SoftmaxAlongAnyAxisMatchesLoops) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("a", {2, 3, 4}).output("b", {2, 3, 4}).output("c", {2, 3, 4});
  m.node("Softmax", {"x"}, {"a"}, {{"axis", 1}})
      .node("LogSoftmax", {"x"}, {"b"}, {{"axis", 0}})
      .node("Softmax", {"x"}, {"c"}, {{"axis", -1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    const auto along_j = [](int i, int, int k) { return i * 4 + k; };
    const auto along_i = [](int, int j, int k) { return j * 4 + k; };
    const auto along_k = [](int i, int j, int) { return i * 3 + j; };
    EXPECT_LT(test::max_abs_diff(e.tensor("a"), grouped_softmax(x, along_j, false)), 1e-6)
        << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("b"), grouped_softmax(x, along_i, true)), 1e-6)
        << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("c"), grouped_softmax(x, along_k, false)), 1e-6)
        << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * (5 + 6 + 5)) << "P=" << p;
  }
}

// Before opset 13 the input is coerced to 2-D at `axis`: Softmax at axis 1 (the default, as
// LogSoftmax here) normalizes each batch element's 12 values together, at axis 0 all 24.
TEST(OnnxImportAxes, SoftmaxBeforeOpset13CoercesTheInputTo2D) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4}).output("a", {2, 3, 4}).output("b", {2, 3, 4}).output("c", {2, 3, 4});
  m.node("Softmax", {"x"}, {"a"}, {{"axis", 1}})
      .node("LogSoftmax", {"x"}, {"b"})
      .node("Softmax", {"x"}, {"c"}, {{"axis", 0}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    const auto per_batch = [](int i, int, int) { return i; };
    const auto all = [](int, int, int) { return 0; };
    EXPECT_LT(test::max_abs_diff(e.tensor("a"), grouped_softmax(x, per_batch, false)), 1e-6)
        << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("b"), grouped_softmax(x, per_batch, true)), 1e-6)
        << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("c"), grouped_softmax(x, all, false)), 1e-6) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * (5 + 6 + 5)) << "P=" << p;
  }
}

// LayerNormalization of x [2, 3, 4] over axes 1 and 2 (axis 1, scale and bias [3, 4]: 7 FLOPs
// per element and 4 per row, 2 rows) and over every axis (axis 0, scale [2, 3, 4], no bias: 6
// per element, 1 row).
TEST(OnnxImportAxes, LayerNormalizationOverTrailingAxesMatchesLoops) {
  const auto g = iota_values(12, 0.2f, 0.5f), b = iota_values(12, 0.1f, -0.3f);
  const auto g0 = iota_values(24, -0.05f, 1.1f);
  ModelBuilder m(17);
  m.input("x", {2, 3, 4}).output("y", {2, 3, 4}).output("z", {2, 3, 4});
  m.weight("g", {3, 4}, g).weight("b", {3, 4}, b).weight("g0", {2, 3, 4}, g0);
  m.node("LayerNormalization", {"x", "g", "b"}, {"y"}, {{"axis", 1}}, {}, {{"epsilon", 1e-3f}})
      .node("LayerNormalization", {"x", "g0"}, {"z"}, {{"axis", 0}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    Dense want_y({2, 3, 4}), want_z({2, 3, 4});
    const auto normalize = [&](int first, int count, double eps, Dense& out,
                               const std::function<double(int)>& affine) {
      double mean = 0, var = 0;
      for (int f = first; f < first + count; ++f) mean += x.data[static_cast<std::size_t>(f)];
      mean /= count;
      for (int f = first; f < first + count; ++f) {
        const double d = x.data[static_cast<std::size_t>(f)] - mean;
        var += d * d / count;
      }
      for (int f = first; f < first + count; ++f)
        out.data[static_cast<std::size_t>(f)] =
            affine(f) * (x.data[static_cast<std::size_t>(f)] - mean) / std::sqrt(var + eps);
    };
    for (int i = 0; i < 2; ++i)
      normalize(i * 12, 12, 1e-3, want_y,
                [&](int f) { return g[static_cast<std::size_t>(f % 12)]; });
    for (int f = 0; f < 24; ++f)
      want_y.data[static_cast<std::size_t>(f)] += b[static_cast<std::size_t>(f % 12)];
    normalize(0, 24, 1e-5, want_z, [&](int f) { return g0[static_cast<std::size_t>(f)]; });
    EXPECT_LT(test::max_abs_diff(e.tensor("y"), want_y), 1e-5) << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("z"), want_z), 1e-5) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * 7 + 2 * 4 + 24.0 * 6 + 1 * 4) << "P=" << p;
  }
}

// LayerNormalization's optional outputs Mean and InvStdDev (X's shape with 1 from `axis` on):
// over axes 1 and 2 of x [2, 3, 4] both, over the last axis InvStdDev only (Mean left unnamed).
// They cost nothing beyond the normalization's own FLOPs.
TEST(OnnxImportAxes, LayerNormalizationGivesItsMeanAndInvStdDev) {
  ModelBuilder m(17);
  m.input("x", {2, 3, 4}).output("y", {2, 3, 4}).output("mean", {2, 1, 1});
  m.output("rstd", {2, 1, 1}).output("z", {2, 3, 4}).output("zr", {2, 3, 1});
  m.weight("g", {4}, iota_values(4, 0.2f, 0.5f));
  m.node("LayerNormalization", {"x", "g"}, {"y", "mean", "rstd"}, {{"axis", 1}}, {},
         {{"epsilon", 1e-3f}})
      .node("LayerNormalization", {"x", "g"}, {"z", "", "zr"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    Dense mean({2, 1, 1}), rstd({2, 1, 1}), zr({2, 3, 1});
    // Statistics of the `count` elements from `first` on (row-major).
    const auto stats = [&](int first, int count, double eps, double& mu, double& inv) {
      double m1 = 0, var = 0;
      for (int f = first; f < first + count; ++f) m1 += x.data[static_cast<std::size_t>(f)];
      m1 /= count;
      for (int f = first; f < first + count; ++f) {
        const double d = x.data[static_cast<std::size_t>(f)] - m1;
        var += d * d / count;
      }
      mu = m1;
      inv = 1 / std::sqrt(var + eps);
    };
    double unused = 0;
    for (std::size_t i = 0; i < 2; ++i)
      stats(static_cast<int>(i) * 12, 12, 1e-3, mean.data[i], rstd.data[i]);
    for (int r = 0; r < 6; ++r) stats(r * 4, 4, 1e-5, unused, zr.data[static_cast<std::size_t>(r)]);
    EXPECT_LT(test::max_abs_diff(e.tensor("mean"), mean), 1e-6) << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("rstd"), rstd), 1e-5) << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("zr"), zr), 1e-5) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, (24.0 * 6 + 2 * 4) + (24.0 * 6 + 6 * 4))
        << "P=" << p;
  }
}

// TopK of x [2, 3, 4] along the middle axis (largest, values and indices; P=4 cuts that axis, which
// is made whole) and along the last (smallest, sorted = 0 ordered anyway): against a stable sort
// of each row by loops; k FLOPs per input element and output.
TEST(OnnxImportAxes, TopKAlongAnyAxisMatchesASort) {
  ModelBuilder m(11);
  m.input("x", {2, 3, 4}).ints("k2", {1}, {2}).ints("k3", {1}, {3});
  m.output("v", {2, 2, 4}).output("i", {2, 2, 4}, onnx::TensorProto::INT64);
  m.output("sv", {2, 3, 3}).output("si", {2, 3, 3}, onnx::TensorProto::INT64);
  m.node("TopK", {"x", "k2"}, {"v", "i"}, {{"axis", 1}})
      .node("TopK", {"x", "k3"}, {"sv", "si"}, {{"largest", 0}, {"sorted", 0}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p, {});
    const Dense x = e.tensor("x"), v = e.tensor("v"), i = e.tensor("i");
    const Dense sv = e.tensor("sv"), si = e.tensor("si");
    // The positions 0..n-1 of a row, stably sorted by at(position), larger first or not.
    const auto sorted = [](int n, const std::function<double(int)>& at, bool largest) {
      std::vector<int> o(static_cast<std::size_t>(n));
      for (int j = 0; j < n; ++j) o[static_cast<std::size_t>(j)] = j;
      std::stable_sort(o.begin(), o.end(),
                       [&](int a, int b) { return largest ? at(a) > at(b) : at(a) < at(b); });
      return o;
    };
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 4; ++c) {
        const auto o = sorted(
            3,
            [&](int j) {
              return x[{b, j, c}];
            },
            true);
        for (int r = 0; r < 2; ++r) {
          const int j = o[static_cast<std::size_t>(r)];
          EXPECT_EQ((v[{b, r, c}]), (x[{b, j, c}])) << "P=" << p;
          EXPECT_EQ((i[{b, r, c}]), j) << "P=" << p;
        }
      }
    for (int b = 0; b < 2; ++b)
      for (int j = 0; j < 3; ++j) {
        const auto o = sorted(
            4,
            [&](int c) {
              return x[{b, j, c}];
            },
            false);
        for (int r = 0; r < 3; ++r) {
          const int c = o[static_cast<std::size_t>(r)];
          EXPECT_EQ((sv[{b, j, r}]), (x[{b, j, c}])) << "P=" << p;
          EXPECT_EQ((si[{b, j, r}]), c) << "P=" << p;
        }
      }
    // Values and indices each k per input element (a topk each).
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * (2 + 2) + 24.0 * (3 + 3)) << "P=" << p;
  }
}

// GatherElements (torch.gather) of x [2, 3, 4]: along the middle axis at constant indices (some
// negative) of fewer rows ([1, 2, 4]: x is cut to the indices' extents off the axis), and of w
// [2, 3, 5] along the last axis at computed indices (TopK's of x); against loops of ONNX's
// definition, out[b][j][c] = data[b][idx[b][j][c]][c] (axis 1). No FLOPs beyond TopK's.
TEST(OnnxImportAxes, GatherElementsMatchesLoops) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).input("w", {2, 3, 5}).ints("k2", {1}, {2});
  m.ints("ci", {1, 2, 4}, {0, -1, 2, 1, -3, 2, 0, -2});
  m.output("g", {1, 2, 4}).output("h", {2, 3, 2});
  m.node("GatherElements", {"x", "ci"}, {"g"}, {{"axis", 1}})
      .node("TopK", {"x", "k2"}, {"v", "i"})
      .node("GatherElements", {"w", "i"}, {"h"}, {{"axis", -1}});
  const std::vector<int> ci = {0, -1, 2, 1, -3, 2, 0, -2};
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p, {});
    const Dense x = e.tensor("x"), w = e.tensor("w"), g = e.tensor("g"), h = e.tensor("h");
    const Dense i = e.tensor("i");
    for (int j = 0; j < 2; ++j)
      for (int c = 0; c < 4; ++c) {
        const int r = ci[static_cast<std::size_t>(4 * j + c)];
        EXPECT_EQ((g[{0, j, c}]), (x[{0, r < 0 ? r + 3 : r, c}])) << "P=" << p;
      }
    for (int b = 0; b < 2; ++b)
      for (int j = 0; j < 3; ++j)
        for (int c = 0; c < 2; ++c) {
          const auto at = static_cast<int>(i[{b, j, c}]);
          ASSERT_GE(at, 0);
          ASSERT_LT(at, 4);
          EXPECT_EQ((h[{b, j, c}]), (w[{b, j, at}])) << "P=" << p;
        }
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * (2 + 2)) << "P=" << p;
  }
}

// GatherElements' refusals: a constant index outside the axis, indices larger than the data off
// the axis, and operands of different ranks.
TEST(OnnxImportAxes, GatherElementsRefusesBadIndices) {
  const auto error = [](const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& v,
                        int axis) {
    ModelBuilder m(13);
    m.input("x", {2, 3})
        .ints("ci", shape, v)
        .output("y", std::vector<test::Dim>(shape.begin(), shape.end()));
    m.node("GatherElements", {"x", "ci"}, {"y"}, {{"axis", axis}});
    return import_error(m);
  };
  EXPECT_NE(error({2, 1}, {0, 3}, 1).find("GatherElements: index out of range"), std::string::npos);
  EXPECT_NE(error({2, 1}, {-4, 0}, 1).find("index out of range"), std::string::npos);
  EXPECT_NE(error({3, 1}, {0, 0, 0}, 1).find("indices larger than the data off the axis"),
            std::string::npos);
  EXPECT_NE(error({2}, {0, 0}, 0).find("GatherElements"), std::string::npos);
}

}  // namespace
}  // namespace doppler
