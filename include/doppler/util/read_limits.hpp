#pragma once
// Limits every reader enforces, so that a huge or corrupted input fails with a one-line
// "FILE:LINE: problem" error instead of exhausting memory or time. The defaults can be changed
// per process with environment variables (documented in docs/robustness.md):
//   DOPPLER_MAX_OPS        ops (nodes) per graph and entries per assignment (default 5,000,000)
//   DOPPLER_MAX_EDGES      edges per graph (default 50,000,000)
//   DOPPLER_MAX_FILE_BYTES bytes per input file (default 4 GiB)
//   DOPPLER_MAX_CONSTANT_BYTES bytes of constant tensors per graph (default 4 GiB)
#include <cstdint>

namespace doppler {

/// Size limits of the readers.
struct ReadLimits {
  std::int64_t max_ops = 5'000'000;               ///< nodes per graph, entries per assignment
  std::int64_t max_edges = 50'000'000;            ///< edges per graph (before duplicates collapse)
  std::uint64_t max_file_bytes = 1ULL << 32;      ///< bytes per input file
  std::uint64_t max_constant_bytes = 1ULL << 32;  ///< decoded constant-tensor bytes per graph

  /// The built-in defaults above.
  static ReadLimits defaults() { return {}; }
  /// The defaults, overridden by DOPPLER_MAX_OPS, DOPPLER_MAX_EDGES, DOPPLER_MAX_FILE_BYTES and
  /// DOPPLER_MAX_CONSTANT_BYTES when set. Throws InputError naming the variable when a value is not
  /// an integer in range (ops and edges 1..2147483646, file bytes >= 1, constant bytes >= 0).
  static ReadLimits from_environment();
};

/// The limits in effect for this process: ReadLimits::from_environment().
ReadLimits read_limits();

/// Largest nesting depth of arrays and objects accepted in a JSON document.
inline constexpr int kMaxJsonDepth = 256;

}  // namespace doppler
