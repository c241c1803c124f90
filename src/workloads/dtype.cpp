#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

int dtype_size(DType t) {
  return t == DType::f32 ? 4 : 2;
}

std::string_view dtype_name(DType t) {
  return t == DType::f32 ? "f32" : "f16";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "f32") return DType::f32;
  if (name == "f16") return DType::f16;
  return std::nullopt;
}

}  // namespace doppler::workloads
