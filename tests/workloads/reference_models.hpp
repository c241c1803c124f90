#pragma once
// Test-only unblocked reference implementations of the workloads, in plain loops and double
// precision, written from docs/workloads.md (tensor names and layouts) independently of the
// generators.
#include <map>
#include <string>

#include "block_eval.hpp"

namespace doppler::test {

/// Input tensors by name.
using Tensors = std::map<std::string, Dense>;

/// Y = C (D E) + A B.
Dense reference_chainmm(const Tensors& in);

/// y = row softmax(relu(x w1) w2).
Dense reference_ffnn(const Tensors& in);

/// Output y [batch, seq, dim] of one Llama block (causal mask when `causal`).
Dense reference_llama_block(const Tensors& in, bool causal);

/// Logits [batch, 1, vocab] of a Llama layer.
Dense reference_llama_layer(const Tensors& in);

/// Logits [batch, seq, vocab] of every token of a whole model of `layers` blocks (input
/// "embedding", block weights "layers.<i>.<name>", then final_norm.g and w_vocab).
Dense reference_llama_model(const Tensors& in, int layers);

/// sum(dy * y) for a scalar training loss whose gradient of y is dy.
double dot(const Dense& a, const Dense& b);

}  // namespace doppler::test
