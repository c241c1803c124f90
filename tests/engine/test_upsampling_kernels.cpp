// The kernels that upsample (docs/exec.md): resize2d, nearest and linear resizing under ONNX's
// coordinate transformations and nearest roundings, and conv_transpose2d, the transposed
// convolution: against hand-computed values (PyTorch's F.interpolate and ConvTranspose2d give
// the same numbers), against the independent evaluator (block_eval.cpp) on blocked tensors
// whose windows come in several pieces, and their refusals of bad descriptions.
#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine_support.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/engine/engine.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace doppler {
namespace {

using resize::Coord;
using resize::Rounding;
using workloads::BlockedProgram;
using workloads::BlockedTensor;
using workloads::Cuts;
using workloads::Resize2d;
using Shape = std::vector<std::int64_t>;

// Every node's output on one device, each checked against the evaluator.
std::vector<std::vector<float>> run(const Graph& g) {
  Engine e(g, {});
  e.run(test::single_device(g, 1));
  const auto out = test::all_outputs(e);
  const auto want = test::evaluate_blocks(g, true);
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto& w = want[static_cast<std::size_t>(v)].data;
    const auto& o = out[static_cast<std::size_t>(v)];
    EXPECT_EQ(o.size(), w.size()) << g.label(v);
    for (std::size_t i = 0; i < o.size() && i < w.size(); ++i)
      EXPECT_NEAR(o[i], w[i], 1e-5 * (1 + std::abs(w[i]))) << g.label(v) << " [" << i << "]";
  }
  return out;
}

// A tensor's shape and blocks (kept past BlockedProgram::build, which empties the program).
struct Blocks {
  Shape shape;
  std::vector<NodeId> blocks;
  explicit Blocks(const BlockedTensor& t) : shape(t.shape), blocks(t.blocks) {}
};

// The whole tensor t reassembled from its blocks' outputs.
std::vector<float> whole(const Graph& g, const std::vector<std::vector<float>>& out,
                         const Blocks& t) {
  std::vector<float> r(static_cast<std::size_t>(workloads::product(t.shape)));
  for (NodeId v : t.blocks) {
    const ExecDesc& e = *g.node(v).exec;
    Shape i(4, 0);
    for (std::size_t k = 0; k < out[static_cast<std::size_t>(v)].size(); ++k) {
      std::int64_t at = 0;
      for (std::size_t d = 0; d < 4; ++d) at = at * t.shape[d] + e.origin[d] + i[d];
      r[static_cast<std::size_t>(at)] = out[static_cast<std::size_t>(v)][k];
      for (std::size_t d = 4; d-- > 0;) {
        if (++i[d] < e.shape[d]) break;
        i[d] = 0;
      }
    }
  }
  return r;
}

// Every node's output after a run on 3 devices under a random assignment (seed `seed`).
std::vector<std::vector<float>> outputs_on_three_devices(const Graph& g, unsigned seed) {
  EngineOptions o;
  o.devices = 3;
  Engine e(g, o);
  std::mt19937_64 rng(seed);
  e.run(test::random_assignment(g, 3, rng));
  return test::all_outputs(e);
}

// The FLOPs of a tensor's blocks.
double flops_of(const Graph& g, const Blocks& t) {
  double flops = 0;
  for (NodeId v : t.blocks) flops += g.node(v).flops;
  return flops;
}

Resize2d mode(bool linear, Coord coord, Rounding rounding = Rounding::round_prefer_floor) {
  Resize2d r;
  r.linear = linear, r.coord = coord, r.rounding = rounding;
  return r;
}

std::vector<Cuts> one_block(std::int64_t h, std::int64_t w) {
  return {{0, 1}, {0, 1}, {0, h}, {0, w}};
}

// x = [[1, 2], [3, 4]] and a 4 x 4 grid 0 .. 15.
TEST(ResizeKernel, MatchesHandComputedValues) {
  BlockedProgram p(workloads::DType::f32);
  const auto& x = p.constant("x", {1, 1, 2, 2}, 0);
  const auto& big = p.constant("big", {1, 1, 4, 4}, 1);
  const auto& near =
      p.resize2d("near", x, mode(false, Coord::asymmetric, Rounding::floor), 4, 4, one_block(4, 4));
  const auto& lin =
      p.resize2d("lin", x, mode(true, Coord::pytorch_half_pixel), 4, 4, one_block(4, 4));
  const auto& corners =
      p.resize2d("corners", x, mode(true, Coord::align_corners), 3, 3, one_block(3, 3));
  // Halving by half_pixel: positions 0.5 and 2.5, rounded down or up at the half.
  const auto& down_floor =
      p.resize2d("down_floor", big, mode(false, Coord::half_pixel), 2, 2, one_block(2, 2));
  const auto& down_ceil =
      p.resize2d("down_ceil", big, mode(false, Coord::half_pixel, Rounding::round_prefer_ceil), 2,
                 2, one_block(2, 2));
  // build() empties the program: keep the (single) block of each output.
  const NodeId nv = near.blocks[0], lv = lin.blocks[0], cv = corners.blocks[0];
  const NodeId fv = down_floor.blocks[0], ev = down_ceil.blocks[0];
  Graph g = p.build({"resize", "test", {}});
  std::vector<float> grid(16);
  for (int i = 0; i < 16; ++i) grid[static_cast<std::size_t>(i)] = static_cast<float>(i);
  g.set_constants({{"x", {1, 1, 2, 2}, {1, 2, 3, 4}}, {"big", {1, 1, 4, 4}, grid}});
  const auto out = run(g);
  const auto at = [&](NodeId v) { return out[static_cast<std::size_t>(v)]; };
  EXPECT_EQ(at(nv), (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4}));
  EXPECT_EQ(at(lv), (std::vector<float>{1, 1.25, 1.75, 2, 1.5, 1.75, 2.25, 2.5, 2.5, 2.75, 3.25,
                                        3.5, 3, 3.25, 3.75, 4}));
  EXPECT_EQ(at(cv), (std::vector<float>{1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4}));
  EXPECT_EQ(at(fv), (std::vector<float>{0, 2, 8, 10}));   // rows, columns 0 and 2
  EXPECT_EQ(at(ev), (std::vector<float>{5, 7, 13, 15}));  // rows, columns 1 and 3
}

struct Case {
  std::string label;
  Resize2d r;
  std::int64_t out_h, out_w;
};

// x [2, 3, 9, 7] in row blocks 0..4, 4..9 and channel blocks 0..1, 1..3, resized by each case
// into output row blocks of 3 (windows of one or two pieces), and once as a single block: the
// blocks reassembled equal the single block, every block equals the evaluator's, any
// assignment gives the single-device outputs.
TEST(ResizeKernel, BlockedResizeEqualsTheWholeResize) {
  const std::vector<Case> cases = {
      {"nearest x2 asymmetric floor", mode(false, Coord::asymmetric, Rounding::floor), 18, 14},
      {"nearest x1.5 half_pixel", mode(false, Coord::half_pixel), 13, 11},
      {"nearest down tf_half_pixel ceil",
       mode(false, Coord::tf_half_pixel_for_nearest, Rounding::ceil), 4, 3},
      {"linear x2 pytorch_half_pixel", mode(true, Coord::pytorch_half_pixel), 18, 14},
      {"linear align_corners", mode(true, Coord::align_corners), 16, 5},
      {"linear down half_pixel", mode(true, Coord::half_pixel), 5, 4},
      {"linear asymmetric scale 2.5", mode(true, Coord::asymmetric), 22, 17},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.label);
    BlockedProgram p(workloads::DType::f32);
    const auto& x = p.input("x", {2, 3, 9, 7}, 1, 0, {{0, 2}, {0, 1, 3}, {0, 4, 9}, {0, 7}});
    Resize2d r = c.r;
    if (c.label.find("2.5") != std::string::npos) r.scale_h = r.scale_w = 2.5;
    Cuts rows;
    for (std::int64_t y = 0; y < c.out_h; y += 3) rows.push_back(y);
    rows.push_back(c.out_h);
    const Blocks blocked(
        p.resize2d("blocked", x, r, c.out_h, c.out_w, {{0, 1, 2}, {0, 1, 3}, rows, {0, c.out_w}}));
    const Blocks single(
        p.resize2d("single", x, r, c.out_h, c.out_w, {{0, 2}, {0, 3}, {0, c.out_h}, {0, c.out_w}}));
    const Graph g = p.build({"resize", "test", {}});
    const auto out = run(g);
    EXPECT_EQ(whole(g, out, blocked), whole(g, out, single));
    EXPECT_EQ(outputs_on_three_devices(g, 7), out);
    EXPECT_EQ(flops_of(g, blocked),
              r.linear ? 9.0 * 2 * 3 * static_cast<double>(c.out_h * c.out_w) : 0.0);
  }
}

// x = [[1, 2], [3, 4]] and the kernel [[1, 10], [100, 1000]]: stride 2 places a scaled copy of
// the kernel per pixel; stride 1 overlaps them; padding 1 crops to the centre; a bias adds.
TEST(ConvTransposeKernel, MatchesHandComputedValues) {
  BlockedProgram p(workloads::DType::f32);
  const auto& x = p.constant("x", {1, 1, 2, 2}, 0);
  const auto& w = p.constant("w", {1, 1, 2, 2}, 1);
  const auto& b = p.constant("b", {1}, 2);
  workloads::Window2d s2;
  s2.stride_h = s2.stride_w = 2;
  const NodeId placed =
      p.conv_transpose2d("s2", x, w, nullptr, s2, 4, 4, one_block(4, 4)).blocks[0];
  const NodeId overlap =
      p.conv_transpose2d("s1", x, w, nullptr, workloads::Window2d{}, 3, 3, one_block(3, 3))
          .blocks[0];
  workloads::Window2d pad1;
  pad1.pad_h = pad1.pad_w = 1;
  const NodeId centre = p.conv_transpose2d("p1", x, w, &b, pad1, 1, 1, one_block(1, 1)).blocks[0];
  Graph g = p.build({"conv-transpose", "test", {}});
  g.set_constants({{"x", {1, 1, 2, 2}, {1, 2, 3, 4}},
                   {"w", {1, 1, 2, 2}, {1, 10, 100, 1000}},
                   {"b", {1}, {0.5f}}});
  const auto out = run(g);
  EXPECT_EQ(
      out[static_cast<std::size_t>(placed)],
      (std::vector<float>{1, 10, 2, 20, 100, 1000, 200, 2000, 3, 30, 4, 40, 300, 3000, 400, 4000}));
  EXPECT_EQ(out[static_cast<std::size_t>(overlap)],
            (std::vector<float>{1, 12, 20, 103, 1234, 2040, 300, 3400, 4000}));
  EXPECT_EQ(out[static_cast<std::size_t>(centre)], (std::vector<float>{1234.5f}));
}

struct TransposedCase {
  std::string label;
  workloads::Window2d g;
  std::int64_t oc, out_h, out_w;
};

// x [2, 4, 7, 5] in row blocks 0..3, 3..7 (and channel blocks for the depthwise case), each
// case's output in row blocks of 4 and channel blocks, and as one block: equal when reassembled,
// equal to the evaluator's blocks, the same under any assignment, with the documented FLOPs.
TEST(ConvTransposeKernel, BlockedEqualsWhole) {
  const auto geometry = [](std::int64_t k, std::int64_t s, std::int64_t pad, std::int64_t d,
                           std::int64_t groups) {
    workloads::Window2d g;
    g.kernel_h = g.kernel_w = k, g.stride_h = g.stride_w = s, g.pad_h = g.pad_w = pad;
    g.dil_h = g.dil_w = d, g.groups = groups;
    return g;
  };
  // out = (in - 1) s - 2 pad + (k - 1) d + 1 (+ output padding: one more row and column)
  const std::vector<TransposedCase> cases = {
      {"k2 s2", geometry(2, 2, 0, 1, 1), 6, 14, 10},
      {"k3 s2 pad 1 output padding 1", geometry(3, 2, 1, 1, 1), 5, 14, 10},
      {"k4 s2 pad 1 groups 2", geometry(4, 2, 1, 1, 2), 6, 14, 10},
      {"depthwise k3 s1 pad 1", geometry(3, 1, 1, 1, 4), 4, 7, 5},
      {"k3 s3 dilation 2 pad 2", geometry(3, 3, 2, 2, 2), 4, 19, 13},
      {"k1 s3 (rows of bias alone)", geometry(1, 3, 0, 1, 1), 3, 19, 13},
  };
  for (const TransposedCase& c : cases) {
    SCOPED_TRACE(c.label);
    BlockedProgram p(workloads::DType::f32);
    const auto& x = p.input("x", {2, 4, 7, 5}, 1, 0, {{0, 2}, {0, 2, 4}, {0, 3, 7}, {0, 5}});
    const std::int64_t icg = 4 / c.g.groups;
    const auto& w = p.input("w", {c.oc, icg, c.g.kernel_h, c.g.kernel_w}, 0.5);
    const auto& b = p.input("b", {c.oc});
    Cuts rows;
    for (std::int64_t y = 0; y < c.out_h; y += 4) rows.push_back(y);
    rows.push_back(c.out_h);
    const Cuts chans = c.oc == 4 ? Cuts{0, 2, 4} : Cuts{0, c.oc / 2, c.oc};
    const Blocks blocked(p.conv_transpose2d("blocked", x, w, &b, c.g, c.out_h, c.out_w,
                                            {{0, 1, 2}, chans, rows, {0, c.out_w}}));
    const Blocks single(p.conv_transpose2d("single", x, w, &b, c.g, c.out_h, c.out_w,
                                           {{0, 2}, {0, c.oc}, {0, c.out_h}, {0, c.out_w}}));
    const Graph g = p.build({"conv-transpose", "test", {}});
    const auto out = run(g);
    const auto a = whole(g, out, blocked), want = whole(g, out, single);
    ASSERT_EQ(a.size(), want.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], want[i], 1e-5) << i;
    EXPECT_EQ(outputs_on_three_devices(g, 11), out);
    const double per = 2.0 * static_cast<double>(icg * c.g.kernel_h * c.g.kernel_w) /
                           static_cast<double>(c.g.stride_h * c.g.stride_w) +
                       1;
    EXPECT_DOUBLE_EQ(flops_of(g, blocked), per * static_cast<double>(2 * c.oc * c.out_h * c.out_w));
  }
}

// A nearest 2x resize of x [1, 2, 4, 4] (row blocks 0..2, 2..4): output rows 0..3 read input
// rows 0..1, the first block alone.
TEST(ResizeKernel, BadDescriptionsAreRefusedNamingTheNode) {
  const auto error = [](const std::function<void(ExecDesc&)>& edit) {
    BlockedProgram p(workloads::DType::f32);
    const auto& x = p.input("x", {1, 2, 4, 4}, 1, 0, {{0, 1}, {0, 2}, {0, 2, 4}, {0, 4}});
    p.resize2d("r", x, mode(false, Coord::asymmetric, Rounding::floor), 8, 8,
               {{0, 1}, {0, 2}, {0, 4, 8}, {0, 8}});
    const Graph g = p.build({"resize", "test", {}});
    GraphBuilder b;  // g again, with the block of output rows 0..3 edited
    for (NodeId v = 0; v < g.num_nodes(); ++v) {
      Node n = g.node(v);
      if (v == g.num_nodes() - 2) edit(*n.exec);
      b.add_node(std::move(n));
    }
    for (const Edge& e : g.edges()) b.add_edge(e.src, e.dst);
    return test::compile_error(b.build());
  };
  const auto set = [](ExecDesc& e, const std::string& name, double value) {
    for (auto& [k, v] : e.attrs)
      if (k == name) v = value;
  };
  const std::string node = "node 2 (r[0,0,0,0]): resize2d: ";
  EXPECT_EQ(error([](ExecDesc&) {}), "no error");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "mode", 2); }),
            node + "attribute 'mode' must be 0 .. 1");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "coord", 5); }),
            node + "attribute 'coord' must be 0 .. 4");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "scale_h", 0); }),
            node + "attribute 'scale_h' must be positive");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "out_w", 9); }),
            node + "the output block must span the whole width out_w");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "out_h", 3); }), node + "output rows beyond out_h");
  // Scale 1 would read rows 0..3: row 2 and 3 are not in the window.
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "scale_h", 1); }),
            node + "input rows 0 .. 3 are not all in the window (rows 0 .. 1)");
  EXPECT_EQ(error([&](ExecDesc& e) { set(e, "c0", 1); }),
            node + "channels map one to one: c0 must equal o0 and the window have cb channels");
}

}  // namespace
}  // namespace doppler
