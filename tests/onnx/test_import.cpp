// ONNX import on small hand-built models: values (block evaluator of docs/exec.md against plain
// loops), FLOPs, partitioning, constant folding of shape subgraphs.
#include <cmath>

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
using test::iota_values;
using test::ModelBuilder;

double max_abs_diff(const Dense& a, const std::vector<double>& b) {
  EXPECT_EQ(a.data.size(), b.size());
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.data.size(), b.size()); ++i)
    m = std::max(m, std::abs(a.data[i] - b[i]));
  return m;
}

TEST(OnnxImport, LinearReluMatchesLoopsFlopsAndBlocks) {
  const auto w = iota_values(8 * 6, 0.1f, -0.5f), b = iota_values(6, 0.2f, -1.0f);
  ModelBuilder m;
  m.input("x", {4, 8}).output("y", {4, 6}).weight("w", {8, 6}, w).weight("b", {6}, b);
  m.node("MatMul", {"x", "w"}, {"xw"}).node("Add", {"xw", "b"}, {"h"}).node("Relu", {"h"}, {"y"});
  for (int p : {1, 2, 3}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y");
    std::vector<double> want(24);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; ++j) {
        double s = b[static_cast<std::size_t>(j)];
        for (int k = 0; k < 8; ++k) s += x(i, k) * w[static_cast<std::size_t>(k * 6 + j)];
        want[static_cast<std::size_t>(i * 6 + j)] = std::max(s, 0.0);
      }
    EXPECT_LT(max_abs_diff(y, want), 1e-5) << "P=" << p;
    // 2MNK for the product, one FLOP per element for the bias and for the ReLU.
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 2.0 * 4 * 8 * 6 + 24 + 24);
    EXPECT_DOUBLE_EQ(e.res.report.einsum_flops, 2.0 * 4 * 8 * 6);
    // Auto partition: the output [4, 6] is cut along its largest dimension (6) into P blocks.
    EXPECT_EQ(e.res.report.nodes.back().blocks, p) << "P=" << p;
    EXPECT_EQ(e.res.report.parameters, 8 * 6 + 6);
  }
}

TEST(OnnxImport, FoldsShapeSubgraphAndLowersAttentionScores) {
  // x [2, 4, 6] -> reshape to [2, 4, 2, 3] with a shape computed by Shape/Gather/Unsqueeze/
  // Concat (as PyTorch exports it) -> transpose to heads -> q k^T / sqrt(3) -> softmax.
  ModelBuilder m;
  m.input("x", {2, 4, 6}).output("y", {2, 2, 4, 4});
  m.ints("i0", {}, {0}).ints("i1", {}, {1}).ints("ax0", {1}, {0}).ints("tail", {2}, {2, 3});
  m.weight("scale", {}, {std::sqrt(3.0f)});
  m.node("Shape", {"x"}, {"s"})
      .node("Gather", {"s", "i0"}, {"b"})
      .node("Gather", {"s", "i1"}, {"t"})
      .node("Unsqueeze", {"b", "ax0"}, {"bu"})
      .node("Unsqueeze", {"t", "ax0"}, {"tu"})
      .node("Concat", {"bu", "tu", "tail"}, {"shape"}, {{"axis", 0}})
      .node("Reshape", {"x", "shape"}, {"xr"})
      .node("Transpose", {"xr"}, {"q"}, {}, {{"perm", {0, 2, 1, 3}}})
      .node("Transpose", {"xr"}, {"kt"}, {}, {{"perm", {0, 2, 3, 1}}})
      .node("MatMul", {"q", "kt"}, {"qk"})
      .node("Div", {"qk", "scale"}, {"a"})
      .node("Softmax", {"a"}, {"y"}, {{"axis", -1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    EXPECT_EQ(e.res.report.folded_nodes, 6);  // Shape, 2 Gather, 2 Unsqueeze, Concat
    const Dense x = e.tensor("x"), y = e.tensor("y");
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2, 2, 4, 4}));
    std::vector<double> want;
    for (int bb = 0; bb < 2; ++bb)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          std::vector<double> row(4);
          double mx = -1e300, sum = 0;
          for (int j = 0; j < 4; ++j) {
            double s = 0;
            for (int d = 0; d < 3; ++d) s += x[{bb, i, h * 3 + d}] * x[{bb, j, h * 3 + d}];
            row[static_cast<std::size_t>(j)] = s / std::sqrt(3.0);
            mx = std::max(mx, row[static_cast<std::size_t>(j)]);
          }
          for (double& r : row) sum += (r = std::exp(r - mx));
          for (double r : row) want.push_back(r / sum);
        }
    EXPECT_LT(max_abs_diff(y, want), 1e-5) << "P=" << p;
    // QK^T: 2 * batch 2 * heads 2 * 4 * 4 * 3; scale 1 and softmax 5 per score.
    EXPECT_DOUBLE_EQ(e.res.report.einsum_flops, 2.0 * 2 * 2 * 4 * 4 * 3);
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 2.0 * 2 * 2 * 4 * 4 * 3 + 64 * (1 + 5));
  }
}

TEST(OnnxImport, LayerNormGemmWhereSliceConcatMatchLoops) {
  // y = concat(slice(LN(x)), Where(mask, -3, gemm(x, W^T) * 0.5 + 2 * c))
  const auto w = iota_values(5 * 4, 0.1f, -0.4f), c = iota_values(5, 0.3f, -0.7f);
  const auto g = iota_values(4, 0.2f, 0.5f), bias = iota_values(4, 0.1f, -0.2f);
  ModelBuilder m(17);
  m.input("x", {3, 4}).output("y", {3, 8});
  m.weight("w", {5, 4}, w).weight("c", {5}, c).weight("g", {4}, g).weight("bias", {4}, bias);
  m.weight("minus3", {}, {-3.0f});
  m.ints("starts", {1}, {1}).ints("ends", {1}, {4}).ints("axes", {1}, {1});
  {
    auto& mb = m.node("LayerNormalization", {"x", "g", "bias"}, {"ln"}, {{"axis", -1}}, {},
                      {{"epsilon", 1e-3f}});
    mb.node("Slice", {"ln", "starts", "ends", "axes"}, {"lns"});
    mb.node("Gemm", {"x", "w", "c"}, {"gm"}, {{"transB", 1}}, {},
            {{"alpha", 0.5f}, {"beta", 2.0f}});
  }
  // mask: column 1 and row 2 masked (a constant computed by the model: Equal of constants).
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("mask");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_dims(3);
  t->add_dims(5);
  for (int i = 0; i < 15; ++i) t->add_int32_data(i % 5 == 1 || i / 5 == 2 ? 1 : 0);
  m.node("Where", {"mask", "minus3", "gm"}, {"wh"});
  m.node("Concat", {"lns", "wh"}, {"y"}, {{"axis", 1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y");
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{3, 8}));
    std::vector<double> want;
    for (int i = 0; i < 3; ++i) {
      double mean = 0, var = 0;
      for (int k = 0; k < 4; ++k) mean += x(i, k) / 4;
      for (int k = 0; k < 4; ++k) var += (x(i, k) - mean) * (x(i, k) - mean) / 4;
      for (int k = 1; k < 4; ++k)
        want.push_back((x(i, k) - mean) / std::sqrt(var + 1e-3) * g[static_cast<std::size_t>(k)] +
                       bias[static_cast<std::size_t>(k)]);
      for (int j = 0; j < 5; ++j) {
        double s = 0;
        for (int k = 0; k < 4; ++k) s += x(i, k) * w[static_cast<std::size_t>(j * 4 + k)];
        const double v = 0.5 * s + 2.0 * c[static_cast<std::size_t>(j)];
        want.push_back(j == 1 || i == 2 ? -3.0 : v);
      }
    }
    EXPECT_LT(max_abs_diff(y, want), 1e-4) << "P=" << p;
  }
}

// InstanceNormalization of [2, 3, 4, 5] (each (n, c) over its 4 x 5 values) and of [2, 2, 30]
// (PyTorch's GroupNorm: 2 groups of a reshaped tensor): values against plain loops, FLOPs 7 per
// element and 4 per normalised row.
TEST(OnnxImport, InstanceNormalizationMatchesLoops) {
  for (const std::vector<std::int64_t>& shape :
       {std::vector<std::int64_t>{2, 3, 4, 5}, std::vector<std::int64_t>{2, 2, 30}}) {
    const std::int64_t n = shape[0], c = shape[1], per = 60 / c;
    const auto scale = iota_values(static_cast<std::size_t>(c), 0.3f, 0.5f);
    const auto bias = iota_values(static_cast<std::size_t>(c), 0.2f, -0.4f);
    ModelBuilder m(14);
    m.input("x", std::vector<test::Dim>(shape.begin(), shape.end()));
    m.output("y", std::vector<test::Dim>(shape.begin(), shape.end()));
    m.weight("s", {c}, scale).weight("b", {c}, bias);
    m.node("InstanceNormalization", {"x", "s", "b"}, {"y"}, {}, {}, {{"epsilon", 1e-3f}});
    for (int p : {1, 2, 4}) {
      const auto e = import_and_eval(m, p);
      const Dense x = e.tensor("x"), y = e.tensor("y");
      ASSERT_EQ(y.shape, shape);
      std::vector<double> want;
      for (std::int64_t r = 0; r < n * c; ++r) {  // rows (n, c) of `per` values, row-major
        double mean = 0, var = 0;
        for (std::int64_t k = 0; k < per; ++k)
          mean += x.data[static_cast<std::size_t>(r * per + k)] / per;
        for (std::int64_t k = 0; k < per; ++k) {
          const double d = x.data[static_cast<std::size_t>(r * per + k)] - mean;
          var += d * d / per;
        }
        const auto ch = static_cast<std::size_t>(r % c);
        for (std::int64_t k = 0; k < per; ++k)
          want.push_back((x.data[static_cast<std::size_t>(r * per + k)] - mean) /
                             std::sqrt(var + 1e-3) * scale[ch] +
                         bias[ch]);
      }
      EXPECT_LT(max_abs_diff(y, want), 1e-4) << "P=" << p;
      EXPECT_DOUBLE_EQ(e.res.report.total_flops, 7.0 * 2 * 60 + 4.0 * n * c) << "P=" << p;
    }
  }
}

// Masks computed from the input: y = Where(Not(x < 0) And x <= 1, x, -x) and z = Where((x > c)
// Xor (x >= 1), x, c): values against plain loops, 1 FLOP per element of each lowered op.
TEST(OnnxImport, ComputedComparisonsAndWhereMatchLoops) {
  ModelBuilder m(14);
  m.input("x", {3, 4}).output("y", {3, 4}).output("z", {3, 4});
  m.weight("zero", {}, {0.0f}).weight("one", {}, {1.0f}).weight("c", {4}, {-0.5f, 0, 0.25f, 2});
  m.node("Less", {"x", "zero"}, {"neg"})
      .node("Not", {"neg"}, {"nonneg"})
      .node("LessOrEqual", {"x", "one"}, {"small"})
      .node("And", {"nonneg", "small"}, {"in01"})
      .node("Neg", {"x"}, {"mx"})
      .node("Where", {"in01", "x", "mx"}, {"y"})
      .node("Greater", {"x", "c"}, {"above"})
      .node("GreaterOrEqual", {"x", "one"}, {"big"})
      .node("Xor", {"above", "big"}, {"between"})
      .node("Where", {"between", "x", "c"}, {"z"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y"), z = e.tensor("z");
    const double c[] = {-0.5, 0, 0.25, 2};
    std::vector<double> want_y, want_z;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        const double v = x(i, j), cj = c[j];
        want_y.push_back(v >= 0 && v <= 1 ? v : -v);
        want_z.push_back((v > cj) != (v >= 1) ? v : cj);
      }
    EXPECT_LT(max_abs_diff(y, want_y), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(z, want_z), 1e-12) << "P=" << p;
    // 1 FLOP per element for each of the 10 lowered ops on 12 elements
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 12.0 * 10) << "P=" << p;
  }
}

// CumSum of x [3, 5] along the rows (axis 0, inclusive) and along the last axis (-1, exclusive
// and reversed): values against plain loops, 1 FLOP per element each.
TEST(OnnxImport, CumSumMatchesLoops) {
  ModelBuilder m(14);
  m.input("x", {3, 5}).output("a", {3, 5}).output("b", {3, 5});
  m.ints("zero", {}, {0}).ints("minus1", {}, {-1});
  m.node("CumSum", {"x", "zero"}, {"a"})
      .node("CumSum", {"x", "minus1"}, {"b"}, {{"exclusive", 1}, {"reverse", 1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    std::vector<double> want_a, want_b;
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        double a = 0, b = 0;
        for (int k = 0; k <= i; ++k) a += x(k, j);
        for (int k = j + 1; k < 5; ++k) b += x(i, k);
        want_a.push_back(a);
        want_b.push_back(b);
      }
    EXPECT_LT(max_abs_diff(e.tensor("a"), want_a), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("b"), want_b), 1e-12) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 2.0 * 15) << "P=" << p;
  }
}

// Expand of a computed mask [2, 1, 1, 5] to [2, 1, 3, 5] (HF's attention mask over the queries),
// and of an unchanged shape (no copy): values against plain loops, no FLOPs.
TEST(OnnxImport, ExpandOfAComputedTensorMatchesLoops) {
  ModelBuilder m(14);
  m.input("x", {2, 1, 1, 5}).output("y", {2, 1, 3, 5}).output("z", {2, 1, 1, 5});
  m.ints("shape", {4}, {2, 1, 3, 5}).ints("same", {2}, {1, 5}).weight("zero", {}, {0.0f});
  m.node("Greater", {"x", "zero"}, {"bits"})
      .node("Cast", {"bits"}, {"mask"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Expand", {"mask", "shape"}, {"y"})
      .node("Expand", {"mask", "same"}, {"z"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    std::vector<double> want;
    for (int b = 0; b < 2; ++b)
      for (int q = 0; q < 3; ++q)
        for (int k = 0; k < 5; ++k) want.push_back(x.data[static_cast<std::size_t>(b * 5 + k)] > 0);
    EXPECT_EQ(e.tensor("y").data, want) << "P=" << p;
    EXPECT_EQ(e.tensor("z").shape, (std::vector<std::int64_t>{2, 1, 1, 5}));
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 10) << "P=" << p;  // the comparison alone
  }
}

// Reductions of x [2, 3, 4, 5] over other axes than the last: Mean over (2, 3) kept (an SE
// block's pooling), Max over 1, Min over -1, SumSquare over (1, 3), L2 over 0, Sum over every
// axis (opset 13: no axes input; kept), and Sum with noop_with_empty_axes (x itself); FLOPs by the
// documented counts.
TEST(OnnxImport, ReductionsOverAnyAxesMatchLoops) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4, 5}).output("mean", {2, 3, 1, 1}).output("max", {2, 4, 5});
  m.output("min", {2, 3, 4, 1}).output("ss", {2, 4}).output("l2", {3, 4, 5});
  m.output("all", {1, 1, 1, 1});
  m.output("same", {2, 3, 4, 5});
  m.node("ReduceMean", {"x"}, {"mean"}, {}, {{"axes", {2, 3}}})
      .node("ReduceMax", {"x"}, {"max"}, {{"keepdims", 0}}, {{"axes", {1}}})
      .node("ReduceMin", {"x"}, {"min"}, {}, {{"axes", {-1}}})
      .node("ReduceSumSquare", {"x"}, {"ss"}, {{"keepdims", 0}}, {{"axes", {1, 3}}})
      .node("ReduceL2", {"x"}, {"l2"}, {{"keepdims", 0}}, {{"axes", {0}}})
      .node("ReduceSum", {"x"}, {"all"})
      .node("ReduceSum", {"x"}, {"same"}, {{"noop_with_empty_axes", 1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    const auto at = [&](int a, int b, int c, int d) { return x[{a, b, c, d}]; };
    std::vector<double> mean, mx, mn, ss, l2;
    double all = 0;
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b) {
        double s = 0;
        for (int c = 0; c < 4; ++c)
          for (int d = 0; d < 5; ++d) s += at(a, b, c, d), all += at(a, b, c, d);
        mean.push_back(s / 20);
      }
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d) {
          double v = -INFINITY;
          for (int b = 0; b < 3; ++b) v = std::max(v, at(a, b, c, d));
          mx.push_back(v);
        }
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b)
        for (int c = 0; c < 4; ++c) {
          double v = INFINITY;
          for (int d = 0; d < 5; ++d) v = std::min(v, at(a, b, c, d));
          mn.push_back(v);
        }
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 4; ++c) {
        double v = 0;
        for (int b = 0; b < 3; ++b)
          for (int d = 0; d < 5; ++d) v += at(a, b, c, d) * at(a, b, c, d);
        ss.push_back(v);
      }
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c)
        for (int d = 0; d < 5; ++d)
          l2.push_back(
              std::sqrt(at(0, b, c, d) * at(0, b, c, d) + at(1, b, c, d) * at(1, b, c, d)));
    EXPECT_LT(max_abs_diff(e.tensor("mean"), mean), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("max"), mx), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("min"), mn), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("ss"), ss), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("l2"), l2), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("all"), {all}), 1e-9) << "P=" << p;
    EXPECT_EQ(e.tensor("same").data, x.data);
    // per input element (120): mean 1, max 1, min 2, sumsq 2, l2 2, sum 1; per output: mean 1
    // (6), min 1 (24), l2 1 (60)
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 120.0 * 9 + 6 + 24 + 60) << "P=" << p;
  }
}

// Einsum: a batched contraction with upper-case labels, the implicit output form (the labels
// that appear once, alphabetically: "ij,jk" is "ij,jk->ik"), a one-operand reduction; values
// against loops, 2 FLOPs per iteration point; a diagonal and a malformed ellipsis are one-line
// errors.
TEST(OnnxImport, EinsumMatchesLoops) {
  const auto w = iota_values(4 * 3, 0.1f, -0.5f);
  ModelBuilder m(14);
  m.input("x", {2, 3, 4}).output("y", {2, 3, 3}).output("z", {3, 3}).output("s", {2});
  m.weight("w", {4, 3}, w);
  auto& mb = m.node("Einsum", {"x", "w"}, {"y"});
  mb.attr("equation", "bQd, dK -> bQK");
  mb.node("Einsum", {"w", "w"}, {"z"}).attr("equation", "ji,jk");
  mb.node("Einsum", {"x"}, {"s"}).attr("equation", "bqd->b");
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    std::vector<double> y, z, s;
    const auto wv = [&](int r, int c) {
      return static_cast<double>(w[static_cast<std::size_t>(r * 3 + c)]);
    };
    for (int b = 0; b < 2; ++b)
      for (int q = 0; q < 3; ++q)
        for (int k = 0; k < 3; ++k) {
          double acc = 0;
          for (int d = 0; d < 4; ++d) acc += x[{b, q, d}] * wv(d, k);
          y.push_back(acc);
        }
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 3; ++k) {
        double acc = 0;
        for (int j = 0; j < 4; ++j) acc += wv(j, i) * wv(j, k);
        z.push_back(acc);
      }
    for (int b = 0; b < 2; ++b) {
      double acc = 0;
      for (int q = 0; q < 3; ++q)
        for (int d = 0; d < 4; ++d) acc += x[{b, q, d}];
      s.push_back(acc);
    }
    EXPECT_LT(max_abs_diff(e.tensor("y"), y), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("z"), z), 1e-12) << "P=" << p;
    EXPECT_LT(max_abs_diff(e.tensor("s"), s), 1e-12) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 2.0 * (2 * 3 * 4 * 3 + 3 * 4 * 3 + 2 * 3 * 4));
  }
  for (const char* bad : {"b..,dk->bk", "bqq,qk->bk"}) {
    ModelBuilder b(14);
    b.input("x", {2, 3, 3}).weight("w", {3, 3}, iota_values(9, 1, 0));
    b.output("y", {"a", "b"});
    b.node("Einsum", {"x", "w"}, {"y"}).attr("equation", bad);
    const std::string err = test::import_error(b);
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
    EXPECT_NE(err.find("no diagonals), and one ellipsis (...) at most"), std::string::npos) << err;
  }
}

// Einsum with an ellipsis: batched matrix products whose batch dimensions broadcast (a [2, 1, 3,
// 4] against b [1, 5, 4, 2]: out [2, 5, 3, 2]; libonnx 1.12's shape inference wants the same
// number of ellipsis dimensions in every operand), explicit and implicit ("...ij,jk" is
// "...ij,jk->...ik"), and a sum over the ellipsis dimensions (output without them); values
// against loops, 2 FLOPs per iteration point (the broadcast dimension counted once).
TEST(OnnxImport, EinsumEllipsisBroadcastsLikeNumPy) {
  ModelBuilder m(14);
  m.input("a", {2, 1, 3, 4}).input("b", {1, 5, 4, 2});
  m.output("y", {2, 5, 3, 2}).output("z", {2, 1, 3, 2}).output("s", {4, 2});
  m.node("Einsum", {"a", "b"}, {"y"}).attr("equation", "...ij,...jk->...ik");
  m.node("Einsum", {"a", "w"}, {"z"}).attr("equation", "...ij,jk");
  m.weight("w", {4, 2}, iota_values(8, 0.1f, -0.3f));
  m.node("Einsum", {"b"}, {"s"}).attr("equation", "...jk->jk");
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense a = e.tensor("a"), b = e.tensor("b"), w = e.tensor("w");
    Dense y({2, 5, 3, 2}), z({2, 1, 3, 2}), s({4, 2});
    for (int i = 0; i < 2; ++i)
      for (int q = 0; q < 3; ++q)
        for (int k = 0; k < 2; ++k) {
          for (int j = 0; j < 4; ++j) z[{i, 0, q, k}] += a[{i, 0, q, j}] * w[{j, k}];
          for (int f = 0; f < 5; ++f)
            for (int j = 0; j < 4; ++j) y[{i, f, q, k}] += a[{i, 0, q, j}] * b[{0, f, j, k}];
        }
    for (int f = 0; f < 5; ++f)
      for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 2; ++k) s[{j, k}] += b[{0, f, j, k}];
    EXPECT_LT(test::max_abs_diff(e.tensor("y"), y), 1e-12) << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("z"), z), 1e-12) << "P=" << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("s"), s), 1e-12) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops,
                     2.0 * (2 * 5 * 3 * 4 * 2 + 2 * 3 * 4 * 2 + 5 * 4 * 2));
  }
  // Errors: one line each; those ONNX's shape inference lets through are the importer's.
  const auto error = [](const std::string& eq, std::size_t rank) {
    ModelBuilder b(14);
    b.input("x", {2, 3, 4}).input("w", {2, 3, 4});
    b.output("y", std::vector<test::Dim>(rank, std::string("d")));
    b.node("Einsum", {"x", "w"}, {"y"}).attr("equation", eq);
    const std::string e = test::import_error(b);
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
    EXPECT_TRUE(e == "no error" || e.find("Einsum") != std::string::npos) << e;
    return e;
  };
  EXPECT_EQ(error("...j,...j->...", 2), "no error");
  EXPECT_NE(error("...j,...j->...j.", 3).find("each label once, from the operands"),
            std::string::npos);
  EXPECT_NE(error("i...,...i->i", 1)
                .find("dimension 0 of the ellipsis has extents 3 and 2 (they must be equal, or 1)"),
            std::string::npos);
  EXPECT_NE(error("jk...,kj...->...", 1).find("label 'k' has extents 3 and 2"), std::string::npos);
  error("abcd...,...->a", 1);
  error("...i,...i..->i", 1);
}

// ArgMax over axis 1 of [2, 3, 4] (keepdims 0) and ArgMin over the last axis (kept): indices
// against loops; FLOPs 1 per input element (ArgMin: 2, the negation first).
TEST(OnnxImport, ArgMaxAndArgMinMatchLoops) {
  ModelBuilder m(14);
  m.input("x", {2, 3, 4}).output("mx", {2, 4}).output("mn", {2, 3, 1});
  m.node("ArgMax", {"x"}, {"mx"}, {{"axis", 1}, {"keepdims", 0}});
  m.node("ArgMin", {"x"}, {"mn"}, {{"axis", -1}});
  m.proto()
      .mutable_graph()
      ->mutable_output(0)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT64);
  m.proto()
      .mutable_graph()
      ->mutable_output(1)
      ->mutable_type()
      ->mutable_tensor_type()
      ->set_elem_type(onnx::TensorProto::INT64);
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x");
    std::vector<double> mx, mn;
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 4; ++c) {
        int at = 0;
        for (int b = 1; b < 3; ++b)
          if (x[{a, b, c}] > x[{a, at, c}]) at = b;
        mx.push_back(at);
      }
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 3; ++b) {
        int at = 0;
        for (int c = 1; c < 4; ++c)
          if (x[{a, b, c}] < x[{a, b, at}]) at = c;
        mn.push_back(at);
      }
    EXPECT_EQ(e.tensor("mx").data, mx) << "P=" << p;
    EXPECT_EQ(e.tensor("mn").data, mn) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 + 2 * 24) << "P=" << p;
  }
}

TEST(OnnxImport, SplitAndGatherOfActivations) {
  // qkv [2, 6] split into three [2, 2]; then Gather row 1 of the second part (scalar index).
  ModelBuilder m;
  m.input("x", {2, 6}).output("y", {2}).ints("one", {}, {1});
  m.node("Split", {"x"}, {"a", "b", "c"}, {{"axis", 1}});
  m.node("Add", {"a", "c"}, {"s"});
  m.node("Mul", {"s", "b"}, {"p"});
  m.node("Gather", {"p", "one"}, {"y"}, {{"axis", 0}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y");
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2}));
    for (int j = 0; j < 2; ++j)
      EXPECT_NEAR(y.data[static_cast<std::size_t>(j)], (x(1, j) + x(1, j + 4)) * x(1, j + 2), 1e-6);
  }
}

// An embedding lookup: token ids (a graph input) index the rows of a weight; the ids are generated
// as rows of the table (whole numbers in [0, 5) once truncated), and the output is the looked-up
// rows, for a table cut or not.
TEST(OnnxImport, GatherOfComputedIndicesLooksUpRows) {
  const auto w = iota_values(5 * 6, 0.25f, -2.0f);
  ModelBuilder m;
  m.input("ids", {2, 3}, onnx::TensorProto::INT64).output("y", {2, 3, 6}).weight("w", {5, 6}, w);
  m.node("Gather", {"w", "ids"}, {"y"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense ids = e.tensor("ids"), y = e.tensor("y");
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{2, 3, 6}));
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j) {
        const double v = ids(i, j);
        ASSERT_TRUE(v >= 0 && v < 5) << v;  // generated as rows of the table
        const auto row = static_cast<std::size_t>(v);
        for (int c = 0; c < 6; ++c)
          EXPECT_EQ((y[{i, j, c}]), w[row * 6 + static_cast<std::size_t>(c)]) << "P=" << p;
      }
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 0);
    EXPECT_EQ(e.res.report.parameters, 5 * 6);
  }
}

// Gather of computed indices on the middle and last axes of x [3, 5, 4] (the indices: ArgMax of
// other inputs, whole numbers in range): out[i, j, k] = x[i, a[j], k] and out[i, j, b, c] =
// x[i, j, idx[b, c]], for x cut or not. Pure data movement (the ArgMaxes' FLOPs only).
TEST(OnnxImport, GatherOfComputedIndicesOnAnyAxis) {
  ModelBuilder m;
  m.input("x", {3, 5, 4}).input("w", {2, 5}).input("v", {2, 2, 4});
  m.output("y", {3, 2, 4}).output("z", {3, 5, 2, 2});
  m.node("ArgMax", {"w"}, {"a"}, {{"axis", 1}, {"keepdims", 0}})     // [2] in 0..4
      .node("ArgMax", {"v"}, {"b"}, {{"axis", 2}, {"keepdims", 0}})  // [2, 2] in 0..3
      .node("Neg", {"x"}, {"nx"})
      .node("Gather", {"nx", "a"}, {"y"}, {{"axis", 1}})
      .node("Gather", {"nx", "b"}, {"z"}, {{"axis", -1}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p, {{"nx", {3, 1, 2}}});
    const Dense x = e.tensor("x"), a = e.tensor("a"), b = e.tensor("b");
    const Dense y = e.tensor("y"), z = e.tensor("z");
    ASSERT_EQ(y.shape, (std::vector<std::int64_t>{3, 2, 4}));
    ASSERT_EQ(z.shape, (std::vector<std::int64_t>{3, 5, 2, 2}));
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 2; ++j)
        for (std::int64_t k = 0; k < 4; ++k) {
          const auto aj = static_cast<std::int64_t>(a[{j}]);
          EXPECT_EQ((y[{i, j, k}]), -(x[{i, aj, k}])) << "P=" << p;
        }
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        for (std::int64_t c = 0; c < 4; ++c) {  // the index pair (c / 2, c % 2)
          const auto at = static_cast<std::int64_t>(b[{c / 2, c % 2}]);
          EXPECT_EQ((z[{i, j, c / 2, c % 2}]), -(x[{i, j, at}])) << "P=" << p;
        }
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 10 + 16 + 60) << "P=" << p;  // ArgMaxes, Neg
  }
}

// The math of relative-position buckets (as T5 computes them from constant positions), folded at
// import: Abs, Log, Floor, Min, Sign, Mod (Python's sign), variadic Max, LessOrEqual,
// GreaterOrEqual, Xor, Reciprocal, Ceil; the result added to a computed input.
TEST(OnnxImport, ConstantPositionMathIsFolded) {
  ModelBuilder m;
  m.input("x", {6}).output("y", {6}).ints("r", {6}, {-5, -2, 0, 1, 3, 8});
  m.weight("one", {}, {1}).weight("two", {}, {2}).weight("three", {}, {3});
  m.ints("four", {}, {4}).ints("zero", {}, {0}).ints("three_i", {}, {3});
  m.node("Abs", {"r"}, {"a"})
      .node("Cast", {"a"}, {"c"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Add", {"c", "one"}, {"f"})
      .node("Log", {"f"}, {"g"})  // log(|r| + 1)
      .node("Mul", {"g", "two"}, {"g2"})
      .node("Floor", {"g2"}, {"h"})         // 3, 2, 0, 1, 2, 4
      .node("Min", {"h", "three"}, {"mn"})  // 3, 2, 0, 1, 2, 3
      .node("Sign", {"r"}, {"si"})          // -1, -1, 0, 1, 1, 1
      .node("Cast", {"si"}, {"s"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Mul", {"mn", "s"}, {"b"})     // -3, -2, 0, 1, 2, 3
      .node("Mod", {"r", "four"}, {"qi"})  // 3, 2, 0, 1, 3, 0
      .node("Cast", {"qi"}, {"q"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Max", {"q", "mn", "h"}, {"z"})  // 3, 2, 0, 1, 3, 4
      .node("LessOrEqual", {"r", "zero"}, {"le"})
      .node("GreaterOrEqual", {"r", "three_i"}, {"ge"})
      .node("Xor", {"le", "ge"}, {"cond"})  // T, T, T, F, T, T
      .node("Reciprocal", {"f"}, {"inv"})
      .node("Ceil", {"inv"}, {"ones"})  // 1 everywhere
      .node("Add", {"ones", "ones"}, {"twos"})
      .node("Where", {"cond", "z", "twos"}, {"k"})  // 3, 2, 0, 2, 3, 4
      .node("Add", {"b", "k"}, {"bk"})              // 0, 0, 0, 3, 5, 7
      .node("Add", {"x", "bk"}, {"y"});
  const auto e = import_and_eval(m, 2);
  const Dense x = e.tensor("x"), y = e.tensor("y");
  const double want[] = {0, 0, 0, 3, 5, 7};
  for (std::size_t i = 0; i < 6; ++i) EXPECT_NEAR(y.data[i], x.data[i] + want[i], 1e-6) << i;
  EXPECT_EQ(e.res.report.folded_nodes, 21);  // every node but the last
  EXPECT_DOUBLE_EQ(e.res.report.total_flops, 6);
}

// The activations: LeakyRelu, Elu (their alphas), Softplus, Log, Abs and LogSoftmax, against
// loops; FLOPs by docs/onnx.md: 2 + 4 + 3 + 1 + 1 + 6 per element.
TEST(OnnxImport, ActivationsMatchLoops) {
  ModelBuilder m;
  m.input("x", {3, 4}).output("y", {3, 4});
  m.node("LeakyRelu", {"x"}, {"a"}, {}, {}, {{"alpha", 0.3f}})
      .node("Elu", {"a"}, {"b"}, {}, {}, {{"alpha", 0.7f}})
      .node("Softplus", {"b"}, {"c"})
      .node("Log", {"c"}, {"d"})
      .node("Abs", {"d"}, {"e"})
      .node("LogSoftmax", {"e"}, {"y"}, {{"axis", -1}});
  for (int p : {1, 2}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y");
    for (int i = 0; i < 3; ++i) {
      double v[4], sum = 0;
      for (int j = 0; j < 4; ++j) {
        const double a = x(i, j) > 0 ? x(i, j) : 0.3 * x(i, j);
        const double b = a > 0 ? a : 0.7 * (std::exp(a) - 1);
        v[j] = std::abs(std::log(std::log(1 + std::exp(b))));
        sum += std::exp(v[j]);
      }
      for (int j = 0; j < 4; ++j) EXPECT_NEAR(y(i, j), v[j] - std::log(sum), 1e-5) << i << j;
    }
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 17.0 * 12);
  }
}

// Elementwise ops of computed tensors that were once folded only: Reciprocal, Floor, Ceil, Round
// (halves to even), Sign, Sin, Cos; variadic Max and Min (a constant among the operands); Pow with
// a computed exponent; PRelu with a per-column slope. Against loops, 1 FLOP per element each (2
// for PRelu, Max and Min one per operand after the first).
TEST(OnnxImport, ElementwiseOpsOfComputedTensorsMatchLoops) {
  ModelBuilder m;
  m.input("x", {3, 4}).input("z", {3, 4}).weight("c", {4}, {0.25f, -0.25f, 0.5f, -0.5f});
  m.weight("slope", {4}, {0.1f, 0.2f, 0.3f, 0.4f}).weight("three", {}, {3.0f});
  m.node("Mul", {"x", "three"}, {"x3"});  // [-3, 3): halves and negatives to round
  for (const char* op : {"Reciprocal", "Floor", "Ceil", "Round", "Sign", "Sin", "Cos"})
    m.node(op, {"x3"}, {std::string("u_") + op}).output(std::string("u_") + op, {3, 4});
  m.node("Max", {"x", "z", "c"}, {"mx"}).node("Min", {"x", "z"}, {"mn"});
  m.node("Abs", {"x"}, {"ax"}).node("Pow", {"ax", "z"}, {"pw"});
  m.node("PRelu", {"x", "slope"}, {"pr"});
  for (const char* y : {"mx", "mn", "pw", "pr"}) m.output(y, {3, 4});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), z = e.tensor("z");
    const std::vector<double> c = {0.25, -0.25, 0.5, -0.5}, sl = {0.1f, 0.2f, 0.3f, 0.4f};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j) {
        const double v = 3 * x(i, j), a = x(i, j), b = z(i, j);
        const double half_even =
            std::abs(v - std::trunc(v)) == 0.5 ? 2 * std::round(v / 2) : std::round(v);
        EXPECT_NEAR(e.tensor("u_Reciprocal")(i, j), 1 / v, 1e-6 * std::abs(1 / v));
        EXPECT_EQ(e.tensor("u_Floor")(i, j), std::floor(v));
        EXPECT_EQ(e.tensor("u_Ceil")(i, j), std::ceil(v));
        EXPECT_EQ(e.tensor("u_Round")(i, j), half_even);
        EXPECT_EQ(e.tensor("u_Sign")(i, j), v > 0 ? 1 : v < 0 ? -1 : 0);
        EXPECT_NEAR(e.tensor("u_Sin")(i, j), std::sin(v), 1e-6);
        EXPECT_NEAR(e.tensor("u_Cos")(i, j), std::cos(v), 1e-6);
        EXPECT_EQ(e.tensor("mx")(i, j), std::max({a, b, c[static_cast<std::size_t>(j)]}));
        EXPECT_EQ(e.tensor("mn")(i, j), std::min(a, b));
        EXPECT_NEAR(e.tensor("pw")(i, j), std::pow(std::abs(a), b),
                    1e-5 * std::pow(std::abs(a), b));
        EXPECT_NEAR(e.tensor("pr")(i, j), a < 0 ? sl[static_cast<std::size_t>(j)] * a : a, 1e-7);
      }
    // Mul 1, seven unary 1 each, Max 2 (three operands), Min 1, Abs 1, Pow 1, PRelu 2.
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 12.0 * (1 + 7 + 2 + 1 + 1 + 1 + 2)) << "P=" << p;
  }
}

// Selu and Celu (their attributes), Tan, Asin, Acos, Atan, Sinh, Cosh, IsNaN, IsInf, Mod (fmod:
// floats; the divisor's sign is for integers, checked on the kernel) of computed tensors, and
// ReduceL1 and ReduceLogSumExp over the last axis, against loops; FLOPs 5 for Selu and Celu, 1 for
// the others, ReduceL1 2 per input element, ReduceLogSumExp 4 per input element and 2 per output
// one.
TEST(OnnxImport, TrigActivationsModuloAndReductionsMatchLoops) {
  ModelBuilder m(13);
  m.input("x", {3, 4}).input("z", {3, 4}).output("l1", {3}).output("lse", {3, 1});
  m.node("Selu", {"x"}, {"selu"}, {}, {}, {{"alpha", 1.5f}, {"gamma", 2.0f}})
      .node("Celu", {"x"}, {"celu"}, {}, {}, {{"alpha", 0.5f}});
  for (const char* op : {"Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "IsNaN", "IsInf"})
    m.node(op, {"x"}, {op});
  m.node("Mod", {"x", "z"}, {"mod"}, {{"fmod", 1}});  // float: fmod 1 (the dividend's sign)
  m.node("ReduceL1", {"x"}, {"l1"}, {{"keepdims", 0}}, {{"axes", {-1}}})
      .node("ReduceLogSumExp", {"x"}, {"lse"}, {}, {{"axes", {1}}});
  for (const char* y : {"selu", "celu", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "mod"})
    m.output(y, {3, 4});
  for (const char* y : {"IsNaN", "IsInf"}) m.output(y, {3, 4}, onnx::TensorProto::BOOL);
  for (int p : {1, 2}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), z = e.tensor("z");
    for (int i = 0; i < 3; ++i) {
      double l1 = 0, mx = -INFINITY, se = 0;
      for (int j = 0; j < 4; ++j) {
        const double a = x(i, j), b = z(i, j);
        EXPECT_NEAR(e.tensor("selu")(i, j), a > 0 ? 2 * a : 2 * 1.5 * (std::exp(a) - 1), 1e-6);
        EXPECT_NEAR(e.tensor("celu")(i, j), a > 0 ? a : 0.5 * (std::exp(a / 0.5) - 1), 1e-6);
        EXPECT_NEAR(e.tensor("Tan")(i, j), std::tan(a), 1e-5);
        EXPECT_NEAR(e.tensor("Asin")(i, j), std::asin(a), 1e-6);
        EXPECT_NEAR(e.tensor("Acos")(i, j), std::acos(a), 1e-6);
        EXPECT_NEAR(e.tensor("Atan")(i, j), std::atan(a), 1e-6);
        EXPECT_NEAR(e.tensor("Sinh")(i, j), std::sinh(a), 1e-6);
        EXPECT_NEAR(e.tensor("Cosh")(i, j), std::cosh(a), 1e-6);
        EXPECT_EQ(e.tensor("IsNaN")(i, j), 0);
        EXPECT_EQ(e.tensor("IsInf")(i, j), 0);
        EXPECT_NEAR(e.tensor("mod")(i, j), std::fmod(a, b), 1e-6);
        l1 += std::abs(a);
        mx = std::max(mx, a);
      }
      for (int j = 0; j < 4; ++j) se += std::exp(x(i, j) - mx);
      EXPECT_NEAR(e.tensor("l1").data[static_cast<std::size_t>(i)], l1, 1e-6);
      EXPECT_NEAR(e.tensor("lse").data[static_cast<std::size_t>(i)], mx + std::log(se), 1e-6);
    }
    // Selu, Celu 5 each; eight unary and the Mod 1 each; ReduceL1 2 per element; LogSumExp 4
    // per element (max, sub, exp, sum) and 2 per row (log, add).
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 12.0 * (5 + 5 + 8 + 1 + 2 + 4) + 3 * 2) << "P=" << p;
  }
}

// Reductions of constants are computed at import (torch.var's element count is the ReduceProd
// of a Shape): ReduceProd, ReduceSum (axes as an input), ReduceMean, ReduceMax, ReduceMin.
TEST(OnnxImport, ReductionsOfConstantsAreFolded) {
  ModelBuilder m(13);
  m.input("x", {2}).output("y", {2});
  m.weight("w", {2, 3}, {1, 2, 3, -4, 5, 6}).ints("ax1", {1}, {1});
  m.node("ReduceProd", {"w"}, {"p"}, {{"keepdims", 0}}, {{"axes", {1}}});    // 6, -120
  m.node("ReduceSum", {"w", "ax1"}, {"s"}, {{"keepdims", 0}})                // 6, 7
      .node("ReduceMean", {"w"}, {"a"}, {{"keepdims", 0}})                   // all: 13 / 6
      .node("ReduceMax", {"w"}, {"mx"}, {{"keepdims", 0}}, {{"axes", {0}}})  // 1, 5, 6
      .node("ReduceMin", {"mx"}, {"mn"}, {{"keepdims", 1}})                  // [1]
      .node("Add", {"p", "s"}, {"ps"})                                       // 6 + 6, -120 + 7
      .node("Add", {"ps", "a"}, {"psa"})
      .node("Add", {"psa", "mn"}, {"k"})
      .node("Add", {"x", "k"}, {"y"});
  const auto e = import_and_eval(m, 2);
  const Dense x = e.tensor("x"), y = e.tensor("y");
  const double want[] = {12 + 13.0 / 6 + 1, -113 + 13.0 / 6 + 1};
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(y.data[i], x.data[i] + want[i], 1e-5) << i;
  EXPECT_EQ(e.res.report.folded_nodes, 8);  // every node but the last
}

// ScatterND of constants, folded at import (Swin's masks are built this way): element updates
// (index length 2) into zeros, then whole rows (index length 1) added with reduction add; and a
// Dropout whose mask output is read (all true in inference).
TEST(OnnxImport, ScatterNDOfConstantsAndDropoutMasksAreFolded) {
  ModelBuilder m(16);
  m.input("x", {3, 4}).output("y", {3, 4});
  m.weight("zeros", {3, 4}, std::vector<float>(12, 0.0f));
  m.ints("ij", {2, 2}, {0, 1, 2, 3}).weight("two", {2}, {5, 7});
  m.ints("rows", {2, 1}, {2, -3}).weight("add", {2, 4}, {1, 1, 1, 1, 2, 2, 2, 2});
  m.node("ScatterND", {"zeros", "ij", "two"}, {"s1"})  // s1[0][1] = 5, s1[2][3] = 7
      .node("ScatterND", {"s1", "rows", "add"}, {"s2"})
      .attr("reduction", "add")
      .node("Dropout", {"x"}, {"d", "mask"})
      .node("Cast", {"mask"}, {"mf"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Add", {"d", "s2"}, {"ds"})
      .node("Add", {"ds", "mf"}, {"y"});
  const auto e = import_and_eval(m, 2);
  const Dense x = e.tensor("x"), y = e.tensor("y");
  // Row 2 gets 1 added, row 0 (index -3) 2; then 5 at (0, 1), 7 at (2, 3); the mask adds 1.
  const double s2[3][4] = {{2, 7, 2, 2}, {0, 0, 0, 0}, {1, 1, 1, 8}};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(y(i, j), x(i, j) + s2[i][j] + 1, 1e-6) << i << j;
  EXPECT_EQ(e.res.report.folded_nodes, 3);  // the ScatterNDs and the Cast of the mask
}

TEST(OnnxImport, UnaryReductionAndViewOpsMatchLoops) {
  // y = sqrt(exp(concat(squeeze(unsqueeze(reduce_sum(identity(cast(sigmoid(x) - tanh(x))))),
  //                     flatten(x))))), x [2, 3, 4]
  ModelBuilder m;
  m.input("x", {2, 3, 4}).output("y", {2, 15}).ints("last", {1}, {-1}).ints("zero", {1}, {0});
  m.weight("half", {}, {0.5f});
  m.node("Sigmoid", {"x"}, {"a"})
      .node("Tanh", {"x"}, {"b"})
      .node("Neg", {"b"}, {"c"})
      .node("Add", {"a", "c"}, {"d"})
      .node("Cast", {"d"}, {"e"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Identity", {"e"}, {"f"})
      .node("ReduceSum", {"f", "last"}, {"g"}, {{"keepdims", 0}})
      .node("Unsqueeze", {"g", "zero"}, {"h"})
      .node("Squeeze", {"h", "zero"}, {"i"})
      .node("Flatten", {"x"}, {"j"}, {{"axis", 1}})
      .node("Concat", {"i", "j"}, {"k"}, {{"axis", 1}})
      .node("Exp", {"k"}, {"l"})
      .node("Pow", {"l", "half"}, {"y"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), y = e.tensor("y");
    std::vector<double> want;
    for (int b = 0; b < 2; ++b) {
      std::vector<double> row;
      for (int i = 0; i < 3; ++i) {
        double s = 0;
        for (int k = 0; k < 4; ++k) {
          const double v = x[{b, i, k}];
          s += 1 / (1 + std::exp(-v)) - std::tanh(v);
        }
        row.push_back(s);
      }
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 4; ++k) row.push_back(x[{b, i, k}]);
      for (double v : row) want.push_back(std::sqrt(std::exp(v)));
    }
    EXPECT_LT(max_abs_diff(y, want), 1e-5) << "P=" << p;
    // sigmoid 4, tanh 1, neg 1, add 1 per element of x (24); reduce_sum 1 per element (24);
    // exp 1 and pow 1 per element of y (30).
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24.0 * (4 + 1 + 1 + 1) + 24 + 30 * 2);
  }
}

TEST(OnnxImport, IdentityOfAWeightLoadsItOnce) {
  // PyTorch exports tied or equal weights as Identity nodes of one initializer.
  const auto w = iota_values(8 * 6, 0.1f, -0.5f);
  ModelBuilder m;
  m.input("x", {4, 8}).output("y", {4, 6}).weight("w", {8, 6}, w);
  m.node("Identity", {"w"}, {"w2"})
      .node("MatMul", {"x", "w"}, {"a"})
      .node("MatMul", {"x", "w2"}, {"b"})
      .node("Sub", {"a", "b"}, {"y"});
  const auto e = import_and_eval(m, 2);
  EXPECT_EQ(e.res.report.parameters, 8 * 6);
  EXPECT_EQ(e.res.graph.constants().size(), 1u);
  const Dense y = e.tensor("y");
  EXPECT_LT(max_abs_diff(y, std::vector<double>(24, 0.0)), 1e-12);
}

TEST(OnnxImport, GeneratedInputsFollowTheDocumentedSeed) {
  ModelBuilder m;
  m.input("x", {3, 5}).output("y", {3, 5}).node("Relu", {"x"}, {"y"});
  ImportOptions o;
  o.devices = 2;
  o.input_seeds["x"] = 7;
  const auto r = onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o);
  const Dense x = test::assemble_tensor(r.graph, test::evaluate_blocks(r.graph, false), "x");
  for (std::int64_t i = 0; i < 3; ++i)
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_EQ(x(i, j), test::doc_input_unit(7, {i, j}));
  o.input_seeds = {{"z", 1}};
  EXPECT_NE(test::error_of([&] {
              onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o);
            }).find("--inputs z: the model has no such graph input"),
            std::string::npos);
}

TEST(OnnxImport, PartitionOverrideSetsBlockCounts) {
  ModelBuilder m;
  m.input("x", {8, 8}).output("y", {8, 8}).weight("w", {8, 8}, iota_values(64, 0.1f, 0));
  m.node("MatMul", {"x", "w"}, {"y"});
  ImportOptions o;
  o.devices = 4;
  o.partition = onnx_import::parse_partition("y=2x4");
  const auto r = onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o);
  int y_blocks = 0;
  for (NodeId v = 0; v < r.graph.num_nodes(); ++v) y_blocks += r.graph.label(v).rfind("y[", 0) == 0;
  EXPECT_EQ(y_blocks, 8);
  o.partition = onnx_import::parse_partition("y=2");
  EXPECT_NE(test::error_of([&] {
              onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o);
            }).find("rank-2"),
            std::string::npos);
}

}  // namespace
}  // namespace doppler
