#pragma once
// Internal: strided views of f32 blocks and loops over them (row by row, innermost dimension
// last), used by every kernel.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

namespace doppler::engine_detail {

/// Extents or strides, one per dimension (elements).
using Dims = std::vector<std::int64_t>;

/// Largest rank of a block or view the kernels accept.
inline constexpr std::size_t kMaxRank = 16;

/// Row-major strides of a contiguous block of `shape`.
Dims contiguous_strides(const Dims& shape);
/// Product of the extents (1 for rank 0).
std::int64_t numel_of(const Dims& shape);

/// `shape` with extents of 1 dropped and each pair of adjacent dimensions that every view walks
/// as one (outer stride = inner stride x inner extent) merged, each view's strides in `views`
/// (one per dimension of `shape`) rewritten to match: element i in row-major order has the same
/// offset in every view, with fewer dimensions to divide i by. A contiguous view of any shape
/// becomes one dimension; a transposed one keeps its two.
Dims coalesce_dims(const Dims& shape, std::span<Dims* const> views);

/// Calls f(offsets, length, inner_strides) once per innermost row of `shape`, where offsets[k]
/// is the element offset of the row's first element in operand k (strides[k]) and
/// inner_strides[k] its stride along the innermost dimension. Rank 0 is one row of length 1;
/// rank <= kMaxRank (checked when plans are compiled).
template <std::size_t K, class F>
void for_each_row(const Dims& shape, const std::array<const Dims*, K>& strides, F&& f) {
  const std::size_t rank = shape.size();
  std::array<std::int64_t, K> off{}, inner{};
  if (rank == 0) {
    f(off, std::int64_t{1}, inner);
    return;
  }
  for (std::size_t k = 0; k < K; ++k) inner[k] = (*strides[k])[rank - 1];
  const std::int64_t len = shape[rank - 1];
  for (auto e : shape)
    if (e == 0) return;
  std::array<std::int64_t, kMaxRank> idx{};
  while (true) {
    f(off, len, inner);
    std::size_t d = rank - 1;
    while (true) {
      if (d == 0) return;
      --d;
      ++idx[d];
      for (std::size_t k = 0; k < K; ++k) off[k] += (*strides[k])[d];
      if (idx[d] < shape[d]) break;
      for (std::size_t k = 0; k < K; ++k) off[k] -= (*strides[k])[d] * shape[d];
      idx[d] = 0;
    }
  }
}

/// Copies the `shape` elements of a strided source to a strided destination.
void copy_strided(const float* src, const Dims& src_strides, float* dst, const Dims& dst_strides,
                  const Dims& shape);

}  // namespace doppler::engine_detail
