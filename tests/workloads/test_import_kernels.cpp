// The kernels that serve imported models (docs/exec.md): their catalogue entries (node kind,
// operand count, FLOPs) and the independent evaluator's results on hand-built blocks.
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "block_eval.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler {
namespace {

TEST(ImportKernelCatalogue, KindsArityAndFlopsAreTheDocumentedOnes) {
  struct Want {
    const char* name;
    OpKind kind;
    int arity;
    double flops;
  };
  const Want want[] = {
      {"load", OpKind::input, 0, 0},
      {"sqrt", OpKind::elementwise, 1, 1},
      {"sigmoid", OpKind::elementwise, 1, 4},
      {"tanh", OpKind::elementwise, 1, 1},
      {"erf", OpKind::elementwise, 1, 1},
      {"gelu", OpKind::elementwise, 1, 5},
      {"neg", OpKind::elementwise, 1, 1},
      {"pow", OpKind::elementwise, 1, 1},
      {"identity", OpKind::elementwise, 1, 0},
      {"reshape", OpKind::select, 1, 0},
      {"transpose", OpKind::select, 1, 0},
      // The convolutional models' kernels (tests/workloads/test_window_eval.cpp evaluates them).
      {"clip", OpKind::elementwise, 1, 2},
      {"hardsigmoid", OpKind::elementwise, 1, 4},
      {"hardswish", OpKind::elementwise, 1, 5},
      {"conv2d", OpKind::einsum, -1, 2},
      {"maxpool2d", OpKind::einsum, -1, 1},
      {"avgpool2d", OpKind::einsum, -1, 1},
  };
  for (const Want& w : want) {
    const workloads::KernelInfo* k = workloads::find_kernel(w.name);
    ASSERT_NE(k, nullptr) << w.name;
    EXPECT_EQ(k->kind, w.kind) << w.name;
    EXPECT_EQ(k->arity, w.arity) << w.name;
    EXPECT_EQ(k->flops_per_element, w.flops) << w.name;
  }
  EXPECT_EQ(workloads::find_kernel("where_pos"), nullptr);
}

TEST(ImportKernelCatalogue, IndependentEvaluatorComputesTheDocumentedValues) {
  // c[r][k] = 10 r + k (2 x 3); load the 2 x 2 block at origin (0, 1), transpose it, reshape
  // a strided column of it, square it.
  GraphBuilder b;
  const auto add = [&](ExecDesc e, std::vector<NodeId> srcs) {
    Node n;
    n.exec = std::move(e);
    const NodeId v = b.add_node(std::move(n));
    for (NodeId u : srcs) b.add_edge(u, v);
    return v;
  };
  const NodeId w = add({"load", {2, 2}, {0, 1}, {}, "", {{"tensor", 1}}}, {});
  const NodeId t = add({"transpose", {2, 2}, {0, 0}, {{w, {}, {}}}, "ab->ba", {}}, {w});
  const NodeId r = add({"reshape", {1, 2}, {0, 0}, {{t, {0, 1}, {2, 1}}}, "", {}}, {t});
  const NodeId p = add({"pow", {1, 2}, {0, 0}, {{r, {}, {}}}, "", {{"exponent", 2}}}, {r});
  const NodeId gl = add({"gelu", {1, 2}, {0, 0}, {{r, {}, {}}}, "", {}}, {r});
  Graph g = b.build();
  g.set_constants({{"unused", {1}, {5}}, {"c", {2, 3}, {0, 1, 2, 10, 11, 12}}});
  const auto vals = test::evaluate_blocks(g, false);
  EXPECT_EQ(vals[w].data, (std::vector<double>{1, 2, 11, 12}));
  EXPECT_EQ(vals[t].data, (std::vector<double>{1, 11, 2, 12}));
  EXPECT_EQ(vals[r].data, (std::vector<double>{11, 12}));
  EXPECT_EQ(vals[p].data, (std::vector<double>{121, 144}));
  EXPECT_NEAR(vals[gl].data[0], 11.0, 1e-12);  // gelu(x) ~ x for large x
}

}  // namespace
}  // namespace doppler
