// Pad in its three modes of opset 11-17 (constant with a value, reflect, edge) and with negative
// pads (a crop): the elements against numpy.pad's index rule written as loops, over inputs cut in
// several ways; no FLOPs (copies and fills). Tile, DepthToSpace (DCR, CRD) and SpaceToDepth
// against ONNX's index definitions.
#include <algorithm>
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

struct PadCase {
  const char* name;
  const char* mode;
  Ints pads;  // ONNX order: every axis's start, then every axis's end
};

// The source index along an axis of extent n for output index i, before `b` elements: -1 where
// the constant goes.
std::int64_t source(const std::string& mode, std::int64_t i, std::int64_t b, std::int64_t n) {
  std::int64_t j = i - b;
  if (mode == "reflect") {
    if (j < 0) j = -j;
    if (j >= n) j = 2 * (n - 1) - j;
  } else if (mode == "edge") {
    j = std::clamp<std::int64_t>(j, 0, n - 1);
  }
  return j >= 0 && j < n ? j : -1;
}

TEST(OnnxImportLayout, EveryModeTakesTheElementsOfNumpysRule) {
  const std::vector<PadCase> cases = {
      {"constant", "constant", {0, 1, 2, 0, 2, 1}},
      {"reflect", "reflect", {1, 4, 3, 0, 2, 1}},
      {"edge", "edge", {1, 0, 2, 2, 3, 5}},
      {"crop", "constant", {0, -2, 1, 0, 1, -3}},  // rows 2..4 then the value; the value, column 0
  };
  const Ints x_shape = {2, 5, 4};
  ModelBuilder m(13);
  m.input("x", {2, 5, 4}).weight("v", {}, {-7.5f});
  m.node("Neg", {"x"}, {"y"});
  for (const PadCase& c : cases) {
    const std::string n = c.name;
    m.ints(n + "_p", {6}, c.pads);
    m.node("Pad", {"y", n + "_p", "v"}, {n}).attr("mode", c.mode);
    Ints shape;
    for (std::size_t a = 0; a < 3; ++a) shape.push_back(x_shape[a] + c.pads[a] + c.pads[a + 3]);
    m.output(n, {shape[0], shape[1], shape[2]});
  }
  const std::vector<std::map<std::string, Ints>> layouts = {
      {}, {{"y", {2, 3, 1}}}, {{"y", {1, 5, 2}}}};
  for (int p : {1, 2, 4})
    for (std::size_t l = 0; l < layouts.size(); ++l) {
      const auto e = import_and_eval(m, p, layouts[l]);
      const Dense y = e.tensor("y");
      const std::string at = "P=" + std::to_string(p) + " layout " + std::to_string(l);
      for (const PadCase& c : cases) {
        const Dense got = e.tensor(c.name);
        ASSERT_EQ(got.shape.size(), 3u) << c.name;
        std::vector<double> want;
        for (std::int64_t i = 0; i < got.shape[0]; ++i)
          for (std::int64_t j = 0; j < got.shape[1]; ++j)
            for (std::int64_t k = 0; k < got.shape[2]; ++k) {
              const std::int64_t si = source(c.mode, i, c.pads[0], 2),
                                 sj = source(c.mode, j, c.pads[1], 5),
                                 sk = source(c.mode, k, c.pads[2], 4);
              want.push_back(si < 0 || sj < 0 || sk < 0 ? -7.5 : y[{si, sj, sk}]);
            }
        EXPECT_EQ(got.data, want) << c.name << " " << at;
      }
      EXPECT_DOUBLE_EQ(e.res.report.total_flops, 40) << at;  // the Neg
    }
}

TEST(OnnxImportLayout, ReflectPadsMustBeShorterThanTheAxis) {
  ModelBuilder m(13);
  m.input("x", {2, 3}).output("y", {2, 6}).ints("p", {4}, {0, 3, 0, 0});
  m.node("Pad", {"x", "p"}, {"y"}).attr("mode", "reflect");
  const std::string err = test::import_error(m);
  EXPECT_NE(err.find("Pad: reflect pads of 3 on an axis of 3 (at most 2)"), std::string::npos)
      << err;
}

// Sizes that would overflow are refused with one line, not computed: negative pads as long as
// the axis, a Tile past 2^31 elements along an axis, a DepthToSpace block past 2^15.
TEST(OnnxImportLayout, OversizedRequestsAreRefused) {
  const auto error = [](const char* op, const std::vector<std::int64_t>& ints,
                        const std::vector<std::pair<std::string, std::int64_t>>& attrs) {
    ModelBuilder m(13);
    m.input("x", {1, 4, 2, 2}).output("y", {"n", "c", "h", "w"});
    m.ints("v", {static_cast<std::int64_t>(ints.size())}, ints);
    m.node(op, ints.empty() ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "v"},
           {"y"}, attrs);
    return test::import_error(m);
  };
  const std::string crop = error("Pad", {0, 0, -1, 0, 0, 0, -1, 0}, {});
  EXPECT_NE(crop.find("remove the whole axis"), std::string::npos) << crop;
  const std::string far = error("Pad", {0, 0, -(1LL << 62), 0, 0, 0, -(1LL << 62), 0}, {});
  EXPECT_EQ(far, "bad.onnx: Pad: negative pads remove the whole axis (node Pad_1 (Pad))");
  const std::string tile = error("Tile", {1, 1, 1, 1LL << 62}, {});
  EXPECT_EQ(tile, "bad.onnx: Tile: an extent above 2^31 (node Tile_1 (Tile))");
  const std::string big = error("DepthToSpace", {}, {{"blocksize", 4294967296}});
  EXPECT_NE(big.find("blocksize 4294967296 outside 1..32768"), std::string::npos) << big;
  const std::string zero = error("SpaceToDepth", {}, {{"blocksize", 0}});
  EXPECT_NE(zero.find("blocksize 0 outside 1..32768"), std::string::npos) << zero;
}

// Tile of x [2, 3, 4] by (2, 1, 3): y[i, j, k] = x[i mod 2, j, k mod 4].
TEST(OnnxImportLayout, TileRepeatsTheInput) {
  ModelBuilder m(13);
  m.input("x", {2, 3, 4}).output("y", {4, 3, 12}).ints("r", {3}, {2, 1, 3});
  m.node("Neg", {"x"}, {"nx"}).node("Tile", {"nx", "r"}, {"y"});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p, {{"nx", {2, 3, 2}}});
    const Dense x = e.tensor("x"), y = e.tensor("y");
    ASSERT_EQ(y.shape, (Ints{4, 3, 12}));
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 3; ++j)
        for (std::int64_t k = 0; k < 12; ++k)
          EXPECT_EQ((y[{i, j, k}]), -(x[{i % 2, j, k % 4}])) << "P=" << p;
    EXPECT_DOUBLE_EQ(e.res.report.total_flops, 24) << "P=" << p;  // the Neg
  }
}

// DepthToSpace of x [1, 8, 2, 3] with block 2 (8 channels -> 2): DCR takes channel
// (bh b + bw) C' + c for output (c, h b + bh, w b + bw), CRD channel c b^2 + bh b + bw; then
// SpaceToDepth of the DCR result gives x back (its inverse).
TEST(OnnxImportLayout, DepthToSpaceAndBackMatchTheDefinitions) {
  ModelBuilder m(13);
  m.input("x", {1, 8, 2, 3}).output("dcr", {1, 2, 4, 6}).output("crd", {1, 2, 4, 6});
  m.output("back", {1, 8, 2, 3});
  m.node("DepthToSpace", {"x"}, {"dcr"}, {{"blocksize", 2}})
      .node("DepthToSpace", {"x"}, {"crd"}, {{"blocksize", 2}})
      .attr("mode", "CRD")
      .node("SpaceToDepth", {"dcr"}, {"back"}, {{"blocksize", 2}});
  for (int p : {1, 2, 4}) {
    const auto e = import_and_eval(m, p);
    const Dense x = e.tensor("x"), dcr = e.tensor("dcr"), crd = e.tensor("crd");
    for (std::int64_t c = 0; c < 2; ++c)
      for (std::int64_t h = 0; h < 4; ++h)
        for (std::int64_t w = 0; w < 6; ++w) {
          const std::int64_t bh = h % 2, bw = w % 2, ih = h / 2, iw = w / 2;
          EXPECT_EQ((dcr[{0, c, h, w}]), (x[{0, (bh * 2 + bw) * 2 + c, ih, iw}])) << "P=" << p;
          EXPECT_EQ((crd[{0, c, h, w}]), (x[{0, c * 4 + bh * 2 + bw, ih, iw}])) << "P=" << p;
        }
    EXPECT_EQ(e.tensor("back").data, x.data) << "P=" << p;
  }
}

}  // namespace
}  // namespace doppler
