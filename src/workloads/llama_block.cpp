#include "llama_block.hpp"

#include <cmath>

#include <fmt/format.h>

#include "doppler/util/error.hpp"
#include "doppler/workloads/param_checks.hpp"

namespace doppler::workloads::llama_detail {

namespace {

constexpr std::int64_t kMaxDim = std::int64_t{1} << 31;
constexpr double kTheta = 10000.0;  // rotary base
constexpr double kMasked = -1e9;    // causal-mask value added to masked scores

using Tensor = BlockedTensor;

}  // namespace

std::pair<Cuts, Cuts> token_cuts(const LlamaParams& p, std::int64_t parts) {
  const auto [kb, ks] = token_parts(p.batch, p.seq, parts);
  return {even_cuts(p.batch, kb), even_cuts(p.seq, ks)};
}

Mm matmul(BlockedProgram& prog, const std::string& name, const std::string& spec, const Tensor& a,
          const Tensor& b, LabelCuts cuts) {
  Mm m{spec, &a, &b, nullptr, std::move(cuts)};
  m.out = &prog.einsum(name, spec, {&a, &b}, m.cuts);
  return m;
}

std::pair<const Tensor*, const Tensor*> matmul_backward(BlockedProgram& prog, const Mm& m,
                                                        const Tensor& dout,
                                                        const std::string& name_a,
                                                        const std::string& name_b) {
  const Tensor& da = einsum_grad(prog, name_a, m.spec, 0, dout, *m.b, m.cuts);
  const Tensor& db = einsum_grad(prog, name_b, m.spec, 1, dout, *m.a, m.cuts);
  return {&da, &db};
}

Block forward_block(BlockedProgram& prog, const LlamaParams& p, const std::string& prefix,
                    const Tensor& x, bool causal) {
  Block f;
  f.prefix = prefix;
  const auto n = [&](const char* name) { return prefix + name; };
  const std::int64_t hd = p.dim / p.heads;
  const auto [ob, os] = token_cuts(p, p.inner_blocks);  // outputs of wo and w2
  const Cuts inner = even_cuts(p.dim, p.inner_blocks), hcuts = even_cuts(p.heads, p.head_blocks),
             fcuts = even_cuts(p.ffn, p.ffn_blocks);
  const double wscale = 1.0 / std::sqrt(static_cast<double>(p.dim));
  f.x = &x;
  f.attn_norm = rmsnorm(prog, n("attn_norm"), *f.x, kEps);
  const Tensor& xn = *f.attn_norm.y;
  const auto& wq = prog.input(n("wq"), {p.dim, p.heads, hd}, wscale);
  const auto& wk = prog.input(n("wk"), {p.dim, p.heads, hd}, wscale);
  const auto& wv = prog.input(n("wv"), {p.dim, p.heads, hd}, wscale);
  const LabelCuts proj = {{'d', inner}, {'h', hcuts}};
  f.q = matmul(prog, n("q"), "bsd,dhe->bshe", xn, wq, proj);
  f.k = matmul(prog, n("k"), "bsd,dhe->bshe", xn, wk, proj);
  f.v = matmul(prog, n("v"), "bsd,dhe->bshe", xn, wv, proj);
  f.rotary = {{"pos_axis", 1}, {"theta", kTheta}, {"head_dim", static_cast<double>(hd)}};
  f.q_rot = &prog.map(n("q_rot"), "rotary", {f.q.out}, f.q.out->cuts, f.rotary);
  f.k_rot = &prog.map(n("k_rot"), "rotary", {f.k.out}, f.k.out->cuts, f.rotary);
  const LabelCuts heads = {{'h', hcuts}};
  f.scores = matmul(prog, n("scores"), "bshe,bthe->bhst", *f.q_rot, *f.k_rot, heads);
  f.scale = 1.0 / std::sqrt(static_cast<double>(hd));
  const Tensor* s = &prog.map(n("scores_scaled"), "scale", {f.scores.out}, f.scores.out->cuts,
                              {{"scale", f.scale}});
  if (causal) {
    const auto& mask = prog.fill(n("causal_mask"), {p.seq, p.seq}, {{0, p.seq}, {0, p.seq}},
                                 {{"value", kMasked}, {"causal", 1}});
    s = &prog.map(n("scores_masked"), "add", {s, &mask}, s->cuts);
  }
  f.probs = &softmax(prog, n("softmax"), *s);
  f.attn = matmul(prog, n("attn"), "bhst,bthe->bshe", *f.probs, *f.v.out, heads);
  const auto& wo = prog.input(n("wo"), {p.heads, hd, p.dim}, wscale);
  f.wo = matmul(prog, n("attn_out"), "bshe,hed->bsd", *f.attn.out, wo,
                {{'h', hcuts}, {'b', ob}, {'s', os}});
  f.h1 = &prog.map(n("attn_residual"), "add", {f.x, f.wo.out}, f.x->cuts);
  f.ffn_norm = rmsnorm(prog, n("ffn_norm"), *f.h1, kEps);
  const Tensor& hn = *f.ffn_norm.y;
  const auto& w1 = prog.input(n("w1"), {p.dim, p.ffn}, wscale);
  const auto& w3 = prog.input(n("w3"), {p.dim, p.ffn}, wscale);
  const auto& w2 = prog.input(n("w2"), {p.ffn, p.dim}, 1.0 / std::sqrt(static_cast<double>(p.ffn)));
  const LabelCuts up = {{'d', inner}, {'f', fcuts}};
  f.w1 = matmul(prog, n("ffn.h1"), "bsd,df->bsf", hn, w1, up);
  f.w3 = matmul(prog, n("ffn.h3"), "bsd,df->bsf", hn, w3, up);
  f.silu = &prog.map(n("ffn.silu"), "silu", {f.w1.out}, f.w1.out->cuts);
  f.swiglu = &prog.map(n("ffn.swiglu"), "mul", {f.silu, f.w3.out}, f.w1.out->cuts);
  f.w2 = matmul(prog, n("ffn.out"), "bsf,fd->bsd", *f.swiglu, w2,
                {{'f', fcuts}, {'b', ob}, {'s', os}});
  f.y = &prog.map(n("y"), "add", {f.h1, f.w2.out}, f.x->cuts);
  return f;
}

// Each matmul_backward also emits the gradient of the weight it reads (grad.w1, grad.wq, ...).
const Tensor& backward_block(BlockedProgram& prog, const Block& f, const Tensor& dy,
                             const std::string& dx_name) {
  const auto g = [&](const char* name) { return "grad." + f.prefix + name; };
  // y = h1 + ffn.out
  const Tensor* dsw = matmul_backward(prog, f.w2, dy, g("ffn.swiglu"), g("w2")).first;
  const auto& cuts_m = f.swiglu->cuts;
  const auto& dsilu = prog.map(g("ffn.silu"), "mul", {dsw, f.w3.out}, cuts_m);
  const auto& dh3 = prog.map(g("ffn.h3"), "mul", {dsw, f.silu}, cuts_m);
  const auto& dh1 = prog.map(g("ffn.h1"), "silu_grad", {&dsilu, f.w1.out}, cuts_m);
  const Tensor* dn1 = matmul_backward(prog, f.w1, dh1, g("ffn_norm.h1"), g("w1")).first;
  const Tensor* dn3 = matmul_backward(prog, f.w3, dh3, g("ffn_norm.h3"), g("w3")).first;
  const auto& dn = prog.map(g("ffn_norm"), "add", {dn1, dn3}, dn1->cuts);
  const auto& dres = rmsnorm_backward(prog, f.prefix + "ffn_norm", f.ffn_norm, dn);
  const auto& dh = prog.map(g("h1"), "add", {&dy, &dres}, f.h1->cuts);
  // h1 = x + attn_out
  const Tensor* dattn = matmul_backward(prog, f.wo, dh, g("attn"), g("wo")).first;
  const auto [dprobs, dv] = matmul_backward(prog, f.attn, *dattn, g("softmax"), g("v"));
  // The causal mask is a constant addend: the gradient of the scaled scores is the softmax's.
  const auto& dscaled = softmax_backward(prog, g("scores_scaled"), *f.probs, *dprobs);
  const auto& dscores =
      prog.map(g("scores"), "scale", {&dscaled}, f.scores.out->cuts, {{"scale", f.scale}});
  const auto [dqr, dkr] = matmul_backward(prog, f.scores, dscores, g("q_rot"), g("k_rot"));
  Attrs inverse = f.rotary;
  inverse.emplace_back("inverse", 1);
  const auto& dq = prog.map(g("q"), "rotary", {dqr}, f.q.out->cuts, inverse);
  const auto& dk = prog.map(g("k"), "rotary", {dkr}, f.k.out->cuts, inverse);
  const Tensor* dxq = matmul_backward(prog, f.q, dq, g("attn_norm.q"), g("wq")).first;
  const Tensor* dxk = matmul_backward(prog, f.k, dk, g("attn_norm.k"), g("wk")).first;
  const Tensor* dxv = matmul_backward(prog, f.v, *dv, g("attn_norm.v"), g("wv")).first;
  const auto& dqk = prog.map(g("attn_norm.qk"), "add", {dxq, dxk}, dxq->cuts);
  const auto& dxn = prog.map(g("attn_norm"), "add", {&dqk, dxv}, dxq->cuts);
  const auto& dxnorm = rmsnorm_backward(prog, f.prefix + "attn_norm", f.attn_norm, dxn);
  return prog.map(dx_name, "add", {&dh, &dxnorm}, f.x->cuts);
}

const Tensor& token_input(BlockedProgram& prog, const std::string& name, const LlamaParams& p) {
  const auto [tb, ts] = token_cuts(p, p.token_blocks);
  return prog.input(name, {p.batch, p.seq, p.dim}, 1.0, 0.0, {tb, ts, {0, p.dim}});
}

Head vocab_head(BlockedProgram& prog, const LlamaParams& p, const Tensor& y, bool last_only) {
  Head head;
  head.norm = rmsnorm(prog, "final_norm", y, kEps);
  const Tensor* h = head.norm.y;
  if (last_only)
    h = &prog.select("last_token", *h, {0, p.seq - 1, 0}, {p.batch, 1, p.dim},
                     {h->cuts[0], {0, 1}, h->cuts[2]});
  const auto& wv =
      prog.input("w_vocab", {p.dim, p.vocab}, 1.0 / std::sqrt(static_cast<double>(p.dim)));
  head.logits =
      matmul(prog, "logits", "bsd,dv->bsv", *h, wv,
             {{'d', even_cuts(p.dim, p.inner_blocks)}, {'v', even_cuts(p.vocab, p.vocab_blocks)}});
  return head;
}

void validate_sizes(const LlamaParams& p) {
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
  require_blocks("token_blocks", p.token_blocks, "batch * seq", p.batch * p.seq);
  require_blocks("head_blocks", p.head_blocks, "heads", p.heads);
  require_blocks("ffn_blocks", p.ffn_blocks, "ffn", p.ffn);
  require_blocks("inner_blocks", p.inner_blocks, "dim", p.dim);
  require_blocks("inner_blocks", p.inner_blocks, "batch * seq", p.batch * p.seq);
  require_blocks("vocab_blocks", p.vocab_blocks, "vocab", p.vocab);
}

}  // namespace doppler::workloads::llama_detail
