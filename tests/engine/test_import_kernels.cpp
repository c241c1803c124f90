// The kernels for imported models (docs/exec.md): load from Graph constants, triangular fills, the
// unary kernels sqrt .. identity and leaky_relu .. log, reshape, transpose, stride, gather and
// the fused recurrent cells. Small hand-built graphs run by the engine are checked against
// hand-computed values and against the independent evaluator (block_eval.cpp); bad descriptions
// are refused when the engine compiles the graph, naming the node.
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/graph_json.hpp"
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
    for (const ExecInput& in : e.inputs) srcs.push_back(in.src);
    n.exec = std::move(e);
    const NodeId v = b_.add_node(std::move(n));
    for (NodeId u : srcs) b_.add_edge(u, v);
    return v;
  }
  NodeId load(const std::string& name, int tensor, Shape shape, Shape origin) {
    return add(name, {"load", std::move(shape), std::move(origin), {}, "", {{"tensor", tensor}}});
  }
  NodeId unary(const std::string& op, NodeId x, Shape shape, double exponent = -99) {
    ExecDesc e{op, shape, Shape(shape.size(), 0), {{x, {}, {}}}, "", {}};
    if (exponent != -99) e.attrs.emplace_back("exponent", exponent);
    return add(op + "(" + std::to_string(x) + ")", std::move(e));
  }
  Graph build(std::vector<ConstantTensor> constants) {
    Graph g = b_.build();
    g.set_constants(std::move(constants));
    return g;
  }

private:
  GraphBuilder b_;
};

// Outputs of every node of g run on one device; also checks them against block_eval.
std::vector<std::vector<float>> run(const Graph& g) {
  Engine e(g, {});
  EXPECT_EQ(e.kernel_mode(), KernelMode::real);
  e.run(test::single_device(g, 1));
  const auto out = test::all_outputs(e);
  const auto want = test::evaluate_blocks(g, true);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto& w = want[static_cast<std::size_t>(v)];
    const auto& o = out[static_cast<std::size_t>(v)];
    EXPECT_EQ(e.output_shape(v), w.shape) << g.label(v);
    EXPECT_EQ(o.size(), w.data.size()) << g.label(v);
    for (std::size_t i = 0; i < o.size() && i < w.data.size(); ++i) {
      if (o[i] == w.data[i] || (std::isnan(o[i]) && std::isnan(w.data[i])))
        continue;  // equal infinities agree, as do NaNs
      EXPECT_NEAR(o[i], w.data[i], 1e-6 * (1 + std::abs(w.data[i])))
          << g.label(v) << " [" << i << "]";
    }
  }
  return out;
}

// Row-major values f(index) of a tensor of `shape`.
template <class F>
std::vector<float> tabulate(const Shape& shape, F f) {
  std::vector<float> v;
  Shape idx(shape.size(), 0);
  std::int64_t n = 1;
  for (auto e : shape) n *= e;
  for (std::int64_t i = 0; i < n; ++i) {
    v.push_back(static_cast<float>(f(idx)));
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
    }
  }
  return v;
}

// w[r][c] = 10 r + c, 3 x 4.
ConstantTensor grid() {
  return {"grid", {3, 4}, tabulate({3, 4}, [](const Shape& i) { return 10 * i[0] + i[1]; })};
}

TEST(ImportKernels, LoadCutsTheConstantAtTheBlockOrigin) {
  Program p;
  const NodeId inner = p.load("inner", 0, {2, 2}, {1, 2});
  const NodeId whole = p.load("whole", 0, {3, 4}, {0, 0});
  const NodeId corner = p.load("corner", 0, {1, 1}, {2, 3});
  const NodeId column = p.load("column", 0, {3, 1}, {0, 1});
  const NodeId scalar = p.load("scalar", 1, {}, {});
  const NodeId vec = p.load("vec", 2, {2}, {1});
  const Graph g = p.build({grid(), {"s", {}, {-2.5f}}, {"v", {3}, {7, 8, 9}}});
  const auto out = run(g);
  EXPECT_EQ(out[inner], (std::vector<float>{12, 13, 22, 23}));
  EXPECT_EQ(out[whole], (std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13, 20, 21, 22, 23}));
  EXPECT_EQ(out[corner], (std::vector<float>{23}));
  EXPECT_EQ(out[column], (std::vector<float>{1, 11, 21}));
  EXPECT_EQ(out[scalar], (std::vector<float>{-2.5f}));
  EXPECT_EQ(out[vec], (std::vector<float>{8, 9}));
}

TEST(ImportKernels, UnaryKernelsMatchHandComputedValues) {
  Program p;
  const NodeId x = p.load("x", 0, {4}, {0});        // 0.25, 1, 2.25, 4
  const NodeId y = p.load("y", 1, {2, 2}, {0, 0});  // -2, -0.5, 0, 1
  const NodeId sq = p.unary("sqrt", x, {4});
  const NodeId sq2 = p.unary("pow", x, {4}, 2);
  const NodeId half = p.unary("pow", x, {4}, 0.5);
  const NodeId pow1 = p.unary("pow", x, {4});  // default exponent 1
  const NodeId neg = p.unary("neg", x, {4});
  const NodeId id = p.unary("identity", y, {2, 2});
  const NodeId sig = p.unary("sigmoid", y, {2, 2});
  const NodeId th = p.unary("tanh", y, {2, 2});
  const NodeId erf = p.unary("erf", y, {2, 2});
  const NodeId gelu = p.unary("gelu", y, {2, 2});
  const NodeId leaky =
      p.add("leaky", {"leaky_relu", {2, 2}, {0, 0}, {{y, {}, {}}}, "", {{"alpha", 0.1}}});
  const NodeId elu = p.unary("elu", y, {2, 2});  // default alpha 1
  const NodeId softplus = p.unary("softplus", y, {2, 2});
  const NodeId abs = p.unary("abs", y, {2, 2});
  const NodeId log = p.unary("log", x, {4});
  const Graph g = p.build({{"x", {4}, {0.25f, 1, 2.25f, 4}}, {"y", {2, 2}, {-2, -0.5f, 0, 1}}});
  const auto out = run(g);
  EXPECT_EQ(out[sq], (std::vector<float>{0.5f, 1, 1.5f, 2}));
  EXPECT_EQ(out[sq2], (std::vector<float>{0.0625f, 1, 5.0625f, 16}));
  EXPECT_EQ(out[half], (std::vector<float>{0.5f, 1, 1.5f, 2}));
  EXPECT_EQ(out[pow1], (std::vector<float>{0.25f, 1, 2.25f, 4}));
  EXPECT_EQ(out[neg], (std::vector<float>{-0.25f, -1, -2.25f, -4}));
  EXPECT_EQ(out[id], (std::vector<float>{-2, -0.5f, 0, 1}));
  // Reference values (to 10 digits) of the functions at -2, -0.5, 0, 1.
  const std::vector<std::pair<NodeId, std::vector<double>>> want = {
      {sig, {0.1192029220, 0.3775406688, 0.5, 0.7310585786}},
      {th, {-0.9640275801, -0.4621171573, 0.0, 0.7615941560}},
      {erf, {-0.9953222650, -0.5204998778, 0.0, 0.8427007929}},
      {gelu, {-0.04550026390, -0.1542687694, 0.0, 0.8413447461}},
      {leaky, {-0.2, -0.05, 0.0, 1.0}},
      {elu, {-0.8646647168, -0.3934693403, 0.0, 1.0}},
      {softplus, {0.1269280110, 0.4740769842, 0.6931471806, 1.3132616875}},
      {abs, {2.0, 0.5, 0.0, 1.0}},
      {log, {-1.3862943611, 0.0, 0.8109302162, 1.3862943611}},
  };
  for (const auto& [v, w] : want)
    for (std::size_t i = 0; i < 4; ++i)
      EXPECT_NEAR(out[v][i], w[i], 1e-6) << g.label(v) << " [" << i << "]";
}

TEST(ImportKernels, ReshapeReadsAStridedRegionInRowMajorOrder) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
  // The region rows 1..2, columns 1..3 of w: 11 12 13 / 21 22 23, not contiguous in w's buffer.
  const NodeId r32 = p.add("r32", {"reshape", {3, 2}, {0, 0}, {{w, {1, 1}, {2, 3}}}, "", {}});
  const NodeId r6 = p.add("r6", {"reshape", {6}, {0}, {{w, {1, 1}, {2, 3}}}, "", {}});
  const NodeId r123 =
      p.add("r123", {"reshape", {1, 2, 3}, {0, 0, 0}, {{w, {1, 1}, {2, 3}}}, "", {}});
  const NodeId col = p.add("col", {"reshape", {3}, {0}, {{w, {0, 2}, {3, 1}}}, "", {}});
  const NodeId all = p.add("all", {"reshape", {2, 2, 3}, {0, 0, 0}, {{w, {}, {}}}, "", {}});
  const NodeId back = p.add("back", {"reshape", {3, 4}, {0, 0}, {{all, {}, {}}}, "", {}});
  const Graph g = p.build({grid()});
  const auto out = run(g);
  const std::vector<float> region = {11, 12, 13, 21, 22, 23};
  EXPECT_EQ(out[r32], region);
  EXPECT_EQ(out[r6], region);
  EXPECT_EQ(out[r123], region);
  EXPECT_EQ(out[col], (std::vector<float>{2, 12, 22}));
  EXPECT_EQ(out[all], out[w]);
  EXPECT_EQ(out[back], out[w]);
  Engine e(g, {});
  EXPECT_EQ(e.output_shape(r32), (Shape{3, 2}));
  EXPECT_EQ(e.output_shape(r123), (Shape{1, 2, 3}));
}

TEST(ImportKernels, TransposePermutesA3DBlock) {
  Program p;
  const Shape xs = {2, 3, 4};  // x[a][b][c] = 100 a + 10 b + c
  const NodeId x = p.load("x", 0, xs, {0, 0, 0});
  const NodeId cab =
      p.add("cab", {"transpose", {4, 2, 3}, {0, 0, 0}, {{x, {}, {}}}, "abc->cab", {}});
  // A region (all a, b in 1..2, c in 1..3) with its first two dimensions swapped.
  const NodeId bac = p.add(
      "bac", {"transpose", {2, 2, 3}, {0, 0, 0}, {{x, {0, 1, 1}, {2, 2, 3}}}, "abc->bac", {}});
  const NodeId same = p.add("same", {"transpose", xs, {0, 0, 0}, {{x, {}, {}}}, "xyz->xyz", {}});
  const NodeId mat = p.add("mat", {"reshape", {6, 4}, {0, 0}, {{x, {}, {}}}, "", {}});
  const NodeId matT = p.add("matT", {"transpose", {4, 6}, {0, 0}, {{mat, {}, {}}}, "ij->ji", {}});
  const Graph g = p.build(
      {{"x", xs, tabulate(xs, [](const Shape& i) { return 100 * i[0] + 10 * i[1] + i[2]; })}});
  const auto out = run(g);
  // cab: out[i][j][k] = x[j][k][i] = 100 j + 10 k + i.
  EXPECT_EQ(out[cab],
            tabulate({4, 2, 3}, [](const Shape& i) { return 100 * i[1] + 10 * i[2] + i[0]; }));
  EXPECT_EQ(std::vector<float>(out[cab].begin(), out[cab].begin() + 8),
            (std::vector<float>{0, 10, 20, 100, 110, 120, 1, 11}));
  EXPECT_EQ(out[cab].back(), 123.0f);
  // bac: out[i][j][k] = region[j][i][k] = x[j][i + 1][k + 1].
  EXPECT_EQ(out[bac], (std::vector<float>{11, 12, 13, 111, 112, 113, 21, 22, 23, 121, 122, 123}));
  EXPECT_EQ(out[same], out[x]);
  EXPECT_EQ(std::vector<float>(out[matT].begin(), out[matT].begin() + 6),
            (std::vector<float>{0, 10, 20, 100, 110, 120}));
}

// stride: every |step|-th element along one axis of a region of the 3 x 4 grid (w[r][c] = 10 r +
// c), from the region's far end when the step is negative.
TEST(ImportKernels, StrideTakesEveryStepthElementOfTheRegion) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
  const auto stride = [&](const char* name, Shape out, Shape off, Shape len, int axis, int step) {
    return p.add(name, {"stride",
                        std::move(out),
                        {0, 0},
                        {{w, std::move(off), std::move(len)}},
                        "",
                        {{"axis", axis}, {"step", step}}});
  };
  const NodeId even = stride("even", {3, 2}, {0, 0}, {3, 3}, 1, 2);     // columns 0 and 2
  const NodeId flip = stride("flip", {2, 4}, {1, 0}, {2, 4}, 1, -1);    // rows 1-2 reversed
  const NodeId down = stride("down", {2, 1}, {0, 1}, {3, 1}, 0, -2);    // rows 2, 0 of column 1
  const NodeId one = stride("one", {3, 1}, {0, 3}, {3, 1}, 1, 5);       // a single column
  const NodeId back3 = stride("back3", {1, 2}, {2, 0}, {1, 4}, 1, -3);  // columns 3, 0 of row 2
  const Graph g = p.build({grid()});
  const auto out = run(g);
  EXPECT_EQ(out[even], (std::vector<float>{0, 2, 10, 12, 20, 22}));
  EXPECT_EQ(out[flip], (std::vector<float>{13, 12, 11, 10, 23, 22, 21, 20}));
  EXPECT_EQ(out[down], (std::vector<float>{21, 1}));
  EXPECT_EQ(out[one], (std::vector<float>{3, 13, 23}));
  EXPECT_EQ(out[back3], (std::vector<float>{23, 20}));
}

// topk: the k first elements of each row in value order (ties by lower index), values or indices,
// largest or smallest, of whole blocks and of a strided region.
TEST(ImportKernels, TopkTakesTheFirstElementsInValueOrder) {
  Program p;
  const NodeId t = p.load("t", 1, {2, 5}, {0, 0});  // rows 3 1 3 -2 1 / 0 0 7 0 -1
  const auto topk = [&](const char* name, Shape out, Shape off, Shape len, bool largest,
                        bool indices) {
    return p.add(name, {"topk",
                        std::move(out),
                        {0, 0},
                        {{t, std::move(off), std::move(len)}},
                        "",
                        {{"largest", largest ? 1 : 0}, {"indices", indices ? 1 : 0}}});
  };
  const NodeId top3 = topk("top3", {2, 3}, {}, {}, true, false);
  const NodeId top3i = topk("top3i", {2, 3}, {}, {}, true, true);
  const NodeId low2 = topk("low2", {2, 2}, {}, {}, false, false);
  const NodeId low2i = topk("low2i", {2, 2}, {}, {}, false, true);
  const NodeId mid = topk("mid", {2, 1}, {0, 1}, {2, 3}, true, true);  // columns 1..3
  const NodeId all = topk("all", {2, 5}, {}, {}, false, true);         // a stable argsort
  const Graph g = p.build({grid(), {"t", {2, 5}, {3, 1, 3, -2, 1, 0, 0, 7, 0, -1}}});
  const auto out = run(g);
  EXPECT_EQ(out[top3], (std::vector<float>{3, 3, 1, 7, 0, 0}));
  EXPECT_EQ(out[top3i], (std::vector<float>{0, 2, 1, 2, 0, 1}));
  EXPECT_EQ(out[low2], (std::vector<float>{-2, 1, -1, 0}));
  EXPECT_EQ(out[low2i], (std::vector<float>{3, 1, 4, 0}));
  EXPECT_EQ(out[mid], (std::vector<float>{1, 1}));
  EXPECT_EQ(out[all], (std::vector<float>{3, 1, 4, 0, 2, 4, 0, 1, 3, 2}));
}

// gather_along: an element of each table row per index (truncated, negative from the end,
// clamped into the row), of whole blocks and of a region (columns 1..3 of both rows).
TEST(ImportKernels, GatherAlongTakesAnElementOfEachRowPerIndex) {
  Program p;
  const NodeId t = p.load("t", 1, {2, 5}, {0, 0});  // rows 3 1 3 -2 1 / 0 0 7 0 -1
  const NodeId i = p.load("i", 2, {2, 3}, {0, 0});  // rows 4 0 -1 / 2 2.7 -5
  const NodeId j = p.load("j", 3, {2, 2}, {0, 0});  // rows 2 9 / -1 0
  const NodeId all =
      p.add("all", {"gather_along", {2, 3}, {0, 0}, {{t, {}, {}}, {i, {}, {}}}, "", {}});
  const NodeId mid =
      p.add("mid", {"gather_along", {2, 2}, {0, 0}, {{t, {0, 1}, {2, 3}}, {j, {}, {}}}, "", {}});
  const NodeId row1 =  // the second row of the table and of the indices, a block at row 1
      p.add("row1",
            {"gather_along", {1, 3}, {1, 0}, {{t, {1, 0}, {1, 5}}, {i, {1, 0}, {1, 3}}}, "", {}});
  const Graph g = p.build({grid(),
                           {"t", {2, 5}, {3, 1, 3, -2, 1, 0, 0, 7, 0, -1}},
                           {"i", {2, 3}, {4, 0, -1, 2, 2.7f, -5}},
                           {"j", {2, 2}, {2, 9, -1, 0}}});
  const auto out = run(g);
  EXPECT_EQ(out[all], (std::vector<float>{1, 3, 1, 7, 7, 0}));
  EXPECT_EQ(out[mid], (std::vector<float>{-2, -2, 0, 0}));  // 9: clamped to the last column
  EXPECT_EQ(out[row1], (std::vector<float>{7, 7, 0}));
}

// fill with causal: value on one side of a diagonal of the block's global (row, column) (Trilu's
// mask): upper from diagonal 0, lower up to diagonal -1 of a block starting at row 1, and the
// default diagonal 1 (column > row) of a block starting at (1, 1).
TEST(ImportKernels, TriangularFillsKeepOneSideOfTheirDiagonal) {
  Program p;
  const NodeId upper = p.add(
      "upper", {"fill", {3, 4}, {0, 0}, {}, "", {{"value", 2}, {"causal", 1}, {"diagonal", 0}}});
  const NodeId lower =
      p.add("lower", {"fill",
                      {3, 4},
                      {1, 0},
                      {},
                      "",
                      {{"value", 1}, {"causal", 1}, {"diagonal", -1}, {"lower", 1}}});
  const NodeId strict =
      p.add("strict", {"fill", {2, 3}, {1, 1}, {}, "", {{"value", 5}, {"causal", 1}}});
  const Graph g = p.build({grid()});
  const auto out = run(g);
  EXPECT_EQ(out[upper], (std::vector<float>{2, 2, 2, 2, 0, 2, 2, 2, 0, 0, 2, 2}));
  EXPECT_EQ(out[lower], (std::vector<float>{1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0}));
  EXPECT_EQ(out[strict], (std::vector<float>{0, 5, 5, 0, 0, 5}));
}

// gather: rows of the 3 x 4 grid (w[r][c] = 10 r + c) at indices given as floats: truncated,
// negative ones from the end, out-of-range ones clamped into the table.
TEST(ImportKernels, GatherCopiesTheRowsTheIndicesName) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
  const NodeId ids = p.load("ids", 1, {2, 3}, {0, 0});  // 2, 0, 1.9, -1, -3, 7
  const NodeId rows =
      p.add("rows", {"gather", {2, 3, 4}, {0, 0, 0}, {{w, {}, {}}, {ids, {}, {}}}, "", {}});
  // A region of the table (columns 1..2) and of the indices (its second row): out 1 x 3 x 2.
  const NodeId part =
      p.add("part",
            {"gather", {1, 3, 2}, {0, 0, 0}, {{w, {0, 1}, {3, 2}}, {ids, {1, 0}, {1, 3}}}, "", {}});
  const NodeId flat = p.load("flat", 2, {2}, {0});  // a vector table: scalar rows
  const NodeId picks =
      p.add("picks", {"gather", {2, 3}, {0, 0}, {{flat, {}, {}}, {ids, {}, {}}}, "", {}});
  const Graph g = p.build({grid(), {"ids", {2, 3}, {2, 0, 1.9f, -1, -3, 7}}, {"f", {2}, {5, 6}}});
  const auto out = run(g);
  EXPECT_EQ(out[rows], (std::vector<float>{20, 21, 22, 23, 0, 1, 2, 3, 10, 11, 12, 13,
                                           20, 21, 22, 23, 0, 1, 2, 3, 20, 21, 22, 23}));
  EXPECT_EQ(out[part], (std::vector<float>{21, 22, 1, 2, 21, 22}));
  // Rows of a 2-row table: 2 -> 1 (clamped), 0, 1.9 -> 1, -1 -> 1, -3 -> -1 -> 0, 7 -> 1.
  EXPECT_EQ(out[picks], (std::vector<float>{6, 5, 6, 6, 5, 6}));
}

// Comparisons and connectives give 0 or 1 (nonzero is true), with broadcasting; where picks
// its branch elementwise, never mixing them (an infinite branch where not picked leaves no NaN).
TEST(ImportKernels, ComparisonsAndWhereMatchHandComputedValues) {
  Program p;
  const NodeId a = p.load("a", 0, {2, 3}, {0, 0});  // [[-1, 0, 2], [3, -inf, 0.5]]
  const NodeId b = p.load("b", 1, {3}, {0});        // [0, 0, 2]: broadcast over rows
  const NodeId s = p.load("s", 2, {}, {});          // the scalar -inf
  const auto two = [&](const std::string& op) {
    return p.add(op, {op, {2, 3}, {0, 0}, {{a, {}, {}}, {b, {}, {}}}, "", {}});
  };
  const NodeId lt = two("less"), gt = two("greater"), eq = two("equal");
  const NodeId le = two("less_equal"), ge = two("greater_equal");
  const NodeId both = two("and"), either = two("or"), one = two("xor");
  const NodeId no = p.add("not", {"not", {2, 3}, {0, 0}, {{a, {}, {}}}, "", {}});
  // where(a < b, -inf, a): a where a >= b, -inf elsewhere.
  const NodeId w =
      p.add("where", {"where", {2, 3}, {0, 0}, {{lt, {}, {}}, {s, {}, {}}, {a, {}, {}}}, "", {}});
  const float inf = INFINITY;
  const Graph g =
      p.build({{"a", {2, 3}, {-1, 0, 2, 3, -inf, 0.5f}}, {"b", {3}, {0, 0, 2}}, {"s", {}, {-inf}}});
  const auto out = run(g);
  EXPECT_EQ(out[lt], (std::vector<float>{1, 0, 0, 0, 1, 1}));
  EXPECT_EQ(out[gt], (std::vector<float>{0, 0, 0, 1, 0, 0}));
  EXPECT_EQ(out[eq], (std::vector<float>{0, 1, 1, 0, 0, 0}));
  EXPECT_EQ(out[le], (std::vector<float>{1, 1, 1, 0, 1, 1}));
  EXPECT_EQ(out[ge], (std::vector<float>{0, 1, 1, 1, 0, 0}));
  EXPECT_EQ(out[both], (std::vector<float>{0, 0, 1, 0, 0, 1}));
  EXPECT_EQ(out[either], (std::vector<float>{1, 0, 1, 1, 1, 1}));
  EXPECT_EQ(out[one], (std::vector<float>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(out[no], (std::vector<float>{0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(out[w], (std::vector<float>{-inf, 0, 2, 3, -inf, -inf}));
}

// The rounding, sign and trigonometric kernels and the broadcast maximum, minimum, power and
// prelu, at hand-picked values (halves: round goes to the even neighbour; NaN wins max and min).
TEST(ImportKernels, RoundingTrigAndExtremaMatchHandComputedValues) {
  Program p;
  const NodeId h = p.load("h", 0, {2, 3}, {0, 0});  // [[-2.5, -0.5, 0], [1.5, 2.5, 0.75]]
  const NodeId b = p.load("b", 1, {3}, {0});        // [0, nan, 2]: broadcast over rows
  const auto one = [&](const std::string& op) {
    return p.add(op, {op, {2, 3}, {0, 0}, {{h, {}, {}}}, "", {}});
  };
  const auto two = [&](const std::string& op) {
    return p.add(op, {op, {2, 3}, {0, 0}, {{h, {}, {}}, {b, {}, {}}}, "", {}});
  };
  const NodeId rnd = one("round"), flo = one("floor"), cei = one("ceil"), sgn = one("sign");
  const NodeId rec = one("reciprocal"), sin = one("sin"), cos = one("cos");
  const NodeId mx = two("maximum"), mn = two("minimum"), pw = two("power"), pr = two("prelu");
  const float nan = NAN;
  const Graph g =
      p.build({{"h", {2, 3}, {-2.5f, -0.5f, 0, 1.5f, 2.5f, 0.75f}}, {"b", {3}, {0, nan, 2}}});
  const auto out = run(g);
  EXPECT_EQ(out[rnd], (std::vector<float>{-2, -0.0f, 0, 2, 2, 1}));
  EXPECT_EQ(out[flo], (std::vector<float>{-3, -1, 0, 1, 2, 0}));
  EXPECT_EQ(out[cei], (std::vector<float>{-2, -0.0f, 0, 2, 3, 1}));
  EXPECT_EQ(out[sgn], (std::vector<float>{-1, -1, 0, 1, 1, 1}));
  EXPECT_EQ(out[rec], (std::vector<float>{-0.4f, -2, INFINITY, 1 / 1.5f, 0.4f, 1 / 0.75f}));
  const double hv[] = {-2.5, -0.5, 0, 1.5, 2.5, 0.75};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(out[sin][i], std::sin(hv[i]), 1e-7) << i;
    EXPECT_NEAR(out[cos][i], std::cos(hv[i]), 1e-7) << i;
  }
  // Columns: b = 0, NaN, 2.
  const auto same = [](const std::vector<float>& got, const std::vector<float>& want) {
    for (std::size_t i = 0; i < want.size(); ++i)
      if (!(got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i])))) return false;
    return got.size() == want.size();
  };
  EXPECT_TRUE(same(out[mx], {0, nan, 2, 1.5f, nan, 2}));
  EXPECT_TRUE(same(out[mn], {-2.5f, nan, 0, 0, nan, 0.75f}));
  EXPECT_TRUE(same(out[pw], {1, nan, 0, 1, nan, 0.5625f}));
  EXPECT_TRUE(same(out[pr], {-0.0f, nan, 0, 1.5f, 2.5f, 0.75f}));
}

// Inverse and hyperbolic trigonometry, selu and celu (their attributes), isnan and isinf (either
// sign), mod with the divisor's sign and fmod with the dividend's.
TEST(ImportKernels, TrigSeluCeluTestsAndModuloMatchHandComputedValues) {
  Program p;
  const NodeId h = p.load("h", 0, {4}, {0});  // [-0.5, 0.25, nan, -inf]
  const NodeId d = p.load("d", 1, {4}, {0});  // [-7, 7, -7, 7.5]
  const NodeId q = p.load("q", 2, {4}, {0});  // [3, -3, -3, 2]
  const auto one = [&](const std::string& op, std::vector<std::pair<std::string, double>> a) {
    return p.add(op, {op, {4}, {0}, {{h, {}, {}}}, "", std::move(a)});
  };
  const NodeId tan = one("tan", {}), asin = one("asin", {}), acos = one("acos", {});
  const NodeId atan = one("atan", {}), sinh = one("sinh", {}), cosh = one("cosh", {});
  const NodeId selu = one("selu", {{"alpha", 2}, {"gamma", 3}});
  const NodeId celu = one("celu", {{"alpha", 0.5}});
  const NodeId isnan = one("isnan", {});
  const NodeId neginf = one("isinf", {{"positive", 0}, {"negative", 1}});
  const NodeId posinf = one("isinf", {{"positive", 1}, {"negative", 0}});
  const NodeId mod = p.add("mod", {"mod", {4}, {0}, {{d, {}, {}}, {q, {}, {}}}, "", {}});
  const NodeId fmod = p.add("fmod", {"fmod", {4}, {0}, {{d, {}, {}}, {q, {}, {}}}, "", {}});
  const float nan = NAN, inf = INFINITY;
  const Graph g = p.build({{"h", {4}, {-0.5f, 0.25f, nan, -inf}},
                           {"d", {4}, {-7, 7, -7, 7.5f}},
                           {"q", {4}, {3, -3, -3, 2}}});
  const auto out = run(g);
  // Reference values (to 10 digits) at -0.5 and 0.25.
  const std::vector<std::pair<NodeId, std::vector<double>>> want = {
      {tan, {-0.5463024898, 0.2553419212}},  {asin, {-0.5235987756, 0.2526802551}},
      {acos, {2.0943951024, 1.3181160717}},  {atan, {-0.4636476090, 0.2449786631}},
      {sinh, {-0.5210953055, 0.2526123168}}, {cosh, {1.1276259652, 1.0314130998}},
      {selu, {-2.3608160417, 0.75}},         {celu, {-0.3160602794, 0.25}},
  };
  for (const auto& [v, w] : want)
    for (std::size_t i = 0; i < 2; ++i)
      EXPECT_NEAR(out[v][i], w[i], 1e-6) << g.label(v) << " [" << i << "]";
  for (NodeId v : {tan, asin, acos, atan, sinh, cosh, selu, celu})
    EXPECT_TRUE(std::isnan(out[v][2])) << g.label(v);  // NaN in, NaN out
  EXPECT_EQ(out[isnan], (std::vector<float>{0, 0, 1, 0}));
  EXPECT_EQ(out[neginf], (std::vector<float>{0, 0, 0, 1}));
  EXPECT_EQ(out[posinf], (std::vector<float>{0, 0, 0, 0}));
  EXPECT_EQ(out[mod], (std::vector<float>{2, -2, -1, 1.5f}));
  EXPECT_EQ(out[fmod], (std::vector<float>{-1, 1, -1, 1.5f}));
}

// cumsum: running sums of each row, inclusive or exclusive, from either end; and of a region of
// a block (a strided operand: the grid's columns 1 .. 2).
TEST(ImportKernels, CumsumRunsAlongTheLastAxis) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});  // w[r][c] = 10 r + c
  const auto scan = [&](const std::string& name, double exclusive, double reverse) {
    return p.add(name, {"cumsum",
                        {3, 4},
                        {0, 0},
                        {{w, {}, {}}},
                        "",
                        {{"exclusive", exclusive}, {"reverse", reverse}}});
  };
  const NodeId inc = scan("inc", 0, 0), exc = scan("exc", 1, 0), rev = scan("rev", 0, 1);
  const NodeId both = scan("both", 1, 1);
  const NodeId part = p.add("part", {"cumsum", {3, 2}, {0, 0}, {{w, {0, 1}, {3, 2}}}, "", {}});
  const Graph g = p.build({grid()});
  const auto out = run(g);
  EXPECT_EQ(out[inc], (std::vector<float>{0, 1, 3, 6, 10, 21, 33, 46, 20, 41, 63, 86}));
  EXPECT_EQ(out[exc], (std::vector<float>{0, 0, 1, 3, 0, 10, 21, 33, 0, 20, 41, 63}));
  EXPECT_EQ(out[rev], (std::vector<float>{6, 6, 5, 3, 46, 36, 25, 13, 86, 66, 45, 23}));
  EXPECT_EQ(out[both], (std::vector<float>{6, 5, 3, 0, 36, 25, 13, 0, 66, 45, 23, 0}));
  EXPECT_EQ(out[part], (std::vector<float>{1, 3, 11, 23, 21, 43}));
}

// The fused recurrent steps on two rows of one unit, from values whose activations are exact
// or spelled out: lstm_cell and lstm_hidden of gates (i o f g) and c, gru_cell of x, h R^T, h
// with and without Rb_n (one row for both rows).
TEST(ImportKernels, RecurrentCellsFollowTheirEquations) {
  Program p;
  const float l3 = std::log(3.0f);  // sigmoid(l3) = 3 / 4, sigmoid(-l3) = 1 / 4
  const NodeId gates = p.load("gates", 0, {2, 4}, {0, 0});
  const NodeId c = p.load("c", 1, {2, 1}, {0, 0});
  const NodeId x = p.load("x", 2, {2, 3}, {0, 0});
  const NodeId hr = p.load("hr", 3, {2, 3}, {0, 0});
  const NodeId rb = p.load("rb", 4, {1, 1}, {0, 0});
  const NodeId c2 =
      p.add("c2", {"lstm_cell", {2, 1}, {0, 0}, {{gates, {}, {}}, {c, {}, {}}}, "", {}});
  const NodeId h2 =
      p.add("h2", {"lstm_hidden", {2, 1}, {0, 0}, {{gates, {}, {}}, {c2, {}, {}}}, "", {}});
  const NodeId g3 =
      p.add("g3", {"gru_cell", {2, 1}, {0, 0}, {{x, {}, {}}, {hr, {}, {}}, {c, {}, {}}}, "", {}});
  const NodeId g4 = p.add(
      "g4",
      {"gru_cell", {2, 1}, {0, 0}, {{x, {}, {}}, {hr, {}, {}}, {c, {}, {}}, {rb, {}, {}}}, "", {}});
  const Graph g = p.build({{"gates", {2, 4}, {0, 0, 0, 0, l3, l3, -l3, 0.5f}},
                           {"c", {2, 1}, {2, -4}},
                           {"x", {2, 3}, {0, l3, 0.25f, l3, 0, -1}},
                           {"hr", {2, 3}, {0, 0, 0.5f, 0, -l3, 2}},
                           {"rb", {1, 1}, {1}}});
  const auto out = run(g);
  // c' = s(f) c + s(i) tanh(g): row 0 1/2 * 2 + 0; row 1 1/4 * -4 + 3/4 tanh(1/2)
  const double c_row1 = -1 + 0.75 * std::tanh(0.5);
  EXPECT_NEAR(out[c2][0], 1, 1e-6);
  EXPECT_NEAR(out[c2][1], c_row1, 1e-6);
  // h' = s(o) tanh(c')
  EXPECT_NEAR(out[h2][0], 0.5 * std::tanh(1.0), 1e-6);
  EXPECT_NEAR(out[h2][1], 0.75 * std::tanh(c_row1), 1e-6);
  // z = s(x_z + hr_z), r = s(x_r + hr_r), n = tanh(x_n + r (hr_n + rb)), h' = (1 - z) n + z h:
  // row 0: z = 1/2, r = 3/4; row 1: z = 3/4, r = 1/4
  const auto gru = [](double z, double r, double xn, double hn, double h) {
    const double n = std::tanh(xn + r * hn);
    return (1 - z) * n + z * h;
  };
  EXPECT_NEAR(out[g3][0], gru(0.5, 0.75, 0.25, 0.5, 2), 1e-6);
  EXPECT_NEAR(out[g3][1], gru(0.75, 0.25, -1, 2, -4), 1e-6);
  EXPECT_NEAR(out[g4][0], gru(0.5, 0.75, 0.25, 1.5, 2), 1e-6);
  EXPECT_NEAR(out[g4][1], gru(0.75, 0.25, -1, 3, -4), 1e-6);
}

// expand: a row repeated down, a column repeated across, a region of a block broadcast over a
// new leading dimension.
TEST(ImportKernels, ExpandRepeatsTheOperandOverTheOutput) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});  // w[r][c] = 10 r + c
  const NodeId row = p.add("row", {"expand", {2, 4}, {0, 0}, {{w, {1, 0}, {1, 4}}}, "", {}});
  const NodeId col = p.add("col", {"expand", {2, 3}, {0, 0}, {{w, {1, 2}, {2, 1}}}, "", {}});
  const NodeId lead =
      p.add("lead", {"expand", {2, 2, 2}, {0, 0, 0}, {{w, {0, 1}, {2, 2}}}, "", {}});
  const Graph g = p.build({grid()});
  const auto out = run(g);
  EXPECT_EQ(out[row], (std::vector<float>{10, 11, 12, 13, 10, 11, 12, 13}));
  EXPECT_EQ(out[col], (std::vector<float>{12, 12, 12, 22, 22, 22}));
  EXPECT_EQ(out[lead], (std::vector<float>{1, 2, 11, 12, 1, 2, 11, 12}));
}

// reduce_argmax: the index of each row's largest element, the first of ties (the last with
// attribute last = 1); -inf and a NaN never win over a finite value.
TEST(ImportKernels, ArgmaxNamesTheLargestElement) {
  Program p;
  const NodeId a =
      p.load("a", 0, {3, 4}, {0, 0});  // rows: [1, 5, 5, 2], [-inf, -3, nan, -3], [0, 0, 0, 0]
  const NodeId first = p.add("first", {"reduce_argmax", {3, 1}, {0, 0}, {{a, {}, {}}}, "", {}});
  const NodeId last =
      p.add("last", {"reduce_argmax", {3, 1}, {0, 0}, {{a, {}, {}}}, "", {{"last", 1}}});
  const NodeId cols =
      p.add("cols", {"reduce_argmax", {1, 1}, {0, 0}, {{a, {0, 1}, {1, 2}}}, "", {}});
  const float inf = INFINITY, nan = NAN;
  const Graph g = p.build({{"a", {3, 4}, {1, 5, 5, 2, -inf, -3, nan, -3, 0, 0, 0, 0}}});
  Engine e(g, {});
  e.run(test::single_device(g, 1));
  const auto out = test::all_outputs(e);
  EXPECT_EQ(out[first], (std::vector<float>{1, 1, 0}));
  EXPECT_EQ(out[last], (std::vector<float>{2, 3, 3}));
  EXPECT_EQ(out[cols], (std::vector<float>{0}));  // [5, 5]: the first
}

TEST(ImportKernels, AnyAssignmentReproducesTheSingleDeviceRun) {
  Program p;
  const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
  const NodeId t = p.add("t", {"transpose", {4, 3}, {0, 0}, {{w, {}, {}}}, "ab->ba", {}});
  const NodeId s = p.unary("sigmoid", t, {4, 3});
  const NodeId r = p.add("r", {"reshape", {2, 6}, {0, 0}, {{s, {}, {}}}, "", {}});
  p.unary("gelu", r, {2, 6});
  const Graph g = p.build({grid()});
  const auto want = run(g);
  EngineOptions o;
  o.devices = 3;
  Engine e(g, o);
  std::mt19937_64 rng(3);
  for (int rep = 0; rep < 6; ++rep) {
    e.run(test::random_assignment(g, 3, rng));
    EXPECT_EQ(test::all_outputs(e), want);
  }
}

TEST(ImportKernels, LoadSurvivesTheJsonRoundTrip) {
  Program p;
  const NodeId w = p.load("w", 0, {2, 2}, {1, 1});
  p.unary("neg", w, {2, 2});
  const Graph g = p.build({grid()});
  const Graph g2 = parse_graph_json(format_graph_json(g), "g.json");
  EXPECT_EQ(run(g2), run(g));
  EXPECT_EQ(run(g2)[1], (std::vector<float>{-11, -12, -21, -22}));
}

TEST(ImportKernels, BadDescriptionsAreRefusedNamingTheNode) {
  const auto error = [](auto build) {
    Program p;
    build(p);
    return test::compile_error(p.build({grid()}));
  };
  EXPECT_EQ(error([](Program& p) {
              p.load("w", 1, {2, 2}, {0, 0});
            }),
            "node 0 (w): load: attribute 'tensor' must index the graph's 1 constant tensor(s)");
  EXPECT_EQ(error([](Program& p) {
              p.add("w", {"load", {2}, {0}, {}, "", {}});  // no tensor attribute
            }),
            "node 0 (w): load: attribute 'tensor' must index the graph's 1 constant tensor(s)");
  EXPECT_EQ(error([](Program& p) { p.load("w", 0, {2}, {0}); }),
            "node 0 (w): load: constant 0 ('grid') has rank 2, the block 1");
  EXPECT_EQ(error([](Program& p) {
              p.load("w", 0, {2, 2}, {1, 3});
            }),
            "node 0 (w): load: constant 0 ('grid'): block outside the constant along dimension 1");
  EXPECT_EQ(error([](Program& p) {
              p.load("w", 0, {4, 1}, {0, 0});
            }),
            "node 0 (w): load: constant 0 ('grid'): block outside the constant along dimension 0");
  EXPECT_EQ(error([](Program& p) {
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("r", {"reshape", {5}, {0}, {{w, {}, {}}}, "", {}});
            }),
            "node 1 (r): reshape: the operand's element count differs from the output's");
  for (const char* spec : {"ab->aa", "ab->ac", "aa->aa", "ab", "abc->ab", "AB->BA"}) {
    const std::string e = error([&](Program& p) {
      const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
      p.add("t", {"transpose", {4, 3}, {0, 0}, {{w, {}, {}}}, spec, {}});
    });
    EXPECT_EQ(e.rfind("node 1 (t): transpose", 0), 0u) << spec << ": " << e;
  }
  EXPECT_EQ(error([](Program& p) {
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("t", {"transpose", {3, 4}, {0, 0}, {{w, {}, {}}}, "ab->ba", {}});
            }),
            "node 1 (t): transpose: output extent 0 differs from the operand's");
  EXPECT_EQ(error([](Program& p) {
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              const NodeId i = p.load("i", 0, {1, 2}, {0, 0});
              p.add("g", {"gather", {1, 2, 3}, {0, 0, 0}, {{w, {}, {}}, {i, {}, {}}}, "", {}});
            }),
            "node 2 (g): gather: the output shape is not the indices' followed by a table row's");
  EXPECT_EQ(error([](Program& p) {
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("g", {"gru_cell", {3, 1}, {0, 0}, {{w, {}, {}}, {w, {}, {}}}, "", {}});
            }),
            "node 1 (g): gru_cell: wrong number of operands");
  EXPECT_EQ(error([](Program& p) {
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("c", {"lstm_cell", {3, 2}, {0, 0}, {{w, {}, {}}, {w, {}, {}}}, "", {}});
            }),
            "node 1 (c): lstm_cell: operand 0 does not hold 8 units per output row");
  const std::string stride_attrs =
      "stride: attribute axis must name a dimension and step be a nonzero integer";
  for (const Attrs& a : {Attrs{{"axis", 1}}, Attrs{{"axis", 2}, {"step", 1}},
                         Attrs{{"axis", 0}, {"step", 0.5}}, Attrs{{"axis", 0.5}, {"step", 1}}})
    EXPECT_EQ(error([&](Program& p) {
                const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
                p.add("s", {"stride", {3, 4}, {0, 0}, {{w, {}, {}}}, "", a});
              }),
              "node 1 (s): " + stride_attrs);
  EXPECT_EQ(error([](Program& p) {  // 5 of 4 columns
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("k", {"topk", {3, 5}, {0, 0}, {{w, {}, {}}}, "", {}});
            }),
            "node 1 (k): topk: the output is not the operand's shape with a last extent of 1 to "
            "its own");
  EXPECT_EQ(error([](Program& p) {  // indices of 3 rows for a table of 2
              const NodeId w = p.load("w", 0, {2, 4}, {0, 0});
              const NodeId x = p.load("x", 0, {3, 2}, {0, 0});
              p.add("g", {"gather_along", {3, 2}, {0, 0}, {{w, {}, {}}, {x, {}, {}}}, "", {}});
            }),
            "node 2 (g): gather_along: expected a table and indices of its leading extents, the "
            "output's shape");
  EXPECT_EQ(error([](Program& p) {  // step 2 over 4 columns gives 2, not 3
              const NodeId w = p.load("w", 0, {3, 4}, {0, 0});
              p.add("s", {"stride", {3, 3}, {0, 0}, {{w, {}, {}}}, "", {{"axis", 1}, {"step", 2}}});
            }),
            "node 1 (s): stride: the operand's region is not the output's, (out - 1) |step| + 1 "
            "along axis");
}

}  // namespace
}  // namespace doppler
