#include "doppler/workloads/llama_model.hpp"

#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "llama_block.hpp"

#include "doppler/util/error.hpp"
#include "doppler/workloads/param_checks.hpp"

namespace doppler::workloads {

using namespace llama_detail;

namespace {

constexpr std::int64_t kMaxLayers = 10'000;

std::string layer_prefix(std::int64_t i) {
  return fmt::format("layers.{}.", i);
}

}  // namespace

const std::vector<LlamaSize>& llama_sizes() {
  // Llama-2 (Touvron et al. 2023, table 1 and the released params.json files).
  static const std::vector<LlamaSize> sizes = {{"7b", 4096, 32, 32, 11008, 32, 32000},
                                               {"13b", 5120, 40, 40, 13824, 40, 32000},
                                               {"70b", 8192, 64, 8, 28672, 80, 32000}};
  return sizes;
}

const LlamaSize& llama_size(const std::string& name) {
  std::vector<std::string> names;
  for (const LlamaSize& s : llama_sizes()) {
    if (s.name == name) return s;
    names.push_back(s.name);
  }
  throw InputError(
      fmt::format("unknown llama size '{}' (valid: {})", name, fmt::join(names, ", ")));
}

void LlamaModelParams::set_size(const LlamaSize& size) {
  dim = size.dim;
  heads = size.heads;
  ffn = size.ffn;
  layers = size.layers;
  vocab = size.vocab;
}

Graph generate_llama_model(const LlamaModelParams& p) {
  validate_sizes(p);
  require_range("layers", p.layers, kMaxLayers);
  BlockedProgram prog(p.dtype);
  std::vector<Block> blocks;
  blocks.reserve(static_cast<std::size_t>(p.layers));
  const BlockedTensor* x = &token_input(prog, "embedding", p);
  for (std::int64_t i = 0; i < p.layers; ++i) {
    blocks.push_back(forward_block(prog, p, layer_prefix(i), *x, true));
    x = blocks.back().y;
  }
  const Head head = vocab_head(prog, p, *x, false);
  if (p.training) {
    // From the upstream gradient of the logits (the loss's, an input blocked like logits)
    // back through the head and every block, last to first.
    const BlockedTensor& dlogits =
        prog.input("dlogits", head.logits.out->shape, 1.0, 0.0, head.logits.out->cuts);
    const BlockedTensor* dh =
        matmul_backward(prog, head.logits, dlogits, "grad.final_norm", "grad.w_vocab").first;
    const BlockedTensor* dy = &rmsnorm_backward(prog, "final_norm", head.norm, *dh);
    for (auto i = static_cast<std::int64_t>(blocks.size()) - 1; i >= 0; --i) {
      const std::string dx = i == 0 ? "grad.embedding" : "grad." + layer_prefix(i) + "x";
      dy = &backward_block(prog, blocks[static_cast<std::size_t>(i)], *dy, dx);
    }
  }
  GraphMeta meta;
  meta.name = "llama";
  meta.origin = "generated";
  meta.params = {{"batch", std::to_string(p.batch)},
                 {"seq", std::to_string(p.seq)},
                 {"dim", std::to_string(p.dim)},
                 {"heads", std::to_string(p.heads)},
                 {"ffn", std::to_string(p.ffn)},
                 {"layers", std::to_string(p.layers)},
                 {"vocab", std::to_string(p.vocab)},
                 {"dtype", std::string(dtype_name(p.dtype))},
                 {"training", p.training ? "true" : "false"},
                 {"token_blocks", std::to_string(p.token_blocks)},
                 {"head_blocks", std::to_string(p.head_blocks)},
                 {"ffn_blocks", std::to_string(p.ffn_blocks)},
                 {"inner_blocks", std::to_string(p.inner_blocks)},
                 {"vocab_blocks", std::to_string(p.vocab_blocks)}};
  return prog.build(std::move(meta));
}

}  // namespace doppler::workloads
