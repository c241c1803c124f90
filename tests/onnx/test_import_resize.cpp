// ONNX import of Resize (opsets 10 and 13) and Upsample (opset 9) on small hand-built models:
// values (block evaluator of docs/exec.md) against plain loops written from ONNX's formulas, on
// 1-4 devices and with the output rows cut into blocks, FLOPs by the formula, and one-line
// errors for what is not supported.
#include <algorithm>
#include <cmath>
#include <functional>

#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"

#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::ModelBuilder;

constexpr std::int64_t kN = 2, kC = 3, kH = 5, kW = 4;

// out[n, c, r, q] = f(x, n, c, r, q) over the output shape.
Dense loops(
    const Dense& x, std::int64_t oh, std::int64_t ow,
    const std::function<double(std::int64_t, std::int64_t, std::int64_t, std::int64_t)>& f) {
  Dense y({x.shape[0], x.shape[1], oh, ow});
  for (std::int64_t n = 0; n < x.shape[0]; ++n)
    for (std::int64_t c = 0; c < x.shape[1]; ++c)
      for (std::int64_t r = 0; r < oh; ++r)
        for (std::int64_t q = 0; q < ow; ++q) y[{n, c, r, q}] = f(n, c, r, q);
  return y;
}

// Bilinear at input position (sy, sx), each clamped into the input first.
double bilinear(const Dense& x, std::int64_t n, std::int64_t c, double sy, double sx) {
  sy = std::clamp(sy, 0.0, static_cast<double>(x.shape[2] - 1));
  sx = std::clamp(sx, 0.0, static_cast<double>(x.shape[3] - 1));
  const auto y0 = static_cast<std::int64_t>(std::floor(sy));
  const auto x0 = static_cast<std::int64_t>(std::floor(sx));
  const std::int64_t y1 = std::min(y0 + 1, x.shape[2] - 1), x1 = std::min(x0 + 1, x.shape[3] - 1);
  const double fy = sy - static_cast<double>(y0), fx = sx - static_cast<double>(x0);
  return (1 - fy) * ((1 - fx) * x[{n, c, y0, x0}] + fx * x[{n, c, y0, x1}]) +
         fy * ((1 - fx) * x[{n, c, y1, x0}] + fx * x[{n, c, y1, x1}]);
}

double max_abs_diff(const Dense& a, const Dense& b) {
  EXPECT_EQ(a.shape, b.shape);
  double m = 0;
  for (std::size_t i = 0; i < std::min(a.data.size(), b.data.size()); ++i)
    m = std::max(m, std::abs(a.data[i] - b.data[i]));
  return m;
}

// Imports m on 1, 2 and 4 devices and with y's rows in 3 blocks: y equals want(x) and the
// FLOPs are `flops`.
void expect_import(const ModelBuilder& m, std::int64_t oh, std::int64_t ow, double flops,
                   const std::function<Dense(const Dense&)>& want) {
  const std::vector<std::pair<int, std::map<std::string, std::vector<std::int64_t>>>> runs = {
      {1, {}}, {2, {}}, {4, {}}, {3, {{"y", {1, 1, 3, 1}}}}};
  for (const auto& [p, partition] : runs) {
    const auto r = import_and_eval(m, p, partition);
    EXPECT_LT(max_abs_diff(r.tensor("y"), want(r.tensor("x"))), 1e-9) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << "P=" << p;
    EXPECT_EQ(r.tensor("y").shape, (std::vector<std::int64_t>{kN, kC, oh, ow}));
  }
}

TEST(ResizeImport, NearestByScalesCopiesEachPixelIntoA2x2Square) {
  for (const std::int64_t opset : {10, 13}) {
    ModelBuilder m(opset);
    m.input("x", {kN, kC, kH, kW})
        .output("y", {"n", "c", "h", "w"})
        .weight("scales", {4}, {1, 1, 2, 2});
    if (opset == 10) {
      m.node("Resize", {"x", "scales"}, {"y"});
    } else {
      m.node("Resize", {"x", "", "scales"}, {"y"});
      m.attr("coordinate_transformation_mode", "asymmetric").attr("nearest_mode", "floor");
    }
    expect_import(m, 2 * kH, 2 * kW, 0, [](const Dense& x) {
      return loops(x, 2 * kH, 2 * kW, [&](auto n, auto c, auto r, auto q) {
        return x[{n, c, r / 2, q / 2}];
      });
    });
  }
}

TEST(ResizeImport, LinearAlignCornersBySizes) {
  ModelBuilder m(13);
  m.input("x", {kN, kC, kH, kW})
      .output("y", {"n", "c", "h", "w"})
      .weight("roi", {0}, {})
      .weight("scales", {0}, {});
  m.ints("sizes", {4}, {kN, kC, 9, 7});
  m.node("Resize", {"x", "roi", "scales", "sizes"}, {"y"});
  m.attr("mode", "linear").attr("coordinate_transformation_mode", "align_corners");
  expect_import(m, 9, 7, 9.0 * kN * kC * 9 * 7, [](const Dense& x) {
    return loops(x, 9, 7, [&](auto n, auto c, auto r, auto q) {
      return bilinear(x, n, c, static_cast<double>(r) * (kH - 1) / 8,
                      static_cast<double>(q) * (kW - 1) / 6);
    });
  });
}

// PyTorch's F.interpolate(scale_factor=(1.6, 0.5), mode="bilinear"): pytorch_half_pixel with
// the model's scales (the output extents floor(5 x 1.6) = 8 and floor(4 x 0.5) = 2).
TEST(ResizeImport, LinearHalfPixelUsesTheModelsScales) {
  ModelBuilder m(13);
  m.input("x", {kN, kC, kH, kW})
      .output("y", {"n", "c", "h", "w"})
      .weight("scales", {4}, {1, 1, 1.6f, 0.5f});
  m.node("Resize", {"x", "", "scales"}, {"y"});
  m.attr("mode", "linear").attr("coordinate_transformation_mode", "pytorch_half_pixel");
  const double sh = static_cast<double>(1.6f);
  expect_import(m, 8, 2, 9.0 * kN * kC * 8 * 2, [&](const Dense& x) {
    return loops(x, 8, 2, [&](auto n, auto c, auto r, auto q) {
      return bilinear(x, n, c, (static_cast<double>(r) + 0.5) / sh - 0.5,
                      (static_cast<double>(q) + 0.5) / 0.5 - 0.5);
    });
  });
}

// Upsample-9 (linear, asymmetric) and half_pixel nearest rounding halves up (opset 13).
TEST(ResizeImport, UpsampleAndNearestRoundings) {
  {
    ModelBuilder m(9);
    m.input("x", {kN, kC, kH, kW})
        .output("y", {"n", "c", "h", "w"})
        .weight("scales", {4}, {1, 1, 2, 3});
    m.node("Upsample", {"x", "scales"}, {"y"});
    m.attr("mode", "linear");
    expect_import(m, 2 * kH, 3 * kW, 9.0 * kN * kC * 2 * kH * 3 * kW, [](const Dense& x) {
      return loops(x, 2 * kH, 3 * kW, [&](auto n, auto c, auto r, auto q) {
        return bilinear(x, n, c, static_cast<double>(r) / 2, static_cast<double>(q) / 3);
      });
    });
  }
  {
    ModelBuilder m(13);  // 5 -> 2 rows: positions 0.75 and 3.25; 4 -> 8 columns: q / 2 - 0.25
    m.input("x", {kN, kC, kH, kW})
        .output("y", {"n", "c", "h", "w"})
        .weight("scales", {4}, {1, 1, 0.4f, 2});
    m.node("Resize", {"x", "", "scales"}, {"y"});
    m.attr("nearest_mode", "round_prefer_ceil");
    expect_import(m, 2, 8, 0, [](const Dense& x) {
      return loops(x, 2, 8, [&](auto n, auto c, auto r, auto q) {
        const std::int64_t rows[] = {1, 3};  // 0.75 -> 1, 3.25 -> 3
        // columns q / 2 - 0.25 (-0.25, 0.25, 0.75, ...): halves never occur; to the nearest
        return x[{n, c, rows[r], q / 2}];
      });
    });
  }
}

std::string import_error(ModelBuilder& m) {
  onnx_import::ImportOptions o;
  o.devices = 2;
  try {
    onnx_import::import_onnx_bytes(m.bytes(), "bad.onnx", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(ResizeImport, UnsupportedResizesAreOneLineErrors) {
  const auto resize = [](const std::vector<float>& scales, const std::string& attr,
                         const std::string& value) {
    ModelBuilder m(13);
    m.input("x", {kN, kC, kH, kW}).output("y", {"n", "c", "h", "w"}).weight("scales", {4}, scales);
    m.node("Resize", {"x", "", "scales"}, {"y"});
    if (!attr.empty()) m.attr(attr, value);
    return import_error(m);
  };
  const auto node = [](const std::string& problem) {
    return "bad.onnx: " + problem + " (node Resize_1 (Resize))";
  };
  EXPECT_EQ(resize({1, 1, 2, 2}, "mode", "cubic"),
            node("mode 'cubic' is not supported (nearest, linear)"));
  EXPECT_EQ(resize({1, 1, 2, 2}, "coordinate_transformation_mode", "tf_crop_and_resize"),
            node("coordinate_transformation_mode 'tf_crop_and_resize' is not supported "
                 "(half_pixel, asymmetric, align_corners, pytorch_half_pixel, "
                 "tf_half_pixel_for_nearest)"));
  EXPECT_EQ(resize({1, 2, 2, 2}, "", ""),
            node("only the height and width may be resized (N and C unchanged)"));
  ModelBuilder m(13);
  m.input("x", {kN, kC, kH}).output("y", {"n", "c", "h"}).weight("scales", {3}, {1, 1, 2});
  m.node("Resize", {"x", "", "scales"}, {"y"});
  EXPECT_EQ(import_error(m), node("only 4-D (NCHW) Resize is supported"));
}

}  // namespace
}  // namespace doppler
