#pragma once
// chainmm: Y = C (D E) + A B with square n x n matrices, 3D-decomposed matmuls whose partial
// products are summed by aggregation blocks (docs/workloads.md).
#include <cstdint>

#include "doppler/graph/graph.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

/// Sizes and partitioning of chainmm. Y is a row_blocks x col_blocks grid; C (DE) and A B are
/// computed as row_blocks x col_blocks x inner_blocks partial products; X = D E is produced
/// directly in the layout C X reads it (inner_blocks x col_blocks) from de_inner_blocks
/// partial products per block.
struct ChainMMParams {
  std::int64_t n = 10000;            ///< matrix size (elements per side)
  DType dtype = DType::f32;          ///< storage type
  std::int64_t row_blocks = 4;       ///< blocks along Y's rows (<= n)
  std::int64_t col_blocks = 2;       ///< blocks along Y's columns (<= n)
  std::int64_t inner_blocks = 2;     ///< contraction blocks of C X and A B (<= n)
  std::int64_t de_inner_blocks = 4;  ///< contraction blocks of D E (<= n)

  /// The default partitioning for `devices` devices: col_blocks = the largest divisor of 2P not
  /// above sqrt(2P), row_blocks = 2P / col_blocks, inner_blocks = 2, de_inner_blocks =
  /// row_blocks (so every matmul has 4P partial products); each clamped to n.
  void set_partition_for(int devices);
};

/// The chainmm graph (throws InputError on invalid parameters, naming the parameter). Output
/// tensor "y"; inputs "A".."E".
Graph generate_chainmm(const ChainMMParams& p);

}  // namespace doppler::workloads
