// ONNX import of the ops that upsample, Resize (opsets 10 and 13), Upsample (opset 9) and
// ConvTranspose, on small hand-built models: values (block evaluator of docs/exec.md) against
// plain loops written from ONNX's formulas, on 1-4 devices and with the output rows cut into
// blocks, FLOPs by the formula, and one-line errors for what is not supported.
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
using test::import_error;
using test::max_abs_diff;
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
            node("only the spatial axes may be resized (N and C unchanged)"));
  ModelBuilder m(13);
  m.input("x", {kN, kC}).output("y", {"n", "c"}).weight("scales", {2}, {1, 2});
  m.node("Resize", {"x", "", "scales"}, {"y"});
  EXPECT_EQ(import_error(m),
            node("only 3-D (NCL), 4-D (NCHW) and 5-D (NCDHW) Resize is supported"));
}

// 5-D Resize (a 3-D U-Net's upsampling), separable as ONNX defines it: trilinear with half_pixel
// positions (scales 1, 1, 2, 1.5, 2) and nearest with asymmetric positions rounded down (sizes:
// depth 3 -> 5, rows 4 -> 2, columns kept), against loops from the formulas on 1, 2 and 4
// devices. FLOPs: 9 per output element for the rows and columns (linear), 3 per element of the
// depth-resized tensor [N, C, D', H, W] for the depth's blend; nearest 0.
TEST(ResizeImport, VolumesResizeTheDepthThenTheImages) {
  const auto clampd = [](double s, std::int64_t n) {
    return std::clamp(s, 0.0, static_cast<double>(n - 1));
  };
  {
    ModelBuilder m(13);
    m.input("x", {1, 2, 3, 4, 5}).output("y", {1, 2, 6, 6, 10});
    m.weight("scales", {5}, {1, 1, 2, 1.5, 2});
    m.node("Resize", {"x", "", "scales"}, {"y"}).attr("mode", "linear");
    for (const int p : {1, 2, 4}) {
      const auto r = import_and_eval(m, p);
      const Dense x = r.tensor("x"), y = r.tensor("y");
      const double sc[3] = {2, 1.5, 2};
      double worst = 0;
      for (std::int64_t c = 0; c < 2; ++c)
        for (std::int64_t d = 0; d < 6; ++d)
          for (std::int64_t h = 0; h < 6; ++h)
            for (std::int64_t w = 0; w < 10; ++w) {
              const std::int64_t o[3] = {d, h, w}, in[3] = {3, 4, 5};
              std::int64_t lo[3], hi[3];
              double f[3];
              for (int a = 0; a < 3; ++a) {
                const double s = clampd((static_cast<double>(o[a]) + 0.5) / sc[a] - 0.5, in[a]);
                lo[a] = static_cast<std::int64_t>(std::floor(s));
                hi[a] = std::min(lo[a] + 1, in[a] - 1);
                f[a] = s - static_cast<double>(lo[a]);
              }
              double v = 0;
              for (int k = 0; k < 8; ++k) {
                double wgt = 1;
                std::int64_t at[3];
                for (int a = 0; a < 3; ++a) {
                  const bool up = (k >> a) & 1;
                  at[a] = up ? hi[a] : lo[a];
                  wgt *= up ? f[a] : 1 - f[a];
                }
                v += wgt * x[{0, c, at[0], at[1], at[2]}];
              }
              worst = std::max(worst, std::abs(y[{0, c, d, h, w}] - v));
            }
      EXPECT_LT(worst, 1e-6) << p;
      EXPECT_DOUBLE_EQ(r.res.report.total_flops, 9.0 * 720 + 3.0 * 2 * 6 * 4 * 5) << p;
    }
  }
  {
    ModelBuilder m(13);
    m.input("x", {2, 1, 3, 4, 2}).output("y", {2, 1, 5, 2, 2}).ints("sizes", {5}, {2, 1, 5, 2, 2});
    m.node("Resize", {"x", "", "", "sizes"}, {"y"})
        .attr("coordinate_transformation_mode", "asymmetric");
    m.attr("nearest_mode", "floor");
    for (const int p : {1, 2, 4}) {
      const auto r = import_and_eval(m, p);
      const Dense x = r.tensor("x"), y = r.tensor("y");
      for (std::int64_t n = 0; n < 2; ++n)
        for (std::int64_t d = 0; d < 5; ++d)
          for (std::int64_t h = 0; h < 2; ++h)
            for (std::int64_t w = 0; w < 2; ++w) {
              const auto sd = static_cast<std::int64_t>(std::floor(d * 3.0 / 5));
              EXPECT_EQ((y[{n, 0, d, h, w}]), (x[{n, 0, sd, 2 * h, w}])) << n << d << h << w;
            }
      EXPECT_DOUBLE_EQ(r.res.report.total_flops, 0) << p;
    }
  }
}

struct Transposed {
  std::string label;
  std::int64_t c, oc, k, stride, dil, groups;
  std::vector<std::int64_t> pads, output_padding, output_shape;  // empty: absent
  std::string auto_pad;                                          // empty: absent
  std::int64_t pad_top, pad_left, out_h, out_w;                  // what ONNX's formulas give
};

// ConvTranspose by scattering, from ONNX's weight layout [C, OC / groups, KH, KW]: every input
// pixel times every kernel position lands on oy = iy stride - pad_top + ky dil.
Dense scatter(const Dense& x, const std::vector<float>& w, const std::vector<float>& b,
              const Transposed& t) {
  const std::int64_t icg = t.c / t.groups, opg = t.oc / t.groups;
  Dense y({x.shape[0], t.oc, t.out_h, t.out_w});
  for (std::int64_t n = 0; n < x.shape[0]; ++n)
    for (std::int64_t o = 0; o < t.oc; ++o) {
      for (std::int64_t r = 0; r < t.out_h; ++r)
        for (std::int64_t q = 0; q < t.out_w; ++q) y[{n, o, r, q}] = b[static_cast<std::size_t>(o)];
      const std::int64_t grp = o / opg;
      for (std::int64_t ci = 0; ci < icg; ++ci)
        for (std::int64_t iy = 0; iy < x.shape[2]; ++iy)
          for (std::int64_t ix = 0; ix < x.shape[3]; ++ix)
            for (std::int64_t ky = 0; ky < t.k; ++ky)
              for (std::int64_t kx = 0; kx < t.k; ++kx) {
                const std::int64_t r = iy * t.stride - t.pad_top + ky * t.dil;
                const std::int64_t q = ix * t.stride - t.pad_left + kx * t.dil;
                if (r < 0 || r >= t.out_h || q < 0 || q >= t.out_w) continue;
                const auto wi = static_cast<std::size_t>(
                    (((grp * icg + ci) * opg + (o - grp * opg)) * t.k + ky) * t.k + kx);
                y[{n, o, r, q}] += w[wi] * x[{n, grp * icg + ci, iy, ix}];
              }
    }
  return y;
}

// Output extents: (in - 1) stride + output_padding + (k - 1) dil + 1 - pads; with output_shape
// or auto_pad SAME_*, the total padding is that extent minus the requested one, its start half
// (rounded down for SAME_UPPER, up otherwise).
TEST(ConvTransposeImport, MatchesScatterLoopsOnAnyPartition) {
  const std::vector<Transposed> cases = {
      {"k2 s2 (UNet)", 6, 4, 2, 2, 1, 1, {}, {}, {}, "", 0, 0, 10, 8},
      {"k3 s2 pads 1 output_padding 1",
       4,
       5,
       3,
       2,
       1,
       1,
       {1, 1, 1, 1},
       {1, 1},
       {},
       "",
       1,
       1,
       10,
       8},
      {"k4 s2 pads 1 groups 2", 4, 6, 4, 2, 1, 2, {1, 2, 1, 0}, {}, {}, "", 1, 2, 10, 8},
      {"depthwise k3", 4, 4, 3, 1, 1, 4, {1, 1, 1, 1}, {}, {}, "", 1, 1, 5, 4},
      {"k3 s3 dilation 2", 4, 6, 3, 3, 2, 2, {}, {}, {}, "", 0, 0, 17, 14},
      // full extent 11 x 9; output_shape 10 x 8: total 1, start 1 (NOTSET), 0 (SAME_UPPER)
      {"output_shape", 4, 3, 3, 2, 1, 1, {}, {}, {10, 8}, "", 1, 1, 10, 8},
      {"output_shape SAME_UPPER", 4, 3, 3, 2, 1, 1, {}, {}, {10, 8}, "SAME_UPPER", 0, 0, 10, 8},
      {"SAME_LOWER", 4, 3, 3, 2, 1, 1, {}, {}, {}, "SAME_LOWER", 1, 1, 10, 8},
  };
  for (const Transposed& t : cases) {
    SCOPED_TRACE(t.label);
    const std::int64_t opg = t.oc / t.groups;
    const auto w = test::iota_values(static_cast<std::size_t>(t.c * opg * t.k * t.k), 0.1f, -0.5f);
    const auto b = test::iota_values(static_cast<std::size_t>(t.oc), 0.2f, -0.7f);
    ModelBuilder m(13);
    m.input("x", {kN, t.c, kH, kW}).output("y", {"n", "c", "h", "w"});
    m.weight("w", {t.c, opg, t.k, t.k}, w).weight("b", {t.oc}, b);
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> ints = {
        {"strides", {t.stride, t.stride}}, {"dilations", {t.dil, t.dil}}};
    if (!t.pads.empty()) ints.push_back({"pads", t.pads});
    if (!t.output_padding.empty()) ints.push_back({"output_padding", t.output_padding});
    if (!t.output_shape.empty()) ints.push_back({"output_shape", t.output_shape});
    m.node("ConvTranspose", {"x", "w", "b"}, {"y"}, {{"group", t.groups}}, ints);
    if (!t.auto_pad.empty()) m.attr("auto_pad", t.auto_pad);
    const double per = 2.0 * static_cast<double>(t.c / t.groups * t.k * t.k) /
                           static_cast<double>(t.stride * t.stride) +
                       1;
    const double flops = per * static_cast<double>(kN * t.oc * t.out_h * t.out_w);
    for (const auto& [p, partition] :
         std::vector<std::pair<int, std::map<std::string, std::vector<std::int64_t>>>>{
             {1, {}}, {2, {}}, {4, {}}, {3, {{"y", {1, 2, 3, 1}}}}}) {
      const auto r = import_and_eval(m, p, partition);
      EXPECT_LT(max_abs_diff(r.tensor("y"), scatter(r.tensor("x"), w, b, t)), 1e-9) << "P=" << p;
      EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops) << "P=" << p;
    }
  }
}

// ConvTranspose1d (an audio decoder's upsampling: kernel 4, stride 2, pads 1, two groups), then
// a 1-D linear Resize by 1.5 (an NCL tensor, resized as [N, C, 1, L]).
TEST(ConvTransposeImport, OneDimensionalMatchesScatterLoops) {
  const std::int64_t n = 2, c = 4, oc = 6, len = 9, k = 4, groups = 2, opg = oc / groups;
  const std::int64_t out_len = (len - 1) * 2 - 2 + k;  // 18
  const auto w = test::iota_values(static_cast<std::size_t>(c * opg * k), 0.1f, -0.5f);
  ModelBuilder m(13);
  m.input("x", {n, c, len}).output("y", {"n", "c", "l"}).weight("w", {c, opg, k}, w);
  m.node("ConvTranspose", {"x", "w"}, {"y"}, {{"group", groups}},
         {{"strides", {2}}, {"pads", {1, 1}}});
  for (int p : {1, 2, 4}) {
    const auto r = import_and_eval(m, p);
    const Dense x = r.tensor("x");
    Dense want({n, oc, out_len});
    const std::int64_t icg = c / groups;
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t ci = 0; ci < c; ++ci)
        for (std::int64_t ix = 0; ix < len; ++ix)
          for (std::int64_t j = 0; j < opg; ++j)
            for (std::int64_t t = 0; t < k; ++t) {
              const std::int64_t q = ix * 2 - 1 + t;
              if (q < 0 || q >= out_len) continue;
              want[{i, (ci / icg) * opg + j, q}] +=
                  w[static_cast<std::size_t>((ci * opg + j) * k + t)] * x[{i, ci, ix}];
            }
    EXPECT_LT(max_abs_diff(r.tensor("y"), want), 1e-9) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.total_flops,
                     2.0 * icg * k / 2 * static_cast<double>(n * oc * out_len));
  }
  ModelBuilder up(13);
  up.input("x", {n, c, len}).output("y", {"n", "c", "l"}).weight("scales", {3}, {1, 1, 1.5f});
  up.node("Resize", {"x", "", "scales"}, {"y"});
  up.attr("mode", "linear");
  const auto r = import_and_eval(up, 2);
  const Dense x = r.tensor("x"), y = r.tensor("y");
  ASSERT_EQ(y.shape, (std::vector<std::int64_t>{n, c, 13}));  // floor(9 x 1.5)
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t ci = 0; ci < c; ++ci)
      for (std::int64_t q = 0; q < 13; ++q) {
        const double s = std::clamp((q + 0.5) / 1.5 - 0.5, 0.0, static_cast<double>(len - 1));
        const auto i0 = static_cast<std::int64_t>(s);
        const std::int64_t i1 = std::min(i0 + 1, len - 1);
        const double f = s - static_cast<double>(i0);
        const double want = (1 - f) * x[{i, ci, i0}] + f * x[{i, ci, i1}];
        EXPECT_NEAR((y[{i, ci, q}]), want, 1e-12);
      }
}

TEST(ConvTransposeImport, MalformedModelsAreOneLineErrors) {
  const auto error =
      [](const std::vector<std::int64_t>& x, const std::vector<std::int64_t>& w,
         const std::vector<std::pair<std::string, std::vector<std::int64_t>>>& ints) {
        ModelBuilder m(13);
        m.input("x", std::vector<test::Dim>(x.begin(), x.end())).output("y", {"n", "c", "h", "w"});
        std::int64_t count = 1;
        for (auto d : w) count *= d;
        m.weight("w", w, std::vector<float>(static_cast<std::size_t>(count), 1));
        m.node("ConvTranspose", {"x", "w"}, {"y"}, {}, ints);
        return import_error(m);
      };
  const auto node = [](const std::string& problem) {
    return "bad.onnx: " + problem + " (node ConvTranspose_1 (ConvTranspose))";
  };
  EXPECT_EQ(error({1, 3, 4, 4}, {2, 2, 3, 3}, {}),
            node("the weight has 2 input channels for an input of 3 in 1 groups"));
  EXPECT_EQ(error({1, 2, 4, 4}, {2, 2, 3, 3}, {{"output_shape", {12, 4}}}),
            node("output_shape 12 is beyond the transposed convolution's extent 6"));
  EXPECT_EQ(error({1, 2, 4, 4}, {2, 2, 3, 3}, {{"pads", {3, 3, 3, 3}}}),
            node("the padding leaves an empty output"));
}

}  // namespace
}  // namespace doppler
