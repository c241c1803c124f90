// LocalResponseNormalization (the LRN of AlexNet-era models: the ONNX model zoo's AlexNet,
// CaffeNet, GoogLeNet, ZFNet) as existing kernels (docs/onnx.md): y = x (bias + alpha / size
// sum of x^2 over `size` neighbouring channels)^-beta, the channel sum an average pool of the
// squares over channels (x viewed [N, 1, C, rest]: the channels are an image's rows, so the
// partition cuts them with their halo).
#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

void Lowerer::lrn(const onnx::NodeProto& n) {
  const Shape x = in(n, 0).shape;
  if (x.size() < 3) throw std::runtime_error("LRN of a tensor of rank below 3");
  const std::int64_t size = attr_int(n, "size", 0);
  if (size < 1) throw std::runtime_error("LRN: size must be a positive integer");
  const double alpha = attr_float(n, "alpha", 1e-4), beta = attr_float(n, "beta", 0.75);
  const double bias = attr_float(n, "bias", 1.0);
  if (!std::isfinite(alpha) || !std::isfinite(beta) || !std::isfinite(bias))
    throw std::runtime_error("LRN: alpha, beta and bias must be finite");
  std::int64_t rest = 1;
  for (std::size_t d = 2; d < x.size(); ++d) rest *= x[d];
  const auto& sq = map(out(n, ":sq"), "mul", {&blocked(n, 0), &blocked(n, 0)});
  define(out(n, ":rows"), reshaped(out(n, ":rows"), sq, {x[0], 1, x[1], rest}));
  onnx::NodeProto window;  // the mean of `size` channels, the missing ones counted as zeros
  window.set_op_type("AveragePool");
  window.set_name(n.name() + ":channels");
  window.add_input(out(n, ":rows"));
  window.add_output(out(n, ":mean"));
  const auto ints = [&](const char* name, std::vector<std::int64_t> v) {
    auto* a = window.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto e : v) a->add_ints(e);
  };
  ints("kernel_shape", {size, 1});
  ints("pads", {(size - 1) / 2, 0, size / 2, 0});
  auto* inc = window.add_attribute();
  inc->set_name("count_include_pad");
  inc->set_type(onnx::AttributeProto::INT);
  inc->set_i(1);
  pool(window);
  const auto& mean = reshaped(out(n, ":means"), *values_.at(out(n, ":mean")).blocked, x);
  const auto& scaled = map(out(n, ":scaled"), "scale", {&mean}, {{"scale", alpha}});
  const auto& shift = load(out(n, ":bias"), HostTensor{{1}, {bias}, false});
  const auto& shifted = map(out(n, ":shifted"), "add", {&scaled, &shift});
  const auto& factor = map(out(n, ":factor"), "pow", {&shifted}, {{"exponent", -beta}});
  define(n.output(0), map(out(n), "mul", {&blocked(n, 0), &factor}));
}

}  // namespace doppler::onnx_import
