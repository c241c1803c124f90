#pragma once
// Internal: one Llama transformer block, forward and backward, shared by llama-block,
// llama-layer (llama.cpp) and the whole model (llama_model.cpp). Every tensor of a block is
// named prefix + its llama-block name ("layers.3.wq"), gradients "grad." + that.
#include <string>
#include <utility>

#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/layers.hpp"
#include "doppler/workloads/llama.hpp"

namespace doppler::workloads::llama_detail {

constexpr double kEps = 1e-5;  // RMSNorm epsilon

/// Cuts of a [batch, seq, ...] tensor's two leading axes for `parts` token blocks.
std::pair<Cuts, Cuts> token_cuts(const LlamaParams& p, std::int64_t parts);

/// One binary einsum of the forward pass, kept for its backward pass.
struct Mm {
  std::string spec;
  const BlockedTensor* a = nullptr;
  const BlockedTensor* b = nullptr;
  const BlockedTensor* out = nullptr;
  LabelCuts cuts;
};

/// `prog.einsum(name, spec, {a, b}, cuts)`, remembered for matmul_backward.
Mm matmul(BlockedProgram& prog, const std::string& name, const std::string& spec,
          const BlockedTensor& a, const BlockedTensor& b, LabelCuts cuts);

/// Gradients of both operands of `m` given the gradient of its output (named name_a, name_b).
std::pair<const BlockedTensor*, const BlockedTensor*> matmul_backward(BlockedProgram& prog,
                                                                      const Mm& m,
                                                                      const BlockedTensor& dout,
                                                                      const std::string& name_a,
                                                                      const std::string& name_b);

/// The forward tensors of one block, kept for its backward pass.
struct Block {
  std::string prefix;
  const BlockedTensor* x = nullptr;
  RmsNorm attn_norm, ffn_norm;
  Mm q, k, v, scores, attn, wo, w1, w3, w2;
  const BlockedTensor *q_rot = nullptr, *k_rot = nullptr, *probs = nullptr, *h1 = nullptr;
  const BlockedTensor *silu = nullptr, *swiglu = nullptr, *y = nullptr;
  Attrs rotary;
  double scale = 1;
};

/// The block's forward pass on `x` ([batch, seq, dim], token blocks x whole dim); with `causal`
/// a causal mask (fill prefix + "causal_mask") is added to the scaled scores.
Block forward_block(BlockedProgram& prog, const LlamaParams& p, const std::string& prefix,
                    const BlockedTensor& x, bool causal);

/// The block's backward pass from the gradient `dy` of f.y: gradients of every weight
/// (grad.<prefix>wq, ...) and of x, named `dx_name`, which is returned.
const BlockedTensor& backward_block(BlockedProgram& prog, const Block& f, const BlockedTensor& dy,
                                    const std::string& dx_name);

/// Input activations `name` [batch, seq, dim] in token blocks x whole dim (values in [-1, 1)).
const BlockedTensor& token_input(BlockedProgram& prog, const std::string& name,
                                 const LlamaParams& p);

/// The final RMSNorm and the vocabulary projection of a model's last hidden state.
struct Head {
  RmsNorm norm;  ///< final_norm
  Mm logits;     ///< logits: bsd,dv->bsv with w_vocab [dim, vocab]
};

/// final_norm of `y` on every token, then logits = final_norm . w_vocab, for every token or
/// (`last_only`) for the last position only (select "last_token"). Contraction cut in
/// inner_blocks, vocabulary in vocab_blocks.
Head vocab_head(BlockedProgram& prog, const LlamaParams& p, const BlockedTensor& y, bool last_only);

/// InputError unless the sizes and block counts of `p` fit (everything but layer / training).
void validate_sizes(const LlamaParams& p);

}  // namespace doppler::workloads::llama_detail
