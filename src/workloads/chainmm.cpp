#include "doppler/workloads/chainmm.hpp"

#include <algorithm>
#include <string>

#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/param_checks.hpp"

namespace doppler::workloads {

namespace {
constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
}  // namespace

void ChainMMParams::set_partition_for(int devices) {
  const std::int64_t two_p = 2 * static_cast<std::int64_t>(std::max(devices, 1));
  col_blocks = largest_divisor_below_sqrt(two_p);
  row_blocks = two_p / col_blocks;
  inner_blocks = 2;
  de_inner_blocks = row_blocks;
  row_blocks = std::min(row_blocks, n);
  col_blocks = std::min(col_blocks, n);
  inner_blocks = std::min(inner_blocks, n);
  de_inner_blocks = std::min(de_inner_blocks, n);
}

Graph generate_chainmm(const ChainMMParams& p) {
  require_range("n", p.n, kMaxDim);
  require_blocks("row_blocks", p.row_blocks, "n", p.n);
  require_blocks("col_blocks", p.col_blocks, "n", p.n);
  require_blocks("inner_blocks", p.inner_blocks, "n", p.n);
  require_blocks("de_inner_blocks", p.de_inner_blocks, "n", p.n);
  BlockedProgram prog(p.dtype);
  const auto n = p.n;
  const Cuts rows = even_cuts(n, p.row_blocks), cols = even_cuts(n, p.col_blocks),
             inner = even_cuts(n, p.inner_blocks), de_inner = even_cuts(n, p.de_inner_blocks);
  const auto& a = prog.input("A", {n, n});
  const auto& b = prog.input("B", {n, n});
  const auto& c = prog.input("C", {n, n});
  const auto& d = prog.input("D", {n, n});
  const auto& e = prog.input("E", {n, n});
  // X = D E in the layout C X reads it: rows cut like the inner axis, columns like Y's.
  const auto& x =
      prog.einsum("de", "ij,jk->ik", {&d, &e}, {{'i', inner}, {'k', cols}, {'j', de_inner}});
  const auto& cx =
      prog.einsum("c_de", "ij,jk->ik", {&c, &x}, {{'i', rows}, {'k', cols}, {'j', inner}});
  const auto& ab =
      prog.einsum("ab", "ij,jk->ik", {&a, &b}, {{'i', rows}, {'k', cols}, {'j', inner}});
  prog.map("y", "add", {&cx, &ab}, {rows, cols});
  GraphMeta meta;
  meta.name = "chainmm";
  meta.origin = "generated";
  meta.params = {{"n", std::to_string(n)},
                 {"dtype", std::string(dtype_name(p.dtype))},
                 {"row_blocks", std::to_string(p.row_blocks)},
                 {"col_blocks", std::to_string(p.col_blocks)},
                 {"inner_blocks", std::to_string(p.inner_blocks)},
                 {"de_inner_blocks", std::to_string(p.de_inner_blocks)}};
  return prog.build(std::move(meta));
}

}  // namespace doppler::workloads
