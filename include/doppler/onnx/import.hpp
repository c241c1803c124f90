#pragma once
// Importing ONNX models (e.g. exported by torch.onnx.export) as blocked dataflow graphs
// (docs/onnx.md): the model is read with libonnx, its shapes inferred, shape subgraphs folded to
// constants, and every remaining op lowered to blocked tensor operations of workloads/ with real
// FLOPs, bytes and executable descriptions; weights become Graph constants read by "load" blocks.
#include <atomic>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::onnx_import {

/// How to import a model.
struct ImportOptions {
  int devices = 1;  ///< P: the auto partition aims at P blocks per op (>= 1)
  /// Every op one block (no partition): the graph still records `devices` (what place and
  /// compare default to), so whole ops are placed on them. `partition` overrides still apply.
  bool whole_ops = false;
  /// Block counts per output dimension for named tensors (ONNX tensor names), overriding the
  /// automatic rule for the op that produces them.
  std::map<std::string, std::vector<std::int64_t>> partition;
  workloads::DType dtype = workloads::DType::f32;  ///< storage type (sets bytes only)
  /// Shapes of graph inputs, replacing the model's (needed for dynamic dimensions).
  std::map<std::string, std::vector<std::int64_t>> input_shapes;
  /// Values of graph inputs from .npy files; inputs without one take generated values in
  /// [-1, 1) (kernel "input", seeded by `input_seeds` or else by the input's name).
  std::map<std::string, std::string> input_files;
  /// Seeds of generated graph inputs (kernel "input" attribute `seed`, below 2^53), by name.
  std::map<std::string, std::uint64_t> input_seeds;
  /// Weights read by blocks take generated values instead of the model's: kernel "input" seeded
  /// by the name, uniform with the weight's mean and standard deviation. A weight is a float
  /// tensor of more than 1,024 finite values, more than two of them distinct; the others
  /// (indices, masks, fills, small constants) keep their values. The graph has the same blocks,
  /// FLOPs and bytes and almost no constants: a small file for a large model placed without its
  /// values.
  bool generated_weights = false;
  /// When set and true, the import stops between two ONNX nodes (std::runtime_error): how a
  /// front end cancels a long import (Ctrl-C in Python). Optional.
  const std::atomic<bool>* cancel = nullptr;
};

/// What became of one ONNX node.
struct NodeReport {
  std::string name;                 ///< node name (or its first output's name)
  std::string op_type;              ///< ONNX op type
  std::vector<std::int64_t> shape;  ///< shape of its first output
  bool folded = false;              ///< evaluated at import (constant inputs)
  int blocks = 0;                   ///< graph nodes it created (relayouts included)
  double flops = 0;                 ///< FLOPs of those nodes
};

/// Summary of an import.
struct ImportReport {
  std::string model;                 ///< file name
  std::int64_t opset = 0;            ///< default-domain opset of the model
  std::string producer;              ///< producer_name producer_version
  int onnx_nodes = 0;                ///< nodes of the ONNX graph
  int folded_nodes = 0;              ///< of which folded to constants
  int blocks = 0;                    ///< nodes of the imported graph
  double total_flops = 0;            ///< sum of node FLOPs
  double einsum_flops = 0;           ///< FLOPs of the einsum blocks of MatMul, Gemm, LSTM, GRU, RNN
  double conv_flops = 0;             ///< FLOPs of the conv2d blocks of Conv (bias included)
  std::int64_t parameters = 0;       ///< elements of the weights loaded by blocks (not inputs)
  std::vector<std::string> outputs;  ///< graph output tensor names
  std::vector<NodeReport> nodes;     ///< per ONNX node, in graph order
};

/// A model imported as a graph.
struct ImportResult {
  Graph graph;
  ImportReport report;
};

/// Imports the ONNX model in file `path`. Throws InputError ("FILE: problem (node NAME)") for
/// unreadable or malformed files, unsupported ops (all listed, with counts), unsupported opsets,
/// dynamic dimensions without an override and shapes that do not agree.
ImportResult import_onnx(const std::string& path, const ImportOptions& options);

/// As import_onnx, from the serialized model `bytes`; `name` is used in messages.
ImportResult import_onnx_bytes(const std::string& bytes, const std::string& name,
                               const ImportOptions& options);

/// The ONNX op types the importer supports, sorted.
std::vector<std::string> supported_ops();

/// Parses a partition spec "auto" (empty map) or "TENSOR=2x1x4,OTHER=4" (block counts per
/// dimension); throws InputError on bad syntax.
std::map<std::string, std::vector<std::int64_t>> parse_partition(const std::string& spec);

}  // namespace doppler::onnx_import
