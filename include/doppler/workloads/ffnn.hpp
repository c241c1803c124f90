#pragma once
// ffnn: y = softmax(relu(x W1) W2) over rows, with an optional backward pass (docs/workloads.md).
#include <cstdint>

#include "doppler/graph/graph.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

/// Sizes and partitioning of ffnn: x [batch, dim], W1 [dim, hidden], W2 [hidden, dim].
struct FfnnParams {
  std::int64_t batch = 32768;      ///< rows of x
  std::int64_t dim = 32;           ///< input and output features
  std::int64_t hidden = 65536;     ///< hidden features
  DType dtype = DType::f32;        ///< storage type
  bool training = false;           ///< add the backward pass from an upstream gradient "dy"
  std::int64_t batch_blocks = 16;  ///< row blocks of every op (<= batch)
  std::int64_t hidden_blocks = 2;  ///< blocks of the hidden axis (<= hidden)

  /// Default partitioning for `devices` devices: batch_blocks = 4P, hidden_blocks = 2 (clamped
  /// to the dimensions).
  void set_partition_for(int devices);
};

/// The ffnn graph (InputError on invalid parameters). Output "y"; with training also
/// "grad.x", "grad.w1", "grad.w2".
Graph generate_ffnn(const FfnnParams& p);

}  // namespace doppler::workloads
