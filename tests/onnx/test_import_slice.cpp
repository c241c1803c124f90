// Slice with steps other than 1 (strided and reversed slices: x[::2], torch.flip): the elements
// against index lists written out by hand from ONNX's rule (negative starts and ends count from
// the end; clamped to [0, n] going up, to [0, n - 1] and [-1, n - 1] going down), over inputs cut
// in several ways; folded when the input is constant; a step of 0 refused (by ONNX shape
// inference, before the importer's own check).
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "workloads/block_eval.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::ModelBuilder;
using Ints = std::vector<std::int64_t>;

// The elements x[i][j][k] for i, j, k in the given lists, in row-major order.
std::vector<double> pick(const Dense& x, const Ints& is, const Ints& js, const Ints& ks) {
  std::vector<double> v;
  for (auto i : is)
    for (auto j : js)
      for (auto k : ks) v.push_back(x[{i, j, k}]);
  return v;
}

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

struct SliceCase {
  const char* name;
  Ints starts, ends, axes, steps;
  Ints is, js, ks;  // the indices taken along each axis of x [6, 5, 4]
};

const std::vector<SliceCase>& cases() {
  static const std::vector<SliceCase> c = {
      {"odd_rows", {1}, {6}, {0}, {2}, {1, 3, 5}, {0, 1, 2, 3, 4}, {0, 1, 2, 3}},
      // torch.flip(x, [1]) as PyTorch exports it: start -1, end INT64_MIN, step -1.
      {"flip", {-1}, {kMin}, {1}, {-1}, {0, 1, 2, 3, 4, 5}, {4, 3, 2, 1, 0}, {0, 1, 2, 3}},
      {"three_axes", {5, 3, 0}, {0, -5, 10}, {0, 2, 1}, {-2, -3, 2}, {5, 3, 1}, {0, 2, 4}, {3, 0}},
      // A step beyond the extent takes the first element; a step-1 axis beside it.
      {"big_step", {0, 1}, {100, 3}, {2, 1}, {7, 1}, {0, 1, 2, 3, 4, 5}, {1, 2}, {0}},
      // A start past the end going down is clamped to the last element, an end before the
      // start to -1: elements 3 and 1.
      {"clamped", {10}, {-100}, {-1}, {-2}, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4}, {3, 1}},
      {"max_start", {kMax, 1}, {kMin, 5}, {0, 1}, {-4, 3}, {5, 1}, {1, 4}, {0, 1, 2, 3}},
  };
  return c;
}

// Every case of slices of y = -x, y cut by the automatic rule for P devices and by overrides that
// cut the stepped axes at points the steps skip over.
TEST(OnnxImportSlice, SteppedSlicesTakeTheElementsOfOnnxsRule) {
  ModelBuilder m(13);
  m.input("x", {6, 5, 4});
  m.node("Neg", {"x"}, {"y"});
  for (const SliceCase& c : cases()) {
    const std::string n = c.name;
    m.ints(n + "_s", {static_cast<std::int64_t>(c.starts.size())}, c.starts)
        .ints(n + "_e", {static_cast<std::int64_t>(c.ends.size())}, c.ends)
        .ints(n + "_a", {static_cast<std::int64_t>(c.axes.size())}, c.axes)
        .ints(n + "_t", {static_cast<std::int64_t>(c.steps.size())}, c.steps);
    m.node("Slice", {"y", n + "_s", n + "_e", n + "_a", n + "_t"}, {n});
    m.output(n, {static_cast<std::int64_t>(c.is.size()), static_cast<std::int64_t>(c.js.size()),
                 static_cast<std::int64_t>(c.ks.size())});
  }
  const std::vector<std::map<std::string, Ints>> layouts = {
      {}, {{"y", {3, 1, 2}}}, {{"y", {2, 5, 1}}}, {{"y", {6, 1, 4}}}};
  for (int p : {1, 2, 4}) {
    for (std::size_t l = 0; l < layouts.size(); ++l) {
      const auto e = import_and_eval(m, p, layouts[l]);
      const Dense y = e.tensor("y");
      for (const SliceCase& c : cases()) {
        const Dense s = e.tensor(c.name);
        ASSERT_EQ(s.shape, (Ints{static_cast<std::int64_t>(c.is.size()),
                                 static_cast<std::int64_t>(c.js.size()),
                                 static_cast<std::int64_t>(c.ks.size())}))
            << c.name << " P=" << p << " layout " << l;
        EXPECT_EQ(s.data, pick(y, c.is, c.js, c.ks)) << c.name << " P=" << p << " layout " << l;
      }
      EXPECT_DOUBLE_EQ(e.res.report.total_flops, 120.0) << "P=" << p;  // the Neg only
    }
  }
}

// A stepped slice of a constant is computed at import: the reversed every-third element of 0..9
// (9, 6, 3, 0) added to the input.
TEST(OnnxImportSlice, SteppedSlicesOfConstantsAreFolded) {
  ModelBuilder m(13);
  m.input("x", {4}).output("y", {4});
  m.ints("r", {10}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  m.ints("s", {1}, {-1}).ints("e", {1}, {kMin}).ints("a", {1}, {0}).ints("t", {1}, {-3});
  m.node("Slice", {"r", "s", "e", "a", "t"}, {"q"})
      .node("Cast", {"q"}, {"f"}, {{"to", onnx::TensorProto::FLOAT}})
      .node("Add", {"x", "f"}, {"y"});
  const auto e = import_and_eval(m, 2);
  const Dense x = e.tensor("x"), y = e.tensor("y");
  const double want[] = {9, 6, 3, 0};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(y.data[i], x.data[i] + want[i], 1e-6) << i;
  EXPECT_EQ(e.res.report.folded_nodes, 2);  // Slice, Cast
}

TEST(OnnxImportSlice, AStepOfZeroIsRefused) {
  ModelBuilder m(13);
  m.input("x", {6}).output("y", {3});
  m.ints("s", {1}, {0}).ints("e", {1}, {3}).ints("a", {1}, {0}).ints("t", {1}, {0});
  m.node("Slice", {"x", "s", "e", "a", "t"}, {"y"});
  const std::string err = test::import_error(m);
  EXPECT_NE(err.find("bad.onnx: "), std::string::npos) << err;
  EXPECT_NE(err.find("'step' cannot be 0"), std::string::npos) << err;  // shape inference's
}

}  // namespace
}  // namespace doppler
