#include "doppler/workloads/layers.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

namespace doppler::workloads {

std::pair<std::int64_t, std::int64_t> token_parts(std::int64_t batch, std::int64_t seq,
                                                  std::int64_t parts) {
  const std::int64_t kb = std::gcd(std::max<std::int64_t>(parts, 1), batch);
  return {kb, std::min(std::max<std::int64_t>(parts, 1) / kb, seq)};
}

RmsNorm rmsnorm(BlockedProgram& p, const std::string& name, const BlockedTensor& x, double eps) {
  RmsNorm n;
  n.eps = eps;
  n.x = &x;
  const auto d = x.shape.back();
  n.g = &p.input(name + ".g", {d}, 0.1, 1.0);
  n.ss = &p.reduce(name + ".ss", "reduce_sumsq", x);
  n.r = &p.map(name + ".rsqrt", "rsqrt", {n.ss}, n.ss->cuts,
               {{"scale", 1.0 / static_cast<double>(d)}, {"eps", eps}});
  n.xr = &p.map(name + ".xr", "mul", {&x, n.r}, x.cuts);
  n.y = &p.map(name, "mul", {n.xr, n.g}, x.cuts);
  return n;
}

const BlockedTensor& rmsnorm_backward(BlockedProgram& p, const std::string& name, const RmsNorm& n,
                                      const BlockedTensor& dy) {
  const std::string gn = "grad." + name;
  const auto& cuts = n.y->cuts;
  // y = xr * g (g broadcast over the leading axes).
  const auto& dxr = p.map(gn + ".xr", "mul", {&dy, n.g}, cuts);
  std::string labels = "abcdefgh";
  labels.resize(static_cast<std::size_t>(n.y->rank()));
  p.einsum(gn + ".g", labels + "," + labels + "->" + labels.back(), {&dy, n.xr},
           BlockedProgram::label_cuts(*n.y, labels));
  // xr = x * r (r broadcast over the last axis).
  const auto& dx_direct = p.map(gn + ".x_direct", "mul", {&dxr, n.r}, n.x->cuts);
  const auto& dxr_x = p.map(gn + ".xr_x", "mul", {&dxr, n.x}, n.x->cuts);
  const auto& dr = p.reduce(gn + ".rsqrt", "reduce_sum", dxr_x);
  // r = (ss / d + eps)^(-1/2), ss = sum(x^2).
  const auto d = static_cast<double>(n.x->shape.back());
  const auto& dss = p.map(gn + ".ss", "rsqrt_grad", {&dr, n.ss}, n.ss->cuts,
                          {{"scale", 1.0 / d}, {"eps", n.eps}});
  const auto& dx_ss = p.map(gn + ".x_ss", "sumsq_grad", {&dss, n.x}, n.x->cuts);
  return p.map(gn + ".x", "add", {&dx_direct, &dx_ss}, n.x->cuts);
}

const BlockedTensor& softmax(BlockedProgram& p, const std::string& name, const BlockedTensor& x) {
  const auto& mx = p.reduce(name + ".max", "reduce_max", x);
  const auto& sh = p.map(name + ".sub", "sub", {&x, &mx}, x.cuts);
  const auto& ex = p.map(name + ".exp", "exp", {&sh}, x.cuts);
  const auto& sm = p.reduce(name + ".sum", "reduce_sum", ex);
  return p.map(name, "div", {&ex, &sm}, x.cuts);
}

const BlockedTensor& softmax_backward(BlockedProgram& p, const std::string& name,
                                      const BlockedTensor& y, const BlockedTensor& dy) {
  const auto& t = p.map(name + ".dy_y", "mul", {&dy, &y}, y.cuts);
  const auto& s = p.reduce(name + ".dot", "reduce_sum", t);
  const auto& c = p.map(name + ".centered", "sub", {&dy, &s}, y.cuts);
  return p.map(name, "mul", {&c, &y}, y.cuts);
}

const BlockedTensor& einsum_grad(BlockedProgram& p, const std::string& name,
                                 const std::string& spec, int which, const BlockedTensor& dc,
                                 const BlockedTensor& other, const LabelCuts& cuts) {
  const auto comma = spec.find(','), arrow = spec.find("->");
  if (comma == std::string::npos || arrow == std::string::npos)
    throw std::logic_error("einsum_grad: binary spec expected: " + spec);
  const std::string a = spec.substr(0, comma), b = spec.substr(comma + 1, arrow - comma - 1),
                    c = spec.substr(arrow + 2);
  const std::string g = which == 0 ? c + "," + b + "->" + a : c + "," + a + "->" + b;
  return p.einsum(name, g, {&dc, &other}, cuts);
}

}  // namespace doppler::workloads
