#pragma once
// Test-only, independent implementation of docs/exec.md: evaluates a generated graph block by
// block on the CPU, and assembles full tensors from blocks. Shares no code with the library's
// workload generators (only the Graph / ExecDesc data types).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler::test {

/// A dense row-major tensor of doubles.
struct Dense {
  std::vector<std::int64_t> shape;
  std::vector<double> data;

  Dense() = default;
  explicit Dense(std::vector<std::int64_t> s, double fill = 0);
  std::int64_t numel() const;
  /// Flat offset of a multi-index.
  std::int64_t at(const std::vector<std::int64_t>& idx) const;
  double& operator[](const std::vector<std::int64_t>& idx) {
    return data[static_cast<std::size_t>(at(idx))];
  }
  double operator[](const std::vector<std::int64_t>& idx) const {
    return data[static_cast<std::size_t>(at(idx))];
  }
  /// Element (i, j) of a rank-2 tensor.
  double& operator()(std::int64_t i, std::int64_t j) {
    return data[static_cast<std::size_t>(i * shape[1] + j)];
  }
  double operator()(std::int64_t i, std::int64_t j) const {
    return data[static_cast<std::size_t>(i * shape[1] + j)];
  }
};

/// The documented input value function (splitmix64 chain), written from docs/exec.md.
double doc_input_unit(std::uint64_t seed, const std::vector<std::int64_t>& coord);

/// Evaluates every node with an exec description, in topological order. With `round_f32`
/// every block result is rounded to float (an f32 engine's storage).
std::vector<Dense> evaluate_blocks(const Graph& g, bool round_f32);

/// The full tensor `name` assembled from its blocks (nodes "agg:name[...]" when there are
/// any, else "name[...]"), placed by their exec origin; fails the test unless the blocks tile
/// the tensor exactly once.
Dense assemble_tensor(const Graph& g, const std::vector<Dense>& values, const std::string& name);

/// Norm-wise relative error ||a - b|| / ||b|| (infinite when shapes differ).
double relative_error(const Dense& a, const Dense& b);

}  // namespace doppler::test
