// ONNX import of ScatterND on computed tensors (slice assignment, constant indices naming a box):
// values against plain loops on 1-4 devices, FLOPs, and one-line errors for indices that do not
// name a box.
#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"
#include "workloads/block_eval.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::import_error;
using test::ModelBuilder;

// y = ScatterND(relu(x), rows, -u): rows 1..3 of every batch (index tuples (n, c), c = 1, -3 = 2
// and 3 in row-major order) replaced by -u; z = ScatterND(relu(x), cells, -v, reduction add):
// elements (n, 4, 2..4) of every batch get -v added (index tuples of length 3).
TEST(OnnxScatter, SliceAssignmentsOfComputedTensorsMatchLoops) {
  ModelBuilder m(16);
  m.input("x", {2, 5, 6}).input("u", {2, 3, 6}).input("v", {2, 1, 3});
  m.output("y", {2, 5, 6}).output("z", {2, 5, 6});
  m.ints("rows", {2, 3, 2}, {0, 1, 0, -3, 0, 3, 1, 1, 1, 2, 1, 3});
  m.ints("cells", {2, 1, 3, 3}, {0, 4, 2, 0, 4, 3, 0, 4, 4, 1, 4, 2, 1, 4, 3, 1, 4, 4});
  m.node("Relu", {"x"}, {"r"})
      .node("Neg", {"u"}, {"nu"})
      .node("Neg", {"v"}, {"nv"})
      .node("ScatterND", {"r", "rows", "nu"}, {"y"})
      .node("ScatterND", {"r", "cells", "nv"}, {"z"})
      .attr("reduction", "add");
  for (const int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), u = e.tensor("u"), v = e.tensor("v");
    Dense y({2, 5, 6}), z({2, 5, 6});
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t c = 0; c < 5; ++c)
        for (std::int64_t w = 0; w < 6; ++w) {
          const double r = std::max(0.0, x[{n, c, w}]);
          y[{n, c, w}] = c >= 1 && c <= 3 ? -u[{n, c - 1, w}] : r;
          z[{n, c, w}] = c == 4 && w >= 2 && w <= 4 ? r - v[{n, 0, w - 2}] : r;
        }
    EXPECT_LT(test::max_abs_diff(e.tensor("y"), y), 1e-6) << p;
    EXPECT_LT(test::max_abs_diff(e.tensor("z"), z), 1e-6) << p;
    // relu 60, the negations 36 and 6, the reduction's additions 6; the replacement moves data
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 60 + 36 + 6 + 6) << p;
  }
}

// Index tuples that skip a position, repeat one or run out of row-major order name no box, and an
// index past the extent is out of range: one-line errors naming the node.
TEST(OnnxScatter, IndicesThatNameNoBoxAreRefused) {
  const std::vector<std::vector<std::int64_t>> bad = {{0, 2}, {1, 1}, {2, 1}, {0, 5}};
  const char* why[] = {"must name a box", "must name a box", "must name a box",
                       "index out of range"};
  for (std::size_t i = 0; i < bad.size(); ++i) {
    ModelBuilder m(16);
    m.input("x", {5, 3}).input("u", {2, 3}).output("y", {5, 3});
    m.ints("at", {2, 1}, bad[i]);
    m.node("Relu", {"x"}, {"r"}).node("ScatterND", {"r", "at", "u"}, {"y"});
    const std::string e = import_error(m);
    EXPECT_NE(e.find(why[i]), std::string::npos) << e;
    EXPECT_NE(e.find("ScatterND_2"), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace doppler
