#pragma once
// A named tensor of constant values (model weights) stored in a Graph and read by `load`
// kernels (docs/exec.md).
#include <cstdint>
#include <string>
#include <vector>

namespace doppler {

/// A dense f32 tensor: `values` holds product(shape) elements in row-major order (a rank-0
/// tensor has one). Every extent is >= 0.
struct ConstantTensor {
  std::string name;                 ///< e.g. the ONNX initializer's name (may be empty)
  std::vector<std::int64_t> shape;  ///< extents, row-major
  std::vector<float> values;        ///< product(shape) values, row-major

  friend bool operator==(const ConstantTensor&, const ConstantTensor&) = default;
};

}  // namespace doppler
