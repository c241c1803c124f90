// BlockedProgram on its own: cut rules, automatic relayouts (inserted only when needed, and
// shared), first-reader input layouts, partial reductions, broadcasting, select and fill,
// evaluated with the test's own kernels (block_eval.cpp) against direct computations.
#include <cmath>

#include <gtest/gtest.h>

#include "block_eval.hpp"

#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace doppler {
namespace {

using namespace workloads;
using test::Dense;

int count_op(const Graph& g, const std::string& op) {
  int n = 0;
  for (const Node& v : g.nodes()) n += v.exec && v.exec->op == op;
  return n;
}

TEST(EvenCuts, NearlyEqualNestedAndClamped) {
  for (std::int64_t n : {1, 7, 64, 1000, 4097}) {
    for (std::int64_t k : {1, 2, 3, 4, 8, 16}) {
      const Cuts c = even_cuts(n, k);
      ASSERT_EQ(c.front(), 0);
      ASSERT_EQ(c.back(), n);
      EXPECT_EQ(static_cast<std::int64_t>(c.size()) - 1, std::min(n, k));
      std::int64_t lo = n, hi = 0;
      for (std::size_t i = 0; i + 1 < c.size(); ++i) {
        lo = std::min(lo, c[i + 1] - c[i]);
        hi = std::max(hi, c[i + 1] - c[i]);
      }
      EXPECT_LE(hi - lo, 1);
      EXPECT_GE(lo, 1);
      if (k <= n && 2 * k <= n) {
        EXPECT_TRUE(cuts_refine(even_cuts(n, 2 * k), c));  // k | 2k: nested
      }
    }
  }
  EXPECT_FALSE(cuts_refine(even_cuts(12, 3), even_cuts(12, 2)));
}

TEST(BlockedProgram, PartialReductionsAreAggregated) {
  BlockedProgram p(DType::f32);
  const auto& x = p.input("x", {6, 10}, 1, 0, {even_cuts(6, 2), even_cuts(10, 3)});
  p.reduce("mx", "reduce_max", x);
  p.reduce("sm", "reduce_sum", x);
  p.reduce("sq", "reduce_sumsq", x);
  const Graph g = p.build({});
  // 3 reductions x 2 row blocks x (3 partials + 1 aggregation).
  EXPECT_EQ(g.num_nodes(), 6 + 3 * 2 * 4);
  EXPECT_EQ(count_op(g, "max"), 2);
  EXPECT_EQ(count_op(g, "sum"), 4);
  const auto vals = test::evaluate_blocks(g, false);
  const Dense xs = test::assemble_tensor(g, vals, "x");
  const Dense mx = test::assemble_tensor(g, vals, "mx"), sm = test::assemble_tensor(g, vals, "sm"),
              sq = test::assemble_tensor(g, vals, "sq");
  ASSERT_EQ(mx.shape, (std::vector<std::int64_t>{6, 1}));
  for (std::int64_t i = 0; i < 6; ++i) {
    double m = -1e300, s = 0, q = 0;
    for (std::int64_t j = 0; j < 10; ++j) {
      m = std::max(m, xs(i, j));
      s += xs(i, j);
      q += xs(i, j) * xs(i, j);
    }
    EXPECT_DOUBLE_EQ(mx(i, 0), m);
    EXPECT_NEAR(sm(i, 0), s, 1e-12);
    EXPECT_NEAR(sq(i, 0), q, 1e-12);
  }
}

TEST(BlockedProgram, InputsTakeTheirFirstReadersLayout) {
  BlockedProgram p(DType::f32);
  const auto& a = p.input("a", {8, 6});
  const auto& b = p.input("b", {6, 4});
  p.einsum("c", "ij,jk->ik", {&a, &b}, {{'i', even_cuts(8, 4)}, {'j', even_cuts(6, 3)}});
  const Graph g = p.build({});
  EXPECT_EQ(count_op(g, "assemble"), 0);
  EXPECT_EQ(count_op(g, "input"), 4 * 3 + 3);  // a: 4 x 3 blocks, b: 3 x 1
  EXPECT_EQ(count_op(g, "einsum"), 12);
  EXPECT_EQ(count_op(g, "sum"), 4);
}

TEST(BlockedProgram, MismatchedLayoutsGetOneSharedRelayout) {
  BlockedProgram p(DType::f32);
  const auto& x = p.input("x", {9, 8}, 1, 0, {even_cuts(9, 3), even_cuts(8, 1)});
  const auto& w1 = p.input("w1", {8, 5});
  const auto& w2 = p.input("w2", {8, 5});
  // Both products need x in 2 column blocks over all rows: one relayout, used twice.
  const LabelCuts cuts = {{'j', even_cuts(8, 2)}};
  p.einsum("y1", "ij,jk->ik", {&x, &w1}, cuts);
  p.einsum("y2", "ij,jk->ik", {&x, &w2}, cuts);
  // Rows cut in 2 while x has 3 row blocks: x is re-blocked again (2 x 1 blocks).
  const auto& r = p.map("r", "relu", {&x}, {even_cuts(9, 3), even_cuts(8, 1)});
  p.map("s", "add", {&x, &r}, {even_cuts(9, 2), even_cuts(8, 1)});
  const Graph g = p.build({});
  int relayout_x = 0, relayout_r = 0;
  for (const Node& v : g.nodes()) {
    relayout_x += v.name.rfind("relayout:x[", 0) == 0;
    relayout_r += v.name.rfind("relayout:r[", 0) == 0;
  }
  EXPECT_EQ(relayout_x, 1 + 2);  // one block for y1/y2 (shared), two for s
  EXPECT_EQ(relayout_r, 2);
  const auto vals = test::evaluate_blocks(g, false);
  const Dense xs = test::assemble_tensor(g, vals, "x"), w = test::assemble_tensor(g, vals, "w1");
  const Dense y1 = test::assemble_tensor(g, vals, "y1"), s = test::assemble_tensor(g, vals, "s");
  for (std::int64_t i = 0; i < 9; ++i) {
    for (std::int64_t k = 0; k < 5; ++k) {
      double acc = 0;
      for (std::int64_t j = 0; j < 8; ++j) acc += xs(i, j) * w(j, k);
      EXPECT_NEAR(y1(i, k), acc, 1e-12);
    }
    for (std::int64_t j = 0; j < 8; ++j)
      EXPECT_DOUBLE_EQ(s(i, j), xs(i, j) + std::max(xs(i, j), 0.0));
  }
}

TEST(BlockedProgram, BroadcastSelectAndCausalFill) {
  BlockedProgram p(DType::f16);
  const auto& x =
      p.input("x", {2, 5, 4}, 2, 0, {even_cuts(2, 2), even_cuts(5, 2), even_cuts(4, 2)});
  const auto& g1 = p.input("g", {4}, 0.5, 1);
  const auto& col = p.input("c", {2, 5, 1});
  const auto& y = p.map("y", "mul", {&x, &g1}, x.cuts);
  p.map("z", "sub", {&y, &col}, x.cuts);
  p.select("last", y, {0, 4, 2}, {2, 1, 2}, {even_cuts(2, 2), {0, 1}, {0, 2}});
  p.fill("mask", {6, 6}, {even_cuts(6, 2), even_cuts(6, 3)}, {{"value", -7}, {"causal", 1}});
  const Graph g = p.build({});
  const auto vals = test::evaluate_blocks(g, false);
  const Dense xs = test::assemble_tensor(g, vals, "x"), gs = test::assemble_tensor(g, vals, "g"),
              cs = test::assemble_tensor(g, vals, "c"), z = test::assemble_tensor(g, vals, "z"),
              last = test::assemble_tensor(g, vals, "last"),
              mask = test::assemble_tensor(g, vals, "mask");
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t s = 0; s < 5; ++s)
      for (std::int64_t d = 0; d < 4; ++d)
        EXPECT_DOUBLE_EQ((z[{b, s, d}]), (xs[{b, s, d}] * gs[{d}] - cs[{b, s, 0}]));
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t d = 0; d < 2; ++d)
      EXPECT_DOUBLE_EQ((last[{b, 0, d}]), (xs[{b, 4, d + 2}] * gs[{d + 2}]));
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 6; ++j) EXPECT_EQ(mask(i, j), j > i ? -7.0 : 0.0);
  // f16: 2 bytes per element.
  for (const Node& v : g.nodes())
    EXPECT_DOUBLE_EQ(v.out_bytes, 2.0 * static_cast<double>(v.exec->numel()));
}

// An embedding lookup: the table, first blocked by rows (as another reader laid it out), is
// re-blocked with its rows whole (its columns, uncut, already nest in the output's); each output
// block reads its indices and every row of its columns. Values against a direct lookup of the
// assembled tensors.
TEST(BlockedProgram, GatherReadsEveryRowOfItsColumnsAtItsIndices) {
  BlockedProgram p(DType::f32);
  const auto& table = p.input("table", {10, 6}, 1, 0, {even_cuts(10, 2), even_cuts(6, 1)});
  const auto& ids = p.input("ids", {3, 4}, 7, 2);  // [-5, 9): negative ones from the end
  p.map("t2", "scale", {&table}, table.cuts, {{"scale", 2}});
  p.gather("x", table, ids, {even_cuts(3, 3), even_cuts(4, 1), even_cuts(6, 2)});
  const Graph g = p.build({});
  int relayouts = 0, gathers = 0;
  for (const Node& v : g.nodes()) {
    relayouts += v.name.rfind("relayout:table[", 0) == 0;
    if (v.exec && v.exec->op == "gather") {
      ++gathers;
      ASSERT_EQ(v.exec->inputs.size(), 2u);
      EXPECT_EQ(g.node(v.exec->inputs[0].src).name, "relayout:table[0,0]");
      EXPECT_EQ(v.exec->inputs[0].shape, (std::vector<std::int64_t>{10, 3}));  // its columns
      EXPECT_EQ(v.exec->shape, (std::vector<std::int64_t>{1, 4, 3}));
    }
  }
  EXPECT_EQ(relayouts, 1);  // one block: rows whole
  EXPECT_EQ(gathers, 3 * 2);
  const auto vals = test::evaluate_blocks(g, false);
  const Dense ts = test::assemble_tensor(g, vals, "table"),
              is = test::assemble_tensor(g, vals, "ids"), x = test::assemble_tensor(g, vals, "x");
  int negative = 0;
  for (std::int64_t a = 0; a < 3; ++a)
    for (std::int64_t b = 0; b < 4; ++b) {
      auto row = static_cast<std::int64_t>(std::trunc(is(a, b)));
      negative += row < 0;
      if (row < 0) row += 10;
      for (std::int64_t c = 0; c < 6; ++c) EXPECT_EQ((x[{a, b, c}]), ts(row, c)) << a << b << c;
    }
  EXPECT_GT(negative, 0);  // the rule for negative indices was exercised
}

// A part cut coarser than the first part off the concatenation axis (a U-Net's upsampled path
// beside a skip connection cut by rows) is re-blocked to the first's cuts, so that each output
// block reads one block. It was read by the first's block indices, past its own grid.
TEST(BlockedProgram, ConcatRelaysOutPartsCutCoarserOffTheAxis) {
  BlockedProgram p(DType::f32);
  const auto& a = p.input("a", {4, 3}, 1, 0, {even_cuts(4, 2), even_cuts(3, 1)});
  const auto& b = p.input("b", {4, 2}, 1, 0, {even_cuts(4, 1), even_cuts(2, 1)});
  p.map("b2", "scale", {&b}, b.cuts, {{"scale", 2}});  // b keeps its one row block
  const auto& c = p.concat("c", {&a, &b}, 1);
  EXPECT_EQ(c.cuts, (std::vector<Cuts>{{0, 2, 4}, {0, 3, 5}}));
  const Graph g = p.build({});
  EXPECT_EQ(count_op(g, "assemble"), 2);  // b in two row blocks
  const auto vals = test::evaluate_blocks(g, false);
  const Dense as = test::assemble_tensor(g, vals, "a"), bs = test::assemble_tensor(g, vals, "b"),
              cs = test::assemble_tensor(g, vals, "c");
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_EQ(cs(i, j), j < 3 ? as(i, j) : bs(i, j - 3));
}

TEST(BlockedProgram, RefusesAbsurdBlockCounts) {
  BlockedProgram p(DType::f32);
  const auto& a = p.input("a", {100000, 100000});
  EXPECT_THROW(p.map("b", "relu", {&a}, {even_cuts(100000, 5000), even_cuts(100000, 5000)}),
               InputError);
}

}  // namespace
}  // namespace doppler
