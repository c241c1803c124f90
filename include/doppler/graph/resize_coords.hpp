#pragma once
// The source positions of the resize2d kernel (docs/exec.md, "resize2d"): which input rows and
// columns an output row or column reads, and with which weights. One definition for the blocked
// program (the input rows each output block reads), the CPU engine and the device path, which
// nvcc compiles for the GPU too: free of the project's other headers. Positions are computed in
// double, as ONNX's reference does, with no multiply-add a compiler could fuse differently.
#include <cmath>
#include <cstdint>

#if defined(__CUDACC__)
#define DOPPLER_RESIZE_HD __host__ __device__ inline
#else
#define DOPPLER_RESIZE_HD inline
#endif

namespace doppler::resize {

/// ONNX's coordinate_transformation_mode (the kernel's attribute `coord`).
enum class Coord : int {
  half_pixel = 0,                 ///< (x + 0.5) / scale - 0.5
  asymmetric = 1,                 ///< x / scale
  align_corners = 2,              ///< x (in - 1) / (out - 1); 0 when out = 1
  pytorch_half_pixel = 3,         ///< half_pixel, but 0 when out = 1
  tf_half_pixel_for_nearest = 4,  ///< (x + 0.5) / scale
};
/// Largest Coord value.
inline constexpr int kMaxCoord = 4;

/// ONNX's nearest_mode (attribute `nearest`): how a fractional position becomes an index.
enum class Rounding : int {
  round_prefer_floor = 0,  ///< to the nearest; halves down
  round_prefer_ceil = 1,   ///< to the nearest; halves up
  floor = 2,
  ceil = 3,
};
/// Largest Rounding value.
inline constexpr int kMaxRounding = 3;

/// One resized axis: `in` input positions become `out` output positions (both >= 1); `scale`
/// (> 0) is the model's scale, out / in when it gives sizes instead.
struct Axis {
  Coord coord = Coord::half_pixel;
  double scale = 1;
  std::int64_t in = 1, out = 1;
};

/// The input position output position x reads (may lie outside [0, in - 1]); nondecreasing in x.
DOPPLER_RESIZE_HD double source(const Axis& a, std::int64_t x) {
  const double xd = static_cast<double>(x);
  switch (a.coord) {
    case Coord::asymmetric:
      return xd / a.scale;
    case Coord::align_corners:
      return a.out == 1 ? 0.0 : xd * static_cast<double>(a.in - 1) / static_cast<double>(a.out - 1);
    case Coord::pytorch_half_pixel:
      return a.out == 1 ? 0.0 : (xd + 0.5) / a.scale - 0.5;
    case Coord::tf_half_pixel_for_nearest:
      return (xd + 0.5) / a.scale;
    case Coord::half_pixel:
    default:
      return (xd + 0.5) / a.scale - 0.5;
  }
}

/// i clamped into [0, n).
DOPPLER_RESIZE_HD std::int64_t clamp_index(std::int64_t i, std::int64_t n) {
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

/// Nearest mode: the input index of output position x, in [0, in).
DOPPLER_RESIZE_HD std::int64_t nearest(const Axis& a, Rounding r, std::int64_t x) {
  const double s = source(a, x);
  double i = 0;
  switch (r) {
    case Rounding::round_prefer_ceil:
      i = std::floor(s + 0.5);
      break;
    case Rounding::floor:
      i = std::floor(s);
      break;
    case Rounding::ceil:
      i = std::ceil(s);
      break;
    case Rounding::round_prefer_floor:
    default:
      i = std::ceil(s - 0.5);
      break;
  }
  // Clamp in double first: far outside positions must not overflow the conversion.
  const double hi = static_cast<double>(a.in - 1);
  return clamp_index(static_cast<std::int64_t>(i < 0 ? 0.0 : (i > hi ? hi : i)), a.in);
}

/// Linear mode: the two input indices output position x interpolates (i0 <= i1, both in [0,
/// in)) and the weight of i1 (that of i0 is 1 - w1); the position is clamped into [0, in - 1].
struct Taps {
  std::int64_t i0 = 0, i1 = 0;
  double w1 = 0;
};

DOPPLER_RESIZE_HD Taps linear(const Axis& a, std::int64_t x) {
  const double hi = static_cast<double>(a.in - 1);
  double s = source(a, x);
  s = s < 0 ? 0.0 : (s > hi ? hi : s);
  Taps t;
  t.i0 = static_cast<std::int64_t>(std::floor(s));
  t.i1 = t.i0 + 1 < a.in ? t.i0 + 1 : t.i0;
  t.w1 = s - static_cast<double>(t.i0);
  return t;
}

/// The input indices [lo, hi) that output positions [x0, x1) read (x0 < x1): nearest or linear
/// (`linear_mode`) with rounding `r`.
struct Span {
  std::int64_t lo = 0, hi = 0;
};

DOPPLER_RESIZE_HD Span input_span(const Axis& a, bool linear_mode, Rounding r, std::int64_t x0,
                                  std::int64_t x1) {
  if (linear_mode) return {linear(a, x0).i0, linear(a, x1 - 1).i1 + 1};
  return {nearest(a, r, x0), nearest(a, r, x1 - 1) + 1};
}

}  // namespace doppler::resize
