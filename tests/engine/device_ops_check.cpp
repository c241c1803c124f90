#include "device_ops_check.hpp"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include <gtest/gtest.h>

#include "engine/runtime.hpp"

namespace doppler::test {

using engine_detail::GemmCall;
using engine_detail::KernelOp;
using engine_detail::Plan;
namespace dev = engine_detail::dev;

template <class T>
void HostExec<T>::gemm(const GemmCall<T>& g) {
  ++gemms;
  std::vector<double> row(static_cast<std::size_t>(g.n));
  const auto r = [this](T x) {
    return engine_detail::round_gemm_operand(this->math_, dev::as_f32(x));
  };
  for (dev::I64 t = 0; t < g.batch; ++t) {
    const T* a = g.a + t * g.sa;
    const T* b = g.b + t * g.sb;
    T* c = g.c + t * g.sc;
    for (dev::I64 i = 0; i < g.m; ++i) {  // row i of C, summed in double over p
      for (dev::I64 j = 0; j < g.n; ++j)
        row[static_cast<std::size_t>(j)] = g.accumulate ? dev::as_f32(c[i * g.ldc + j]) : 0.0;
      for (dev::I64 p = 0; p < g.k; ++p) {
        const double av = r(g.ta ? a[p * g.lda + i] : a[i * g.lda + p]);
        for (dev::I64 j = 0; j < g.n; ++j)
          row[static_cast<std::size_t>(j)] += av * r(g.tb ? b[j * g.ldb + p] : b[p * g.ldb + j]);
      }
      for (dev::I64 j = 0; j < g.n; ++j)
        dev::put(c + i * g.ldc + j, static_cast<float>(row[static_cast<std::size_t>(j)]));
    }
  }
}

template <class T>
T* HostExec<T>::scratch(dev::I64 elements) {
  if (elements > device_scratch_)
    ADD_FAILURE() << elements << " elements of scratch asked, a CUDA device has "
                  << device_scratch_;
  scratch_.resize(static_cast<std::size_t>(elements));
  for (T& x : scratch_) dev::put(&x, std::nanf(""));
  return scratch_.data();
}

template class HostExec<float>;
template class HostExec<dev::Bf16>;

namespace {

// `x` with every element rounded to bf16 (and widened back).
std::vector<float> bf16_rounded(std::vector<float> x) {
  for (float& e : x) e = dev::as_f32(dev::to_bf16(e));
  return x;
}

}  // namespace

template <class T>
std::vector<std::vector<float>> run_end_to_end(const Plan& plan, const Graph& g,
                                               engine_detail::KernelExec<T>* exec,
                                               bool round_to_bf16) {
  std::vector<std::vector<T>> out(static_cast<std::size_t>(g.num_nodes()));
  std::vector<float> scratch;
  for (NodeId v : g.topo_order()) {
    const auto i = static_cast<std::size_t>(v);
    std::vector<const T*> in;
    for (const auto& view : plan.kernels[i].in)
      in.push_back(out[static_cast<std::size_t>(view.src)].data());
    out[i].assign(static_cast<std::size_t>(std::max<std::int64_t>(plan.kernels[i].numel, 1)), T{});
    if (exec)
      engine_detail::run_with<T>(plan, v, in, out[i].data(), *exec);
    else if constexpr (std::is_same_v<T, float>)
      engine_detail::run_kernel(plan, v, in.data(), out[i].data(), scratch);
    if constexpr (std::is_same_v<T, float>)
      if (round_to_bf16) out[i] = bf16_rounded(std::move(out[i]));
  }
  std::vector<std::vector<float>> wide(out.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    for (const T& x : out[i]) wide[i].push_back(dev::as_f32(x));
  return wide;
}

template std::vector<std::vector<float>> run_end_to_end(const Plan&, const Graph&,
                                                        engine_detail::KernelExec<float>*, bool);
template std::vector<std::vector<float>> run_end_to_end(const Plan&, const Graph&,
                                                        engine_detail::KernelExec<dev::Bf16>*,
                                                        bool);

namespace {

// A gtest failure where `got` differs from `want` (node v's first `check` elements) by more than
// `tolerance` relative in L2, or has a NaN or an infinity where `want` has none.
void expect_node_agrees(const Graph& g, NodeId v, KernelOp op, const std::string& label,
                        const std::vector<float>& got, const std::vector<float>& want,
                        std::size_t check, double tolerance) {
  double err2 = 0, norm2 = 0;  // the node's L2 error and norm (equal values add no error)
  for (std::size_t i = 0; i < check; ++i) {
    if (std::isfinite(want[i])) norm2 += double{want[i]} * want[i];
    if (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) continue;
    const double d = double{got[i]} - want[i];
    err2 += d * d;
    if (std::isfinite(d)) continue;  // a NaN or an infinity where the other has none
    ADD_FAILURE() << label << ": node " << v << " (" << g.node(v).name << ", kernel op "
                  << static_cast<int>(op) << "), element " << i << ": " << got[i] << " instead of "
                  << want[i];
    return;  // one line per node
  }
  if (!(std::sqrt(err2) <= tolerance * std::sqrt(norm2) + 1e-30))
    ADD_FAILURE() << label << ": node " << v << " (" << g.node(v).name << ", kernel op "
                  << static_cast<int>(op) << ") differs by " << std::sqrt(err2 / norm2)
                  << " relative (L2)";
}

// The CPU kernels' outputs of every node, end to end. With bf16 storage each output is rounded,
// and so are the plan's cached values (constants, rotary tables) and synthetic operands, as the
// device stores them.
std::vector<std::vector<float>> reference_outputs(const Plan& device_plan, const Graph& g,
                                                  bool bf16) {
  if (!bf16) return run_end_to_end<float>(device_plan, g, nullptr);
  Plan plan = device_plan;
  for (auto& k : plan.kernels) k.values = bf16_rounded(std::move(k.values));
  plan.syn_a = bf16_rounded(std::move(plan.syn_a));
  plan.syn_b = bf16_rounded(std::move(plan.syn_b));
  return run_end_to_end<float>(plan, g, nullptr, true);
}

// An aggregate adds its blocks in the CPU kernel's order and rounds where a launch ends: one
// launch (at most dev::kAggregateOperands blocks) is exact; with bf16 tensors each further
// launch may round its partial sum one step (2^-8) from the reference's.
double aggregate_tolerance(const engine_detail::KernelPlan& k, bool bf16, double tolerance) {
  const auto blocks = static_cast<int>(k.in.size());
  constexpr int K = dev::kAggregateOperands;
  const int later = blocks <= K ? 0 : (blocks - K + K - 2) / (K - 1);  // ceil((blocks-K)/(K-1))
  if (later == 0) return 0.0;
  return bf16 ? std::max(tolerance, later * std::ldexp(1.0, -8)) : tolerance;
}

// Each node of `g` through run_with() with HostExec<T> on the reference's inputs against the
// reference (see expect_device_path_agrees and expect_bf16_device_path_agrees).
template <class T>
std::set<KernelOp> expect_path_agrees(const Graph& g, KernelMode mode, const std::string& label,
                                      double scale, double tolerance) {
  engine_detail::configure_process();
  const Plan plan = engine_detail::compile_plan(g, mode, scale);
  engine_detail::check_device_plan(plan);
  const bool bf16 = std::is_same_v<T, dev::Bf16>;
  const std::vector<std::vector<float>> ref = reference_outputs(plan, g, bf16);
  std::vector<std::vector<T>> stored;  // the reference's outputs as T
  for (const auto& out : ref) stored.push_back(engine_detail::stored_as<T>(out));
  HostExec<T> exec(plan);
  std::set<KernelOp> seen;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto& k = plan.kernels[static_cast<std::size_t>(v)];
    std::vector<const T*> in;
    for (const auto& view : k.in) in.push_back(stored[static_cast<std::size_t>(view.src)].data());
    std::vector<T> out(ref[static_cast<std::size_t>(v)].size(), T{});
    engine_detail::run_with<T>(plan, v, in, out.data(), exec);
    seen.insert(k.op);
    std::vector<float> got(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) got[i] = dev::as_f32(out[i]);
    const std::size_t check = k.op == KernelOp::empty ? 0 : static_cast<std::size_t>(k.numel);
    double tol = k.op == KernelOp::aggregate ? aggregate_tolerance(k, bf16, tolerance) : tolerance;
    // A transposed convolution's GEMM columns are stored as T before col2im adds them: with bf16
    // one more rounding (one step, 2^-8) of every term than the reference's.
    if (bf16 && k.op == KernelOp::conv_transpose2d) tol = std::ldexp(1.0, -8);
    expect_node_agrees(g, v, k.op, label, got, ref[static_cast<std::size_t>(v)], check, tol);
  }
  return seen;
}

}  // namespace

// Sums in another order (a double-sum GEMM against OpenBLAS's f32 one) differ by f32 rounding,
// far below 1e-5 of the node's norm; a wrong element or index does not. (Single elements may
// differ more: inception_v3's convolutions cancel terms a thousand times larger than their sum,
// where OpenBLAS's f32 result is off by 0.1 in 74.7.)
std::set<KernelOp> expect_device_path_agrees(const Graph& g, KernelMode mode,
                                             const std::string& label, double scale) {
  return expect_path_agrees<float>(g, mode, label, scale, 1e-5);
}

std::set<KernelOp> expect_bf16_device_path_agrees(const Graph& g, KernelMode mode,
                                                  const std::string& label, double scale) {
  return expect_path_agrees<dev::Bf16>(g, mode, label, scale, 1.0 / 1024);
}

}  // namespace doppler::test
