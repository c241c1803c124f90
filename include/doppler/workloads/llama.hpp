#pragma once
// llama-block / llama-layer: one Llama transformer block forward pass (optionally with its
// backward pass), or a full layer with causal mask, final norm, last-token selection and the
// vocabulary projection (docs/workloads.md).
#include <cstdint>

#include "doppler/graph/graph.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

/// Sizes and partitioning of the Llama graphs (defaults: Llama-7B).
struct LlamaParams {
  std::int64_t batch = 1;         ///< sequences
  std::int64_t seq = 4096;        ///< tokens per sequence
  std::int64_t dim = 4096;        ///< model width (a multiple of heads; dim / heads even)
  std::int64_t heads = 32;        ///< attention heads
  std::int64_t ffn = 11008;       ///< SwiGLU hidden width
  std::int64_t vocab = 32000;     ///< vocabulary (llama-layer and the whole model)
  DType dtype = DType::f16;       ///< storage type
  bool layer = false;             ///< llama-layer instead of llama-block
  bool training = false;          ///< add the backward pass (llama-block and the whole model)
  std::int64_t token_blocks = 4;  ///< token blocks of row-wise ops (<= batch * seq)
  std::int64_t head_blocks = 4;   ///< head blocks of projections and attention (<= heads)
  std::int64_t ffn_blocks = 4;    ///< blocks of the FFN hidden axis (<= ffn)
  std::int64_t inner_blocks = 2;  ///< contraction blocks of the weight projections (<= dim)
  std::int64_t vocab_blocks = 4;  ///< blocks of the vocabulary axis (<= vocab)

  /// Default partitioning for `devices` devices: token, head, FFN and vocabulary blocks = P,
  /// inner_blocks = 2 (each clamped to its dimension).
  void set_partition_for(int devices);
};

/// The graph (InputError on invalid parameters). Block output "y", layer output "logits";
/// with training also "grad.x" and grad.<weight> for every weight.
Graph generate_llama(const LlamaParams& p);

}  // namespace doppler::workloads
