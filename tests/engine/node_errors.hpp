#pragma once
// Node-wise errors of whole-graph outputs, as `execute --verify` measures them, shared by the
// host emulations of Tensor Core math (test_tensor_core_error.cpp) and of bf16 tensors
// (test_bf16_storage.cpp).
#include <string>
#include <vector>

#include "engine_support.hpp"

#include "doppler/graph/graph.hpp"

namespace doppler::test {

/// Norm-wise relative L2 error of `got` against `want` (apps/doppler/cmd_execute.cpp's
/// rel_error, which --verify applies per node); elements equal on both sides add nothing.
double relative_error(const std::vector<float>& got, const std::vector<float>& want);

/// A graph's largest node error and that node's name.
struct WorstNode {
  double error = 0;
  std::string name;
};

/// The largest node error of `got` against `want` (every node's output, by node id).
WorstNode worst_node(const Graph& g, const std::vector<std::vector<float>>& got,
                     const std::vector<std::vector<float>>& want);

/// The small suite's Llama layer at 4x its width (dim 256, 4 heads, FFN 512, seq 128, 2
/// devices), labelled "llama-layer-256".
SmallWorkload wide_llama_layer();

}  // namespace doppler::test
