#include "doppler/workloads/llama.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/layers.hpp"
#include "doppler/workloads/param_checks.hpp"

namespace doppler::workloads {

namespace {

constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
constexpr double kEps = 1e-5;       // RMSNorm epsilon
constexpr double kTheta = 10000.0;  // rotary base
constexpr double kMasked = -1e9;    // causal-mask value added to masked scores

using Tensor = BlockedTensor;

// Cuts of a [batch, seq, ...] tensor's two leading axes for `parts` token blocks.
std::pair<Cuts, Cuts> token_cuts(const LlamaParams& p, std::int64_t parts) {
  const auto [kb, ks] = token_parts(p.batch, p.seq, parts);
  return {even_cuts(p.batch, kb), even_cuts(p.seq, ks)};
}

// One binary einsum of the forward pass, kept for its backward pass.
struct Mm {
  std::string spec;
  const Tensor* a = nullptr;
  const Tensor* b = nullptr;
  const Tensor* out = nullptr;
  LabelCuts cuts;
};

Mm matmul(BlockedProgram& prog, const std::string& name, const std::string& spec, const Tensor& a,
          const Tensor& b, LabelCuts cuts) {
  Mm m{spec, &a, &b, nullptr, std::move(cuts)};
  m.out = &prog.einsum(name, spec, {&a, &b}, m.cuts);
  return m;
}

// Gradients of both operands of `m` given the gradient of its output (named name_a, name_b).
std::pair<const Tensor*, const Tensor*> matmul_backward(BlockedProgram& prog, const Mm& m,
                                                        const Tensor& dout,
                                                        const std::string& name_a,
                                                        const std::string& name_b) {
  const Tensor& da = einsum_grad(prog, name_a, m.spec, 0, dout, *m.b, m.cuts);
  const Tensor& db = einsum_grad(prog, name_b, m.spec, 1, dout, *m.a, m.cuts);
  return {&da, &db};
}

struct Block {
  const Tensor* x = nullptr;
  RmsNorm attn_norm, ffn_norm;
  Mm q, k, v, scores, attn, wo, w1, w3, w2;
  const Tensor *q_rot = nullptr, *k_rot = nullptr, *probs = nullptr, *h1 = nullptr;
  const Tensor *silu = nullptr, *swiglu = nullptr, *y = nullptr;
  Attrs rotary;
  double scale = 1;
};

Block forward_block(BlockedProgram& prog, const LlamaParams& p) {
  Block f;
  const std::int64_t hd = p.dim / p.heads;
  const auto [tb, ts] = token_cuts(p, p.token_blocks);
  const auto [ob, os] = token_cuts(p, p.inner_blocks);  // outputs of wo and w2
  const Cuts inner = even_cuts(p.dim, p.inner_blocks), hcuts = even_cuts(p.heads, p.head_blocks),
             fcuts = even_cuts(p.ffn, p.ffn_blocks), whole_d{0, p.dim};
  const double wscale = 1.0 / std::sqrt(static_cast<double>(p.dim));
  f.x = &prog.input("x", {p.batch, p.seq, p.dim}, 1.0, 0.0, {tb, ts, whole_d});
  f.attn_norm = rmsnorm(prog, "attn_norm", *f.x, kEps);
  const Tensor& xn = *f.attn_norm.y;
  const auto& wq = prog.input("wq", {p.dim, p.heads, hd}, wscale);
  const auto& wk = prog.input("wk", {p.dim, p.heads, hd}, wscale);
  const auto& wv = prog.input("wv", {p.dim, p.heads, hd}, wscale);
  const LabelCuts proj = {{'d', inner}, {'h', hcuts}};
  f.q = matmul(prog, "q", "bsd,dhe->bshe", xn, wq, proj);
  f.k = matmul(prog, "k", "bsd,dhe->bshe", xn, wk, proj);
  f.v = matmul(prog, "v", "bsd,dhe->bshe", xn, wv, proj);
  f.rotary = {{"pos_axis", 1}, {"theta", kTheta}, {"head_dim", static_cast<double>(hd)}};
  f.q_rot = &prog.map("q_rot", "rotary", {f.q.out}, f.q.out->cuts, f.rotary);
  f.k_rot = &prog.map("k_rot", "rotary", {f.k.out}, f.k.out->cuts, f.rotary);
  const LabelCuts heads = {{'h', hcuts}};
  f.scores = matmul(prog, "scores", "bshe,bthe->bhst", *f.q_rot, *f.k_rot, heads);
  f.scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const Tensor* s =
      &prog.map("scores_scaled", "scale", {f.scores.out}, f.scores.out->cuts, {{"scale", f.scale}});
  if (p.layer) {
    const auto& mask = prog.fill("causal_mask", {p.seq, p.seq}, {{0, p.seq}, {0, p.seq}},
                                 {{"value", kMasked}, {"causal", 1}});
    s = &prog.map("scores_masked", "add", {s, &mask}, s->cuts);
  }
  f.probs = &softmax(prog, "softmax", *s);
  f.attn = matmul(prog, "attn", "bhst,bthe->bshe", *f.probs, *f.v.out, heads);
  const auto& wo = prog.input("wo", {p.heads, hd, p.dim}, wscale);
  f.wo = matmul(prog, "attn_out", "bshe,hed->bsd", *f.attn.out, wo,
                {{'h', hcuts}, {'b', ob}, {'s', os}});
  f.h1 = &prog.map("attn_residual", "add", {f.x, f.wo.out}, f.x->cuts);
  f.ffn_norm = rmsnorm(prog, "ffn_norm", *f.h1, kEps);
  const Tensor& hn = *f.ffn_norm.y;
  const auto& w1 = prog.input("w1", {p.dim, p.ffn}, wscale);
  const auto& w3 = prog.input("w3", {p.dim, p.ffn}, wscale);
  const auto& w2 = prog.input("w2", {p.ffn, p.dim}, 1.0 / std::sqrt(static_cast<double>(p.ffn)));
  const LabelCuts up = {{'d', inner}, {'f', fcuts}};
  f.w1 = matmul(prog, "ffn.h1", "bsd,df->bsf", hn, w1, up);
  f.w3 = matmul(prog, "ffn.h3", "bsd,df->bsf", hn, w3, up);
  f.silu = &prog.map("ffn.silu", "silu", {f.w1.out}, f.w1.out->cuts);
  f.swiglu = &prog.map("ffn.swiglu", "mul", {f.silu, f.w3.out}, f.w1.out->cuts);
  f.w2 =
      matmul(prog, "ffn.out", "bsf,fd->bsd", *f.swiglu, w2, {{'f', fcuts}, {'b', ob}, {'s', os}});
  f.y = &prog.map("y", "add", {f.h1, f.w2.out}, f.x->cuts);
  return f;
}

// Backward pass of the block from the upstream gradient input "dy" (blocked like y). Each
// matmul_backward also emits the gradient of the weight it reads (grad.w1, grad.wq, ...).
void backward_block(BlockedProgram& prog, const Block& f) {
  const Tensor& dy = prog.input("dy", f.y->shape, 1.0, 0.0, f.y->cuts);
  // y = h1 + ffn.out
  const Tensor* dsw = matmul_backward(prog, f.w2, dy, "grad.ffn.swiglu", "grad.w2").first;
  const auto& cuts_m = f.swiglu->cuts;
  const auto& dsilu = prog.map("grad.ffn.silu", "mul", {dsw, f.w3.out}, cuts_m);
  const auto& dh3 = prog.map("grad.ffn.h3", "mul", {dsw, f.silu}, cuts_m);
  const auto& dh1 = prog.map("grad.ffn.h1", "silu_grad", {&dsilu, f.w1.out}, cuts_m);
  const Tensor* dn1 = matmul_backward(prog, f.w1, dh1, "grad.ffn_norm.h1", "grad.w1").first;
  const Tensor* dn3 = matmul_backward(prog, f.w3, dh3, "grad.ffn_norm.h3", "grad.w3").first;
  const auto& dn = prog.map("grad.ffn_norm", "add", {dn1, dn3}, dn1->cuts);
  const auto& dres = rmsnorm_backward(prog, "ffn_norm", f.ffn_norm, dn);
  const auto& dh = prog.map("grad.h1", "add", {&dy, &dres}, f.h1->cuts);
  // h1 = x + attn_out
  const Tensor* dattn = matmul_backward(prog, f.wo, dh, "grad.attn", "grad.wo").first;
  const auto [dprobs, dv] = matmul_backward(prog, f.attn, *dattn, "grad.softmax", "grad.v");
  const auto& dscaled = softmax_backward(prog, "grad.scores_scaled", *f.probs, *dprobs);
  const auto& dscores =
      prog.map("grad.scores", "scale", {&dscaled}, f.scores.out->cuts, {{"scale", f.scale}});
  const auto [dqr, dkr] = matmul_backward(prog, f.scores, dscores, "grad.q_rot", "grad.k_rot");
  Attrs inverse = f.rotary;
  inverse.emplace_back("inverse", 1);
  const auto& dq = prog.map("grad.q", "rotary", {dqr}, f.q.out->cuts, inverse);
  const auto& dk = prog.map("grad.k", "rotary", {dkr}, f.k.out->cuts, inverse);
  const Tensor* dxq = matmul_backward(prog, f.q, dq, "grad.attn_norm.q", "grad.wq").first;
  const Tensor* dxk = matmul_backward(prog, f.k, dk, "grad.attn_norm.k", "grad.wk").first;
  const Tensor* dxv = matmul_backward(prog, f.v, *dv, "grad.attn_norm.v", "grad.wv").first;
  const auto& dqk = prog.map("grad.attn_norm.qk", "add", {dxq, dxk}, dxq->cuts);
  const auto& dxn = prog.map("grad.attn_norm", "add", {&dqk, dxv}, dxq->cuts);
  const auto& dxnorm = rmsnorm_backward(prog, "attn_norm", f.attn_norm, dxn);
  prog.map("grad.x", "add", {&dh, &dxnorm}, f.x->cuts);
}

void validate(const LlamaParams& p) {
  require_range("batch", p.batch, kMaxDim);
  require_range("seq", p.seq, kMaxDim);
  require_range("dim", p.dim, kMaxDim);
  require_range("heads", p.heads, kMaxDim);
  require_range("ffn", p.ffn, kMaxDim);
  require_range("vocab", p.vocab, kMaxDim);
  if (p.dim % p.heads != 0)
    throw InputError(fmt::format("parameter heads = {} must divide dim = {}", p.heads, p.dim));
  if ((p.dim / p.heads) % 2 != 0)
    throw InputError(fmt::format(
        "parameter heads = {}: the head size dim / heads = {} must be even (rotary pairs)", p.heads,
        p.dim / p.heads));
  if (p.training && p.layer)
    throw InputError("training is supported for llama-block, not llama-layer");
  require_blocks("token_blocks", p.token_blocks, "batch * seq", p.batch * p.seq);
  require_blocks("head_blocks", p.head_blocks, "heads", p.heads);
  require_blocks("ffn_blocks", p.ffn_blocks, "ffn", p.ffn);
  require_blocks("inner_blocks", p.inner_blocks, "dim", p.dim);
  require_blocks("inner_blocks", p.inner_blocks, "batch * seq", p.batch * p.seq);
  require_blocks("vocab_blocks", p.vocab_blocks, "vocab", p.vocab);
}

}  // namespace

void LlamaParams::set_partition_for(int devices) {
  const std::int64_t pp = std::max(devices, 1);
  token_blocks = std::min(pp, batch * seq);
  head_blocks = std::min(pp, heads);
  ffn_blocks = std::min(pp, ffn);
  inner_blocks = std::min<std::int64_t>({2, dim, batch * seq});
  vocab_blocks = std::min(pp, vocab);
}

Graph generate_llama(const LlamaParams& p) {
  validate(p);
  BlockedProgram prog(p.dtype);
  const Block f = forward_block(prog, p);
  if (p.training) backward_block(prog, f);
  if (p.layer) {
    const RmsNorm fn = rmsnorm(prog, "final_norm", *f.y, kEps);
    const Tensor& h = *fn.y;
    const auto& last = prog.select("last_token", h, {0, p.seq - 1, 0}, {p.batch, 1, p.dim},
                                   {h.cuts[0], {0, 1}, h.cuts[2]});
    const auto& wv =
        prog.input("w_vocab", {p.dim, p.vocab}, 1.0 / std::sqrt(static_cast<double>(p.dim)));
    prog.einsum(
        "logits", "bsd,dv->bsv", {&last, &wv},
        {{'d', even_cuts(p.dim, p.inner_blocks)}, {'v', even_cuts(p.vocab, p.vocab_blocks)}});
  }
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
