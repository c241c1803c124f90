#pragma once
// A tensor stored as a grid of blocks (tensor-relational style): each dimension is cut into
// contiguous intervals, and every cell of the resulting grid is one graph node.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "doppler/graph/types.hpp"

namespace doppler::workloads {

/// Cut points of one dimension of extent n: 0 = c[0] < c[1] < ... < c[k] = n (k blocks).
using Cuts = std::vector<std::int64_t>;

/// `parts` nearly equal blocks of [0, extent): c[i] = floor(i * extent / parts), with parts
/// clamped to [1, extent]. even_cuts(n, k) refines even_cuts(n, j) whenever j divides k.
Cuts even_cuts(std::int64_t extent, std::int64_t parts);

/// Cuts for every dimension of `shape` from block counts `parts` (same length).
std::vector<Cuts> even_grid(const std::vector<std::int64_t>& shape,
                            const std::vector<std::int64_t>& parts);

/// The cuts of `length` elements taken `step` apart from [offset, ..) of an axis cut by `src`
/// (step < 0: from the far end, element i at offset + (length - 1 - i) |step|): a cut falls
/// before the first element read past a cut of `src`, so that each block reads within one block
/// of `src`. With step 1 these are src's cuts inside the region, shifted to it.
Cuts cuts_within(const Cuts& src, std::int64_t offset, std::int64_t length, std::int64_t step = 1);

/// True when every cut of `coarse` is also a cut of `fine` (each block of `fine` lies inside
/// one block of `coarse`).
bool cuts_refine(const Cuts& fine, const Cuts& coarse);

/// Product of the entries of `v` (1 when empty): elements of a shape, blocks of a grid.
std::int64_t product(const std::vector<std::int64_t>& v);

/// Block name "name[i,j,...]" of grid index `index`.
std::string block_name(const std::string& name, const std::vector<std::int64_t>& index);

/// Calls f(index) for every multi-index of `grid` (blocks per dimension), row-major; never
/// when some count is 0; once with an empty index for an empty grid.
template <class F>
void for_each_index(const std::vector<std::int64_t>& grid, F&& f) {
  std::vector<std::int64_t> idx(grid.size(), 0);
  for (auto g : grid)
    if (g <= 0) return;
  while (true) {
    f(idx);
    auto d = static_cast<std::ptrdiff_t>(grid.size()) - 1;
    for (; d >= 0; --d) {
      const auto du = static_cast<std::size_t>(d);
      if (++idx[du] < grid[du]) break;
      idx[du] = 0;
    }
    if (d < 0) return;
  }
}

/// A blocked tensor of a BlockedProgram. `blocks` lists the node of every grid cell in
/// row-major order; it is empty for an input whose layout is not fixed yet (see
/// BlockedProgram::input).
struct BlockedTensor {
  int id = -1;                      ///< index in its program
  std::string name;                 ///< tensor name; block nodes are named name[i,j,...]
  std::vector<std::int64_t> shape;  ///< full extents (elements per dimension)
  std::vector<Cuts> cuts;           ///< per dimension
  std::vector<NodeId> blocks;       ///< row-major over the block grid
  int group = -1;                   ///< tensor-op id of the blocks (aggregation for einsums)

  /// Number of dimensions.
  int rank() const { return static_cast<int>(shape.size()); }
  /// Blocks per dimension.
  std::vector<std::int64_t> grid() const;
  /// Total elements.
  std::int64_t numel() const;
  /// Index along dimension d of the block containing coordinate x.
  std::int64_t block_index(int d, std::int64_t x) const;
  /// Node of the block at grid index `index`.
  NodeId block(const std::vector<std::int64_t>& index) const;
};

}  // namespace doppler::workloads
