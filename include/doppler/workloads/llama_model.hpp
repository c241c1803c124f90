#pragma once
// llama: a whole Llama model, embedding rows -> N transformer blocks -> final RMSNorm ->
// vocabulary projection of every token, optionally with the backward pass through all of it;
// named sizes 7b, 13b, 70b (Llama-2). docs/workloads.md.
#include <cstdint>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/workloads/llama.hpp"

namespace doppler::workloads {

/// A Llama-2 model size.
struct LlamaSize {
  std::string name;           ///< "7b", "13b", "70b"
  std::int64_t dim = 0;       ///< model width
  std::int64_t heads = 0;     ///< query heads
  std::int64_t kv_heads = 0;  ///< key/value heads of the real model (modelled: kv_heads = heads)
  std::int64_t ffn = 0;       ///< SwiGLU hidden width
  std::int64_t layers = 0;    ///< transformer blocks
  std::int64_t vocab = 0;     ///< vocabulary
};

/// The named sizes, smallest first.
const std::vector<LlamaSize>& llama_sizes();

/// The size called `name` (InputError listing the valid names otherwise).
const LlamaSize& llama_size(const std::string& name);

/// Sizes and partitioning of the whole model: the block's (LlamaParams, whose `layer` is
/// ignored) and the number of blocks. Defaults: Llama-2-7B, seq 4096.
struct LlamaModelParams : LlamaParams {
  std::int64_t layers = 32;  ///< transformer blocks (>= 1)

  /// Sets dim, heads, ffn, layers and vocab to those of `size`.
  void set_size(const LlamaSize& size);
};

/// The graph (InputError on invalid parameters). Input "embedding" [batch, seq, dim] (the
/// token embedding rows, already looked up), blocks "layers.<i>." + llama-block names, output
/// "logits" [batch, seq, vocab]; with training also an upstream gradient input "dlogits", the
/// gradient of every weight (grad.layers.<i>.wq, ..., grad.final_norm.g, grad.w_vocab) and
/// grad.embedding.
Graph generate_llama_model(const LlamaModelParams& p);

}  // namespace doppler::workloads
