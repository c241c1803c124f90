// Trilu (torch.triu / torch.tril, opset 14): the elements kept against the definition by loops
// (upper: column - row >= k, lower: column - row <= k, over the last two axes), over inputs cut in
// several ways, 1 FLOP per element; folded when the input is constant; a computed k refused.
#include <cstdint>
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

// x [2, 4, 5] with the elements outside the kept triangle zeroed.
Dense triangle(const Dense& x, std::int64_t k, bool upper) {
  Dense y = x;
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 5; ++j)
        if (upper ? j - i < k : j - i > k) y[{b, i, j}] = 0;
  return y;
}

TEST(OnnxImportTrilu, KeepsTheTriangleOfTheDefinition) {
  ModelBuilder m(14);
  m.input("x", {2, 4, 5});
  m.ints("k1", {}, {1}).ints("km1", {}, {-1}).ints("k9", {}, {9}).ints("km9", {}, {-9});
  m.node("Trilu", {"x"}, {"u0"})                             // upper, k = 0 (no k)
      .node("Trilu", {"x", "k1"}, {"u1"})                    // strictly above the diagonal
      .node("Trilu", {"x", "km1"}, {"l1"}, {{"upper", 0}})   // lower, one below it too
      .node("Trilu", {"x", "k9"}, {"u9"})                    // nothing kept
      .node("Trilu", {"x", "km9"}, {"l9"}, {{"upper", 0}});  // nothing kept
  for (const char* y : {"u0", "u1", "l1", "u9", "l9"}) m.output(y, {2, 4, 5});
  const std::vector<std::map<std::string, Ints>> layouts = {{},
                                                            {{"u1", {1, 2, 3}}, {"l1", {2, 4, 1}}}};
  for (int p : {1, 2, 4})
    for (std::size_t l = 0; l < layouts.size(); ++l) {
      const auto e = import_and_eval(m, p, layouts[l]);
      const Dense x = e.tensor("x");
      const std::string at = "P=" + std::to_string(p) + " layout " + std::to_string(l);
      EXPECT_EQ(e.tensor("u0").data, triangle(x, 0, true).data) << at;
      EXPECT_EQ(e.tensor("u1").data, triangle(x, 1, true).data) << at;
      EXPECT_EQ(e.tensor("l1").data, triangle(x, -1, false).data) << at;
      EXPECT_EQ(e.tensor("u9").data, std::vector<double>(40, 0.0)) << at;
      EXPECT_EQ(e.tensor("l9").data, std::vector<double>(40, 0.0)) << at;
      EXPECT_DOUBLE_EQ(e.res.report.total_flops, 5 * 40.0) << at;  // one mul per element
    }
}

// torch.triu(torch.ones(4, 4), 1) as a constant: folded at import into the causal mask added to
// the input.
TEST(OnnxImportTrilu, TriluOfAConstantIsFolded) {
  ModelBuilder m(14);
  m.input("x", {4, 4}).output("y", {4, 4});
  m.weight("ones", {4, 4}, std::vector<float>(16, 1.0f)).ints("k", {}, {1});
  m.node("Trilu", {"ones", "k"}, {"mask"}).node("Add", {"x", "mask"}, {"y"});
  const auto e = import_and_eval(m, 2);
  const Dense x = e.tensor("x"), y = e.tensor("y");
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      const double got = y[{i, j}], want = x[{i, j}] + (j > i ? 1.0 : 0.0);
      EXPECT_EQ(got, want) << i << ", " << j;
    }
  EXPECT_EQ(e.res.report.folded_nodes, 1);
  EXPECT_DOUBLE_EQ(e.res.report.total_flops, 16);
}

TEST(OnnxImportTrilu, AComputedDiagonalIsRefused) {
  ModelBuilder m(14);
  m.input("x", {4, 4}).input("k", {}, onnx::TensorProto::INT64).output("y", {4, 4});
  m.node("Trilu", {"x", "k"}, {"y"});
  const std::string err = test::import_error(m);
  EXPECT_NE(err.find("bad.onnx: Trilu's k must be a constant (node Trilu_1 (Trilu))"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace doppler
