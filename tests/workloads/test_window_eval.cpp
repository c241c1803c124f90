// The kernels of convolutional models (docs/exec.md): clip, hardsigmoid, hardswish and the
// windowed conv2d, maxpool2d, avgpool2d: the independent evaluator's results on hand-built blocks
// against hand-computed values (their catalogue entries: test_import_kernels.cpp).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "block_eval.hpp"

#include "doppler/graph/graph_builder.hpp"

namespace doppler {
namespace {

using Attrs = std::vector<std::pair<std::string, double>>;

// A graph of exec nodes, one edge per distinct operand.
class Blocks {
public:
  NodeId add(ExecDesc e) {
    std::vector<NodeId> srcs;
    for (const ExecInput& in : e.inputs)
      if (std::find(srcs.begin(), srcs.end(), in.src) == srcs.end()) srcs.push_back(in.src);
    Node n;
    n.exec = std::move(e);
    const NodeId v = b_.add_node(std::move(n));
    for (NodeId u : srcs) b_.add_edge(u, v);
    return v;
  }
  std::vector<test::Dense> evaluate(std::vector<ConstantTensor> constants) {
    Graph g = b_.build();
    g.set_constants(std::move(constants));
    return test::evaluate_blocks(g, false);
  }

private:
  GraphBuilder b_;
};

// Attributes of a window over a 3 x 3 input, starting at `row0`.
Attrs window(std::int64_t pieces, std::int64_t row0, Attrs more) {
  Attrs a = {{"pieces", static_cast<double>(pieces)},
             {"row0", static_cast<double>(row0)},
             {"c0", 0},
             {"in_h", 3},
             {"in_w", 3}};
  a.insert(a.end(), more.begin(), more.end());
  return a;
}

TEST(WindowKernelEval, ConvolutionsAndPoolsGiveTheHandComputedValues) {
  Blocks b;
  // x = 1 .. 9 (3 x 3) as two row blocks: rows 0 .. 1 and row 2.
  const NodeId top = b.add({"load", {1, 1, 2, 3}, {0, 0, 0, 0}, {}, "", {{"tensor", 0}}});
  const NodeId bot = b.add({"load", {1, 1, 1, 3}, {0, 0, 2, 0}, {}, "", {{"tensor", 0}}});
  const NodeId ones = b.add({"load", {1, 1, 3, 3}, {0, 0, 0, 0}, {}, "", {{"tensor", 1}}});
  const NodeId bias = b.add({"load", {1}, {0}, {}, "", {{"tensor", 2}}});
  const std::vector<ExecInput> both = {{top, {}, {}}, {bot, {}, {}}};
  const Attrs pad1 = {{"pad_h", 1}, {"pad_w", 1}, {"out_per_group", 1}};
  // 3x3 box sums, padding 1.
  std::vector<ExecInput> in = both;
  in.push_back({ones, {}, {}});
  const NodeId box = b.add({"conv2d", {1, 1, 3, 3}, {0, 0, 0, 0}, in, "", window(2, 0, pad1)});
  // Output row 1 only: the window rows 0 .. 2 (both pieces).
  const NodeId mid = b.add({"conv2d", {1, 1, 1, 3}, {0, 0, 1, 0}, in, "", window(2, 0, pad1)});
  // Output row 0 only: the window rows 0 .. 1 (the first piece; row 2 is not read).
  const NodeId first = b.add({"conv2d",
                              {1, 1, 1, 3},
                              {0, 0, 0, 0},
                              {{top, {}, {}}, {ones, {}, {}}},
                              "",
                              window(1, 0, pad1)});
  // Stride 2 and the bias 0.5.
  Attrs s2 = pad1;
  s2.insert(s2.end(), {{"stride_h", 2}, {"stride_w", 2}, {"bias", 1}});
  in.push_back({bias, {}, {}});
  const NodeId strided = b.add({"conv2d", {1, 1, 2, 2}, {0, 0, 0, 0}, in, "", window(2, 0, s2)});
  // Pools with ResNet's stem geometry.
  const Attrs stem = {{"kernel_h", 3}, {"kernel_w", 3}, {"stride_h", 2},
                      {"stride_w", 2}, {"pad_h", 1},    {"pad_w", 1}};
  const auto pool = [&](const std::string& op, Attrs more) {
    Attrs a = window(2, 0, stem);
    a.insert(a.end(), more.begin(), more.end());
    return b.add({op, {1, 1, 2, 2}, {0, 0, 0, 0}, both, "", a});
  };
  const NodeId mx = pool("maxpool2d", {});
  const NodeId avg0 = pool("avgpool2d", {});
  const NodeId avg1 = pool("avgpool2d", {{"count_include_pad", 1}});
  const auto v = b.evaluate({{"x", {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}},
                             {"ones", {1, 1, 3, 3}, std::vector<float>(9, 1.0f)},
                             {"b", {1}, {0.5f}}});
  EXPECT_EQ(v[box].data, (std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
  EXPECT_EQ(v[mid].data, (std::vector<double>{27, 45, 33}));
  EXPECT_EQ(v[first].data, (std::vector<double>{12, 21, 16}));
  EXPECT_EQ(v[strided].data, (std::vector<double>{12.5, 16.5, 24.5, 28.5}));
  EXPECT_EQ(v[mx].data, (std::vector<double>{5, 6, 8, 9}));
  EXPECT_EQ(v[avg0].data, (std::vector<double>{3, 4, 6, 7}));
  const std::vector<double> sums = {12, 16, 24, 28};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(v[avg1].data[i], sums[i] / 9);
}

TEST(WindowKernelEval, GroupsReadTheirOwnChannels) {
  Blocks b;
  // x: channel 0 = 1 2 3 4, channel 1 = 10 20 30 40 (2 x 2 each); window channels 0 .. 1.
  const NodeId x = b.add({"load", {1, 2, 2, 2}, {0, 0, 0, 0}, {}, "", {{"tensor", 0}}});
  const NodeId w = b.add({"load", {2, 1, 2, 2}, {0, 0, 0, 0}, {}, "", {{"tensor", 1}}});
  const Attrs a = {{"pieces", 1}, {"row0", 0}, {"c0", 0}, {"in_h", 2}, {"in_w", 2}};
  Attrs dw = a;
  dw.emplace_back("out_per_group", 1);
  // Depthwise: channel 0 with 1 0 / 0 1, channel 1 with 0 1 / 1 0.
  const NodeId depth =
      b.add({"conv2d", {1, 2, 1, 1}, {0, 0, 0, 0}, {{x, {}, {}}, {w, {}, {}}}, "", dw});
  // Output channel 1 alone (o0 = 1): group 1 reads channel 1 with the second weight row.
  const NodeId second = b.add({"conv2d",
                               {1, 1, 1, 1},
                               {0, 1, 0, 0},
                               {{x, {}, {}}, {w, {1, 0, 0, 0}, {1, 1, 2, 2}}},
                               "",
                               dw});
  // The same from a window of channel 1 only (c0 = 1).
  Attrs c1 = dw;
  c1[2].second = 1;
  const NodeId narrow = b.add({"conv2d",
                               {1, 1, 1, 1},
                               {0, 1, 0, 0},
                               {{x, {0, 1, 0, 0}, {1, 1, 2, 2}}, {w, {1, 0, 0, 0}, {1, 1, 2, 2}}},
                               "",
                               c1});
  const auto v = b.evaluate({{"x", {1, 2, 2, 2}, {1, 2, 3, 4, 10, 20, 30, 40}},
                             {"w", {2, 1, 2, 2}, {1, 0, 0, 1, 0, 1, 1, 0}}});
  EXPECT_EQ(v[depth].data, (std::vector<double>{5, 50}));
  EXPECT_EQ(v[second].data, (std::vector<double>{50}));
  EXPECT_EQ(v[narrow].data, (std::vector<double>{50}));
}

TEST(WindowKernelEval, UnaryKernelsGiveTheHandComputedValues) {
  Blocks b;
  const NodeId x = b.add({"load", {6}, {0}, {}, "", {{"tensor", 0}}});  // -4 -1 0 0.5 3 7
  const auto un = [&](const std::string& op, Attrs a) {
    return b.add({op, {6}, {0}, {{x, {}, {}}}, "", std::move(a)});
  };
  const NodeId clip = un("clip", {{"min", -1}, {"max", 2}});
  const NodeId clip_none = un("clip", {});
  const NodeId hsig = un("hardsigmoid", {});
  const NodeId hswish = un("hardswish", {});
  const auto v = b.evaluate({{"x", {6}, {-4, -1, 0, 0.5f, 3, 7}}});
  EXPECT_EQ(v[clip].data, (std::vector<double>{-1, -1, 0, 0.5, 2, 2}));
  EXPECT_EQ(v[clip_none].data, (std::vector<double>{-4, -1, 0, 0.5, 3, 7}));
  const std::vector<double> hs = {0, 0.3, 0.5, 0.6, 1, 1}, hw = {0, -1.0 / 3, 0, 7.0 / 24, 3, 7};
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(v[hsig].data[i], hs[i], 1e-15) << i;
    EXPECT_NEAR(v[hswish].data[i], hw[i], 1e-15) << i;
  }
}

// resize2d of x = 1 .. 9 (3 x 3, rows 0..1 and row 2 as two pieces) to 2 x 2: PyTorch's
// F.interpolate(x, size=2, mode="bilinear") and mode="nearest" give these values.
TEST(WindowKernelEval, ResizesGiveTheHandComputedValues) {
  Blocks b;
  const NodeId top = b.add({"load", {1, 1, 2, 3}, {0, 0, 0, 0}, {}, "", {{"tensor", 0}}});
  const NodeId bot = b.add({"load", {1, 1, 1, 3}, {0, 0, 2, 0}, {}, "", {{"tensor", 0}}});
  const std::vector<ExecInput> both = {{top, {}, {}}, {bot, {}, {}}};
  const Attrs two = {{"out_h", 2}, {"out_w", 2}};
  Attrs lin = two, near = two;
  lin.insert(lin.end(), {{"mode", 1}, {"coord", 3}});
  near.insert(near.end(), {{"coord", 1}, {"nearest", 2}});  // asymmetric, floor
  const NodeId l = b.add({"resize2d", {1, 1, 2, 2}, {0, 0, 0, 0}, both, "", window(2, 0, lin)});
  const NodeId n = b.add({"resize2d", {1, 1, 2, 2}, {0, 0, 0, 0}, both, "", window(2, 0, near)});
  // Output row 1 alone reads input rows 1 .. 2 (linear at 1.75).
  const NodeId r1 = b.add({"resize2d", {1, 1, 1, 2}, {0, 0, 1, 0}, both, "", window(2, 0, lin)});
  std::vector<float> x(9);
  for (int i = 0; i < 9; ++i) x[static_cast<std::size_t>(i)] = static_cast<float>(i + 1);
  const auto out = b.evaluate({{"x", {1, 1, 3, 3}, x}});
  // Linear, pytorch_half_pixel, scale 2/3: positions 0.25 and 1.75 along both axes.
  const auto near_all = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << i;
  };
  near_all(out[l].data, {2.0, 3.5, 6.5, 8.0});
  near_all(out[r1].data, {6.5, 8.0});
  // Nearest, asymmetric, floor: positions 0 and 1.5 -> 1.
  EXPECT_EQ(out[n].data, (std::vector<double>{1, 2, 4, 5}));
}

TEST(WindowKernelEval, AWindowMissingARowIsRefused) {
  Blocks b;
  const NodeId top = b.add({"load", {1, 1, 2, 3}, {0, 0, 0, 0}, {}, "", {{"tensor", 0}}});
  const NodeId ones = b.add({"load", {1, 1, 3, 3}, {0, 0, 0, 0}, {}, "", {{"tensor", 0}}});
  // Output row 1 with padding 1 reads input row 2, which the window (rows 0 .. 1) lacks.
  b.add({"conv2d",
         {1, 1, 1, 3},
         {0, 0, 1, 0},
         {{top, {}, {}}, {ones, {}, {}}},
         "",
         window(1, 0, {{"pad_h", 1}, {"pad_w", 1}, {"out_per_group", 1}})});
  EXPECT_THROW(b.evaluate({{"x", {1, 1, 3, 3}, std::vector<float>(9, 1.0f)}}), std::runtime_error);
}

}  // namespace
}  // namespace doppler
