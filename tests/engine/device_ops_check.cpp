#include "device_ops_check.hpp"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "engine/runtime.hpp"

namespace doppler::test {

using engine_detail::GemmCall;
using engine_detail::KernelOp;
using engine_detail::Plan;
namespace dev = engine_detail::dev;

void HostExec::gemm(const GemmCall& g) {
  ++gemms;
  std::vector<double> row(static_cast<std::size_t>(g.n));
  const auto r = [this](float x) { return engine_detail::round_gemm_operand(math_, x); };
  for (dev::I64 t = 0; t < g.batch; ++t) {
    const float* a = g.a + t * g.sa;
    const float* b = g.b + t * g.sb;
    float* c = g.c + t * g.sc;
    for (dev::I64 i = 0; i < g.m; ++i) {  // row i of C, summed in double over p
      for (dev::I64 j = 0; j < g.n; ++j)
        row[static_cast<std::size_t>(j)] = g.accumulate ? c[i * g.ldc + j] : 0.0;
      for (dev::I64 p = 0; p < g.k; ++p) {
        const double av = r(g.ta ? a[p * g.lda + i] : a[i * g.lda + p]);
        for (dev::I64 j = 0; j < g.n; ++j)
          row[static_cast<std::size_t>(j)] += av * r(g.tb ? b[j * g.ldb + p] : b[p * g.ldb + j]);
      }
      for (dev::I64 j = 0; j < g.n; ++j)
        c[i * g.ldc + j] = static_cast<float>(row[static_cast<std::size_t>(j)]);
    }
  }
}

float* HostExec::scratch(dev::I64 floats) {
  scratch_.assign(static_cast<std::size_t>(floats), std::nanf(""));
  return scratch_.data();
}

std::vector<std::vector<float>> run_end_to_end(const Plan& plan, const Graph& g,
                                               engine_detail::KernelExec* exec) {
  std::vector<std::vector<float>> out(static_cast<std::size_t>(g.num_nodes()));
  std::vector<float> scratch;
  for (NodeId v : g.topo_order()) {
    const auto i = static_cast<std::size_t>(v);
    std::vector<const float*> in;
    for (const auto& view : plan.kernels[i].in)
      in.push_back(out[static_cast<std::size_t>(view.src)].data());
    out[i].assign(static_cast<std::size_t>(std::max<std::int64_t>(plan.kernels[i].numel, 1)), 0);
    if (exec)
      engine_detail::run_with(plan, v, in, out[i].data(), *exec);
    else
      engine_detail::run_kernel(plan, v, in.data(), out[i].data(), scratch);
  }
  return out;
}

std::set<KernelOp> expect_device_path_agrees(const Graph& g, KernelMode mode,
                                             const std::string& label, double scale) {
  engine_detail::limit_blas_threads();
  const Plan plan = engine_detail::compile_plan(g, mode, scale);
  engine_detail::check_device_plan(plan);
  const std::vector<std::vector<float>> ref = run_end_to_end(plan, g, nullptr);
  const auto inputs_of = [&](NodeId v) {
    std::vector<const float*> in;
    for (const auto& view : plan.kernels[static_cast<std::size_t>(v)].in)
      in.push_back(ref[static_cast<std::size_t>(view.src)].data());
    return in;
  };
  HostExec exec(plan);
  std::set<KernelOp> seen;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto& k = plan.kernels[static_cast<std::size_t>(v)];
    const auto& want = ref[static_cast<std::size_t>(v)];
    std::vector<float> got(want.size(), 0.0f);
    engine_detail::run_with(plan, v, inputs_of(v), got.data(), exec);
    seen.insert(k.op);
    const std::size_t check = k.op == KernelOp::empty ? 0 : static_cast<std::size_t>(k.numel);
    double err2 = 0, norm2 = 0;  // the node's L2 error and norm (equal values add no error)
    bool reported = false;
    for (std::size_t i = 0; i < check; ++i) {
      if (std::isfinite(want[i])) norm2 += double{want[i]} * want[i];
      if (got[i] == want[i] || (std::isnan(got[i]) && std::isnan(want[i]))) continue;
      const double d = double{got[i]} - want[i];
      err2 += d * d;
      if (reported || std::isfinite(d)) continue;  // a NaN or an infinity where the other has none
      ADD_FAILURE() << label << ": node " << v << " (" << g.node(v).name << ", kernel op "
                    << static_cast<int>(k.op) << "), element " << i << ": " << got[i]
                    << " instead of " << want[i];
      reported = true;  // one line per node
    }
    // Sums in another order (a double-sum GEMM against OpenBLAS's f32 one) differ by f32
    // rounding, far below 1e-5 of the node's norm; a wrong element or index does not. (Single
    // elements may differ more: inception_v3's convolutions cancel terms a thousand times
    // larger than their sum, where OpenBLAS's f32 result is off by 0.1 in 74.7.)
    if (!reported && !(std::sqrt(err2) <= 1e-5 * std::sqrt(norm2) + 1e-30))
      ADD_FAILURE() << label << ": node " << v << " (" << g.node(v).name << ", kernel op "
                    << static_cast<int>(k.op) << ") differs by " << std::sqrt(err2 / norm2)
                    << " relative (L2)";
  }
  return seen;
}

}  // namespace doppler::test
