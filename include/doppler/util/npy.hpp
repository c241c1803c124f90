#pragma once
// NumPy .npy files (format versions 1.0, 2.0 and 3.0): a strict reader that converts the
// supported dtypes to f32, and an atomic f32 writer. The format:
// https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace doppler {

/// An n-dimensional array read from a .npy file, in C (row-major) order.
struct NpyArray {
  std::vector<std::int64_t> shape;  ///< extent of each dimension (empty for a 0-d array)
  std::vector<float> values;        ///< product(shape) values (one for a 0-d array)
};

/// Largest header (the dict literal with its padding) read_npy() accepts, in bytes.
inline constexpr std::uint32_t kMaxNpyHeaderBytes = 1u << 16;
/// Largest rank read_npy() accepts (NumPy's own limit is 64).
inline constexpr std::size_t kMaxNpyRank = 64;

/// Parses the bytes of a .npy file; `name` (usually the path) prefixes error messages. Accepts
/// format versions 1.0, 2.0 and 3.0, C order only, dtypes <f4, <f8, <i8, <i4, |b1 and |u1
/// (converted to float; booleans become 0 or 1) and 0-d arrays. The header must be the dict
/// literal NumPy writes: exactly the keys 'descr', 'fortran_order' and 'shape', each once.
/// Throws InputError "NAME: problem" on a malformed header, an unsupported dtype or layout, or
/// data shorter or longer than the shape says.
NpyArray parse_npy(std::string_view bytes, const std::string& name);

/// Reads a .npy file with parse_npy(); the file size is limited by read_limits()
/// (DOPPLER_MAX_FILE_BYTES). Throws InputError "PATH: problem".
NpyArray read_npy(const std::string& path);

/// The bytes of a .npy file (format 1.0, dtype <f4, C order) holding `values` with `shape`.
/// Throws std::invalid_argument when values.size() is not the product of `shape` or an extent is
/// negative.
std::string format_npy(const std::vector<std::int64_t>& shape, std::span<const float> values);

/// Writes format_npy(shape, values) to `path` atomically. Throws InputError naming the path
/// when it cannot be written.
void write_npy(const std::string& path, const std::vector<std::int64_t>& shape,
               std::span<const float> values);

}  // namespace doppler
