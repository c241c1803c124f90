#include "doppler/workloads/ffnn.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/layers.hpp"
#include "doppler/workloads/param_checks.hpp"

namespace doppler::workloads {

namespace {
constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
}  // namespace

void FfnnParams::set_partition_for(int devices) {
  batch_blocks = std::min<std::int64_t>(4 * static_cast<std::int64_t>(std::max(devices, 1)), batch);
  hidden_blocks = std::min<std::int64_t>(2, hidden);
}

Graph generate_ffnn(const FfnnParams& p) {
  require_range("batch", p.batch, kMaxDim);
  require_range("dim", p.dim, kMaxDim);
  require_range("hidden", p.hidden, kMaxDim);
  require_blocks("batch_blocks", p.batch_blocks, "batch", p.batch);
  require_blocks("hidden_blocks", p.hidden_blocks, "hidden", p.hidden);
  BlockedProgram prog(p.dtype);
  const Cuts rows = even_cuts(p.batch, p.batch_blocks), hid = even_cuts(p.hidden, p.hidden_blocks);
  const Cuts whole_dim{0, p.dim};
  const auto& x = prog.input("x", {p.batch, p.dim}, 1.0, 0.0, {rows, whole_dim});
  const auto& w1 = prog.input("w1", {p.dim, p.hidden}, 1.0 / std::sqrt(static_cast<double>(p.dim)));
  const auto& w2 =
      prog.input("w2", {p.hidden, p.dim}, 1.0 / std::sqrt(static_cast<double>(p.hidden)));
  const LabelCuts cuts1 = {{'b', rows}, {'h', hid}};
  const auto& h = prog.einsum("hidden", "bd,dh->bh", {&x, &w1}, cuts1);
  const auto& r = prog.map("relu", "relu", {&h}, h.cuts);
  const LabelCuts cuts2 = {{'b', rows}, {'h', hid}};
  const auto& z = prog.einsum("out", "bh,hd->bd", {&r, &w2}, cuts2);
  const auto& y = softmax(prog, "y", z);
  if (p.training) {
    const auto& dy = prog.input("dy", {p.batch, p.dim}, 1.0, 0.0, y.cuts);
    const auto& dz = softmax_backward(prog, "grad.out", y, dy);
    einsum_grad(prog, "grad.w2", "bh,hd->bd", 1, dz, r, cuts2);
    const auto& dr = einsum_grad(prog, "grad.relu", "bh,hd->bd", 0, dz, w2, cuts2);
    const auto& dh = prog.map("grad.hidden", "relu_grad", {&dr, &h}, h.cuts);
    einsum_grad(prog, "grad.w1", "bd,dh->bh", 1, dh, x, cuts1);
    einsum_grad(prog, "grad.x", "bd,dh->bh", 0, dh, w1, cuts1);
  }
  GraphMeta meta;
  meta.name = "ffnn";
  meta.origin = "generated";
  meta.params = {{"batch", std::to_string(p.batch)},
                 {"dim", std::to_string(p.dim)},
                 {"hidden", std::to_string(p.hidden)},
                 {"dtype", std::string(dtype_name(p.dtype))},
                 {"training", p.training ? "true" : "false"},
                 {"batch_blocks", std::to_string(p.batch_blocks)},
                 {"hidden_blocks", std::to_string(p.hidden_blocks)}};
  return prog.build(std::move(meta));
}

}  // namespace doppler::workloads
