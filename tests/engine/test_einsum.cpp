// Einsum blocks of every layout the GEMM planner distinguishes (row-major or transposed
// operands read in place, gathered operands, C written in place, transposed or scattered,
// batched, operand regions, and the plain-loop fallback) equal a naive loop written here.
#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"

namespace doppler {
namespace {

using Shape = std::vector<std::int64_t>;

struct Operand {
  Operand(Shape b) : block(std::move(b)) {}  // NOLINT(google-explicit-constructor)
  Operand(Shape b, Shape off, Shape sh) : block(std::move(b)), offset(off), shape(sh) {}
  Shape block;                  // shape of the input block
  std::optional<Shape> offset;  // region inside it (with `shape`)
  std::optional<Shape> shape;
};

Shape strides_of(const Shape& s) {
  Shape st(s.size(), 1);
  for (std::size_t d = s.size(); d-- > 1;) st[d - 1] = st[d] * s[d];
  return st;
}

// Inputs 0..k-1, then the einsum node k.
Graph one_einsum(const std::string& spec, const std::vector<Operand>& ops, const Shape& out) {
  GraphBuilder b;
  for (std::size_t j = 0; j < ops.size(); ++j) {
    Node n;
    n.kind = OpKind::input;
    ExecDesc e;
    e.op = "input";
    e.shape = ops[j].block;
    e.origin.assign(e.shape.size(), 0);
    e.attrs = {{"seed", static_cast<double>(j + 5)}};
    n.exec = e;
    b.add_node(n);
  }
  Node n;
  n.kind = OpKind::einsum;
  ExecDesc e;
  e.op = "einsum";
  e.einsum = spec;
  e.shape = out;
  e.origin.assign(out.size(), 0);
  for (std::size_t j = 0; j < ops.size(); ++j)
    e.inputs.push_back(
        {static_cast<NodeId>(j), ops[j].offset.value_or(Shape{}), ops[j].shape.value_or(Shape{})});
  n.exec = e;
  const NodeId v = b.add_node(n);
  for (std::size_t j = 0; j < ops.size(); ++j) b.add_edge(static_cast<NodeId>(j), v);
  return b.build();
}

// out[o] = sum over the other labels of the product of the operands, in double.
std::vector<double> naive(const std::string& spec, const std::vector<Operand>& ops,
                          const std::vector<std::vector<float>>& vals, const Shape& out) {
  const auto arrow = spec.find("->");
  std::vector<std::string> in(1);
  for (char c : spec.substr(0, arrow)) c == ',' ? in.emplace_back() : (in.back() += c, in.back());
  const std::string os = spec.substr(arrow + 2);
  std::map<char, std::int64_t> ext;
  for (std::size_t j = 0; j < in.size(); ++j)
    for (std::size_t d = 0; d < in[j].size(); ++d)
      ext[in[j][d]] = ops[j].shape ? (*ops[j].shape)[d] : ops[j].block[d];
  std::vector<char> labels;
  for (const auto& [c, x] : ext) labels.push_back(c);
  std::vector<double> r(static_cast<std::size_t>(std::max<std::int64_t>(1,
                                                                        [&] {
                                                                          std::int64_t n = 1;
                                                                          for (auto x : out) n *= x;
                                                                          return n;
                                                                        }())),
                        0.0);
  std::map<char, std::int64_t> idx;
  for (char c : labels) idx[c] = 0;
  const Shape ost = strides_of(out);
  while (true) {
    double p = 1;
    for (std::size_t j = 0; j < in.size(); ++j) {
      const Shape st = strides_of(ops[j].block);
      std::int64_t off = 0;
      for (std::size_t d = 0; d < in[j].size(); ++d)
        off += (idx[in[j][d]] + (ops[j].offset ? (*ops[j].offset)[d] : 0)) * st[d];
      p *= vals[j][static_cast<std::size_t>(off)];
    }
    std::int64_t o = 0;
    for (std::size_t d = 0; d < os.size(); ++d) o += idx[os[d]] * ost[d];
    r[static_cast<std::size_t>(o)] += p;
    std::size_t k = labels.size();
    while (k > 0) {
      --k;
      if (++idx[labels[k]] < ext[labels[k]]) break;
      idx[labels[k]] = 0;
      if (k == 0) return r;
    }
    if (labels.empty()) return r;
  }
}

void check(const std::string& spec, const std::vector<Operand>& ops, const Shape& out) {
  SCOPED_TRACE(spec);
  const Graph g = one_einsum(spec, ops, out);
  Engine e(g, {});
  Assignment a;
  a.devices = 1;
  a.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  e.run(a);
  std::vector<std::vector<float>> vals;
  for (std::size_t j = 0; j < ops.size(); ++j) {
    const auto s = e.output(static_cast<NodeId>(j));
    vals.emplace_back(s.begin(), s.end());
  }
  const std::vector<double> want = naive(spec, ops, vals, out);
  const auto got = e.output(static_cast<NodeId>(ops.size()));
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::abs(want[i]))) << "element " << i;
}

TEST(EngineEinsum, MatrixLayouts) {
  check("ij,jk->ik", {Shape{5, 7}, Shape{7, 3}}, {5, 3});
  check("ij,kj->ik", {Shape{5, 7}, Shape{3, 7}}, {5, 3});
  check("ji,jk->ik", {Shape{7, 5}, Shape{7, 3}}, {5, 3});
  check("ji,kj->ik", {Shape{7, 5}, Shape{3, 7}}, {5, 3});
  check("ij,jk->ki", {Shape{5, 7}, Shape{7, 3}}, {3, 5});  // C transposed in place
  check("ij,j->i", {Shape{4, 5}, Shape{5}}, {4});
  check("i,j->ij", {Shape{4}, Shape{3}}, {4, 3});  // outer product (no K)
}

TEST(EngineEinsum, BatchedAndWorkloadSpecs) {
  check("bij,bjk->bik", {Shape{2, 4, 5}, Shape{2, 5, 3}}, {2, 4, 3});
  check("bsd,dhe->bshe", {Shape{1, 6, 8}, Shape{8, 2, 4}}, {1, 6, 2, 4});
  check("bshe,bthe->bhst", {Shape{1, 6, 2, 4}, Shape{1, 5, 2, 4}}, {1, 2, 6, 5});
  check("bhst,bthe->bshe", {Shape{1, 2, 6, 5}, Shape{1, 5, 2, 4}}, {1, 6, 2, 4});
  check("bshe,hed->bsd", {Shape{2, 3, 2, 4}, Shape{2, 4, 5}}, {2, 3, 5});
  check("bsd,bsd->d", {Shape{2, 3, 4}, Shape{2, 3, 4}}, {4});
  check("bsd,bshe->dhe", {Shape{2, 3, 4}, Shape{2, 3, 2, 5}}, {4, 2, 5});
}

TEST(EngineEinsum, GatheredOperandsAndScatteredOutput) {
  check("xij,jk->ixk", {Shape{3, 4, 5}, Shape{5, 2}}, {4, 3, 2});  // A gathered
  check("aij,jb->iba", {Shape{3, 4, 5}, Shape{5, 2}}, {4, 2, 3});  // C scattered
  check("ij,jk->ik", {Operand({8, 9}, {1, 2}, {5, 7}), Operand({10, 4}, {2, 1}, {7, 3})},
        {5, 3});  // regions read in place
  check("bshe,bthe->bhst", {Operand({1, 6, 4, 4}, {0, 0, 1, 0}, {1, 6, 2, 4}), Shape{1, 5, 2, 4}},
        {1, 2, 6, 5});
}

TEST(EngineEinsum, LoopFallback) {
  check("ab,bc,cd->ad", {Shape{2, 3}, Shape{3, 4}, Shape{4, 2}}, {2, 2});  // three operands
  check("ij->j", {Shape{3, 4}}, {4});                                      // one operand
  check("ij,jk->i", {Shape{3, 4}, Shape{4, 2}}, {3});                      // k summed in B only
}

}  // namespace
}  // namespace doppler
