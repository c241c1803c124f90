#pragma once
// Building blocks shared by the workload generators: RMSNorm, row softmax and their backward
// passes, einsum gradients, and the token-partition rule. Every function adds blocked tensor
// operations to a BlockedProgram; backward operations are blocked like the forward operation
// they differentiate (same cuts), relayouts being inserted where layouts differ.
#include <cstdint>
#include <string>
#include <utility>

#include "doppler/workloads/blocked_program.hpp"

namespace doppler::workloads {

/// Block counts (batch, sequence) for `parts` token blocks of a [batch, seq, ...] tensor:
/// batch blocks = gcd(parts, batch), sequence blocks = min(parts / that, seq).
std::pair<std::int64_t, std::int64_t> token_parts(std::int64_t batch, std::int64_t seq,
                                                  std::int64_t parts);

/// Tensors of one RMSNorm y = x * rsqrt(mean(x^2) + eps) * g over the last axis.
struct RmsNorm {
  const BlockedTensor* x = nullptr;   ///< input [..., d]
  const BlockedTensor* g = nullptr;   ///< gain [d]
  const BlockedTensor* ss = nullptr;  ///< sum of squares [..., 1]          (name.ss)
  const BlockedTensor* r = nullptr;   ///< 1 / sqrt(ss / d + eps)           (name.rsqrt)
  const BlockedTensor* xr = nullptr;  ///< x * r                            (name.xr)
  const BlockedTensor* y = nullptr;   ///< xr * g, in x's layout            (name)
  double eps = 1e-5;                  ///< epsilon inside the square root
};

/// RMSNorm of `x` (blocked like x, whose last axis must be one block) with gain input
/// `name.g` (offset 1, scale 0.1).
RmsNorm rmsnorm(BlockedProgram& p, const std::string& name, const BlockedTensor& x,
                double eps = 1e-5);

/// Gradient of x given the gradient `dy` of n.y (8 tensor ops, blocked like x); the gain's
/// gradient is `grad.<name>.g`. Returns grad.<name>.x.
const BlockedTensor& rmsnorm_backward(BlockedProgram& p, const std::string& name, const RmsNorm& n,
                                      const BlockedTensor& dy);

/// Row softmax over the last axis (max, subtract, exp, sum, divide), blocked like x; the last
/// op is named `name`, the others name.max, name.sub, name.exp, name.sum.
const BlockedTensor& softmax(BlockedProgram& p, const std::string& name, const BlockedTensor& x);

/// Gradient of the softmax input: y * (dy - sum(dy * y)), blocked like y; named `name`.
const BlockedTensor& softmax_backward(BlockedProgram& p, const std::string& name,
                                      const BlockedTensor& y, const BlockedTensor& dy);

/// Gradient of operand `which` (0 or 1) of C = einsum(spec, {a, b}) given dC, as one einsum
/// with the forward label cuts `cuts`: for "A,B->C", operand 0 gets "C,B->A" and operand 1
/// gets "C,A->B". `other` is the operand that is not differentiated.
const BlockedTensor& einsum_grad(BlockedProgram& p, const std::string& name,
                                 const std::string& spec, int which, const BlockedTensor& dc,
                                 const BlockedTensor& other, const LabelCuts& cuts);

}  // namespace doppler::workloads
