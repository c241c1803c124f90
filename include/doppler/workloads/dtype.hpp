#pragma once
// Element type of a generated graph's tensors. It only sets sizes in bytes: the CPU engine
// computes and stores every kernel in f32 whatever the dtype (docs/exec.md); the CUDA engine
// stores bf16 with `--gpu-dtype bf16`, whose sizes a bf16 graph has.
#include <optional>
#include <string_view>

namespace doppler::workloads {

/// Storage type of every tensor of a generated graph.
enum class DType {
  f32,   ///< 4 bytes per element
  f16,   ///< 2 bytes per element
  bf16,  ///< 2 bytes per element
};

/// Bytes per element of `t` (f32: 4, f16 and bf16: 2).
int dtype_size(DType t);

/// "f32", "f16" or "bf16".
std::string_view dtype_name(DType t);

/// Parses "f32" / "f16" / "bf16"; nullopt otherwise.
std::optional<DType> parse_dtype(std::string_view name);

}  // namespace doppler::workloads
