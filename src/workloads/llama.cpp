#include "doppler/workloads/llama.hpp"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "llama_block.hpp"

#include "doppler/util/error.hpp"

namespace doppler::workloads {

using namespace llama_detail;

void LlamaParams::set_partition_for(int devices) {
  const std::int64_t pp = std::max(devices, 1);
  token_blocks = std::min(pp, batch * seq);
  head_blocks = std::min(pp, heads);
  ffn_blocks = std::min(pp, ffn);
  inner_blocks = std::min<std::int64_t>({2, dim, batch * seq});
  vocab_blocks = std::min(pp, vocab);
}

Graph generate_llama(const LlamaParams& p) {
  validate_sizes(p);
  if (p.training && p.layer)
    throw InputError("training is supported for llama-block, not llama-layer");
  BlockedProgram prog(p.dtype);
  const Block f = forward_block(prog, p, "", token_input(prog, "x", p), p.layer);
  if (p.training) {
    // The backward pass starts from the upstream gradient input "dy" (blocked like y).
    const BlockedTensor& dy = prog.input("dy", f.y->shape, 1.0, 0.0, f.y->cuts);
    backward_block(prog, f, dy, "grad.x");
  }
  if (p.layer) vocab_head(prog, p, *f.y, true);
  GraphMeta meta;
  meta.name = p.layer ? "llama-layer" : "llama-block";
  meta.origin = "generated";
  meta.params = {{"batch", std::to_string(p.batch)},
                 {"seq", std::to_string(p.seq)},
                 {"dim", std::to_string(p.dim)},
                 {"heads", std::to_string(p.heads)},
                 {"ffn", std::to_string(p.ffn)},
                 {"dtype", std::string(dtype_name(p.dtype))},
                 {"token_blocks", std::to_string(p.token_blocks)},
                 {"head_blocks", std::to_string(p.head_blocks)},
                 {"ffn_blocks", std::to_string(p.ffn_blocks)},
                 {"inner_blocks", std::to_string(p.inner_blocks)}};
  if (p.layer) {
    meta.params["vocab"] = std::to_string(p.vocab);
    meta.params["vocab_blocks"] = std::to_string(p.vocab_blocks);
  } else {
    meta.params["training"] = p.training ? "true" : "false";
  }
  return prog.build(std::move(meta));
}

}  // namespace doppler::workloads
