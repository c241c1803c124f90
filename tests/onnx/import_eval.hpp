#pragma once
// Test helper: import a hand-built ONNX model and evaluate its blocks with the independent
// evaluator of docs/exec.md (tests/workloads/block_eval.hpp).
#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "onnx/model_builder.hpp"
#include "workloads/block_eval.hpp"

#include "doppler/onnx/import.hpp"
#include "doppler/util/error.hpp"

namespace doppler::test {

/// `n` deterministic weights offset + scale * ((i * 7) mod 11), i = 0..n-1.
inline std::vector<float> iota_values(std::size_t n, float scale, float offset) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = offset + scale * static_cast<float>((i * 7) % 11);
  return v;
}

/// The largest |a - b| over the elements; infinite when the shapes differ or a difference is NaN.
inline double max_abs_diff(const Dense& a, const Dense& b) {
  if (a.shape != b.shape) return INFINITY;
  double m = 0;
  for (std::size_t i = 0; i < a.data.size(); ++i) {
    const double e = std::abs(a.data[i] - b.data[i]);
    m = std::isnan(e) ? INFINITY : std::max(m, e);
  }
  return m;
}

/// An imported model and the value of every block.
struct Evaluated {
  onnx_import::ImportResult res;
  std::vector<Dense> values;
  /// The full tensor `name`, reassembled from its blocks.
  Dense tensor(const std::string& name) const { return assemble_tensor(res.graph, values, name); }
};

/// Imports `m` (as "m.onnx") for `devices` devices with `partition` overrides and evaluates it.
inline Evaluated import_and_eval(const ModelBuilder& m, int devices,
                                 std::map<std::string, std::vector<std::int64_t>> partition = {}) {
  onnx_import::ImportOptions o;
  o.devices = devices;
  o.partition = std::move(partition);
  Evaluated e{onnx_import::import_onnx_bytes(m.bytes(), "m.onnx", o), {}};
  e.values = evaluate_blocks(e.res.graph, false);
  return e;
}

/// The one-line error of importing `m` as "bad.onnx" for 2 devices, or "no error".
inline std::string import_error(const ModelBuilder& m) {
  onnx_import::ImportOptions o;
  o.devices = 2;
  try {
    onnx_import::import_onnx_bytes(m.bytes(), "bad.onnx", o);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace doppler::test
