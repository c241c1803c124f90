#pragma once
// `doppler execute --save NAME=FILE.npy`: finding the blocks of a named tensor in a graph (by
// their labels "NAME[i,j]" or "agg:NAME[i,j]") and reassembling the tensor from the engine's
// block outputs.
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"

namespace doppler::cli {

/// One `--save NAME=FILE` request.
struct TensorSave {
  std::string name;  ///< tensor name
  std::string file;  ///< output .npy path
};

/// Parses "NAME=FILE" (split at the first '='; both non-empty), InputError otherwise.
TensorSave parse_tensor_save(const std::string& spec);

/// The tensor name of a block label "NAME[i,j,...]" (a bracketed, possibly empty, list of
/// non-negative integers at the end), "agg:" prefix included; nullopt for any other label.
std::optional<std::string> tensor_of_label(const std::string& label);

/// The blocks that hold one tensor and its full shape.
struct TensorBlocks {
  std::string name;                 ///< tensor name
  std::vector<NodeId> blocks;       ///< nodes whose outputs tile the tensor
  std::vector<std::int64_t> shape;  ///< full shape: max of origin + shape per dimension
};

/// The blocks of tensor `name` in `g`: the nodes labelled "agg:NAME[...]" when there are any,
/// else those labelled "NAME[...]". InputError (naming `graph_file` and a few tensors of the
/// graph) when there is none or a block has no exec description; std::runtime_error naming the
/// tensor when the blocks' origin/shape disagree in rank or do not tile the tensor exactly once.
TensorBlocks find_tensor_blocks(const Graph& g, const std::string& name,
                                const std::string& graph_file);

/// The full tensor (row-major) assembled from `output(v)`, the output of each block v, which
/// must hold the block's exec shape's element count (std::runtime_error otherwise).
std::vector<float> assemble_tensor(const Graph& g, const TensorBlocks& t,
                                   const std::function<std::span<const float>(NodeId)>& output);

}  // namespace doppler::cli
