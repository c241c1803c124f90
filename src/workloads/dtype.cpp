#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

int dtype_size(DType t) {
  return t == DType::f32 ? 4 : 2;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    default:
      return "f32";
  }
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  return std::nullopt;
}

}  // namespace doppler::workloads
