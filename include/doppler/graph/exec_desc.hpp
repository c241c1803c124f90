#pragma once
// Executable description of a block operation: enough for the engine to run it for real and for
// tests to evaluate a blocked program. Produced by the workload generators; the kernel names and
// their operand conventions are documented in docs/exec.md.
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "doppler/graph/types.hpp"

namespace doppler {

/// One operand of a block kernel: a region of a producer's output block.
struct ExecInput {
  NodeId src = 0;                    ///< producer node (an edge src -> this node exists)
  std::vector<std::int64_t> offset;  ///< start of the region in src's block; empty = whole block
  std::vector<std::int64_t> shape;   ///< extent of the region; empty = whole block

  friend bool operator==(const ExecInput&, const ExecInput&) = default;
};

/// How to execute one block: kernel name, output block shape, operands and scalar attributes.
struct ExecDesc {
  std::string op;                    ///< kernel name, e.g. "einsum", "sum", "relu", "input"
  std::vector<std::int64_t> shape;   ///< output block shape (elements per dimension, row-major)
  std::vector<std::int64_t> origin;  ///< offset of this block inside its full tensor
  std::vector<ExecInput> inputs;     ///< operands in kernel order
  std::string einsum;                ///< contraction for op "einsum" ("ij,jk->ik"), permutation for
                                     ///< op "transpose" ("abc->cab")
  std::vector<std::pair<std::string, double>> attrs;  ///< named scalars (scale, eps, seed, ...)

  /// Value of attribute `name`, or `fallback` when absent.
  double attr(std::string_view name, double fallback) const {
    for (const auto& [k, v] : attrs)
      if (k == name) return v;
    return fallback;
  }
  /// Number of elements of the output block.
  std::int64_t numel() const {
    std::int64_t n = 1;
    for (auto d : shape) n *= d;
    return n;
  }

  friend bool operator==(const ExecDesc&, const ExecDesc&) = default;
};

}  // namespace doppler
