#pragma once
// The block kernels an ExecDesc may name (docs/exec.md is the normative description): their
// operand counts, the kind of node they produce and their FLOP counts, plus the deterministic
// input-value function every engine and test must reproduce.
#include <cstdint>
#include <span>
#include <string_view>

#include "doppler/graph/op_kind.hpp"

namespace doppler::workloads {

/// Static facts about one kernel.
struct KernelInfo {
  std::string_view name;       ///< kernel name used in ExecDesc::op
  OpKind kind;                 ///< kind of the nodes that run it
  int arity;                   ///< number of operands; -1 = one or more (sum, max, assemble)
  double flops_per_element;    ///< FLOPs per output element (elementwise), per input element
                               ///< (reductions), per iteration point (einsum) or per element
                               ///< and extra operand (sum, max)
  std::string_view semantics;  ///< one-line description
};

/// Every kernel, in the order docs/exec.md lists them.
std::span<const KernelInfo> kernels();

/// The kernel named `name`, or nullptr when there is none.
const KernelInfo* find_kernel(std::string_view name);

/// Deterministic pseudo-random value in [-1, 1) of the element at global coordinates `coord`
/// of an input tensor with seed `seed` (splitmix64 chain, docs/exec.md "input"). It depends
/// only on (seed, coord), so every block can generate its part without the full shape.
double input_unit_value(std::uint64_t seed, std::span<const std::int64_t> coord);

/// input_unit_value split before its last coordinate, for filling a block row by row: the chain
/// over the seed and the leading coordinates `lead` (every coordinate but the last), once per row.
std::uint64_t input_row_hash(std::uint64_t seed, std::span<const std::int64_t> lead);

/// The value of the element at last coordinate `last` of the row whose chain is `row_hash`:
/// input_unit_value(seed, lead + {last}) == input_unit_at(input_row_hash(seed, lead), last).
double input_unit_at(std::uint64_t row_hash, std::int64_t last);

/// One splitmix64 step (add the golden gamma, then mix), as docs/exec.md writes it.
std::uint64_t splitmix64(std::uint64_t z);

}  // namespace doppler::workloads
