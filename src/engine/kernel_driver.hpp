#pragma once
// Internal: a kernel plan (plan.hpp) as the launches of a device that runs elementwise kernels
// and GEMMs (a GPU): run_with() turns node v's compiled kernel into calls of a KernelExec, whose
// CUDA implementation launches them on a stream (src/engine/cuda/) and whose test
// implementation runs them on the host (tests/engine/test_device_ops.cpp, against run_kernel).
// Every pointer is the device's, to elements of the storage type T (float, or dev::Bf16 with
// `--gpu-dtype bf16`); offsets, strides and sizes count elements. The calls are made in order and
// may complete asynchronously in that order (a stream), so scratch is reused from one call to the
// next.
#include <span>

#include "device_ops.hpp"
#include "plan.hpp"

namespace doppler::engine_detail {

/// One row-major GEMM, `batch` times: C = op(A) op(B), plus C when `accumulate`; op transposes
/// when the flag is set; each batch element's A, B and C start `sa`, `sb`, `sc` elements after
/// the previous one's. m, n, k, the leading dimensions and the batch fit in 32 bits (checked when
/// plans are compiled). Products accumulate in f32 whatever T is.
template <class T>
struct GemmCall {
  bool ta = false, tb = false;
  std::int64_t m = 1, n = 1, k = 1;
  const T* a = nullptr;
  std::int64_t lda = 1;
  const T* b = nullptr;
  std::int64_t ldb = 1;
  T* c = nullptr;
  std::int64_t ldc = 1;
  bool accumulate = false;
  std::int64_t batch = 1, sa = 0, sb = 0, sc = 0;
};

/// Elements of device scratch a batched GEMM's gathered (packed) operands and scattered output
/// may take for the batch elements of one call (more when one element alone needs more).
inline constexpr std::int64_t kGemmScratchElements = std::int64_t{1} << 24;

/// How run_with() runs a GEMM plan's batch: the batch labels from `split` on are one
/// strided-batched call of `count` elements, their packed operands gathered and their scattered
/// output written by one copy launch each for all of them; the labels before `split` loop over
/// `calls` such calls. `split` is the first label from which every operand that is not packed or
/// scattered walks the batch as one stride and the scratch stays within the budget.
struct GemmBatching {
  std::size_t split = 0;        ///< first batch label of each call
  std::int64_t count = 1;       ///< batch elements per call (the product of the labels from split)
  std::int64_t calls = 1;       ///< calls (the product of the labels before split; 0: none)
  std::int64_t sa = 0, sb = 0;  ///< A's and B's stride per batch element (in place or packed)
  std::int64_t sc = 0;          ///< C's stride per batch element (in place or in scatter scratch)
  std::int64_t scratch = 0;     ///< elements of scratch per call (packs, then the scatter)
};

/// The batching of `g` under a scratch budget of `budget` elements.
GemmBatching gemm_batching(const GemmPlan& g, std::int64_t budget = kGemmScratchElements);

/// Elements of device scratch the plan's largest kernel takes through run_with() (at least 1).
std::int64_t device_scratch(const Plan& plan);

/// What a device does for run_with(): one call per elementwise kernel (element i of `n`, as in
/// device_ops.hpp), GEMMs, and its memory, all in elements of T.
template <class T>
class KernelExec {
public:
  virtual ~KernelExec() = default;
  virtual void copy(const dev::CopyArgs& a, const T* src, T* dst) = 0;
  virtual void unary(const dev::UnaryArgs& a, const T* x, T* out) = 0;
  virtual void binary(const dev::BinaryArgs& a, const T* x, const T* y, T* out) = 0;
  virtual void where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* out) = 0;
  /// A fused recurrent step; `s` may be null (gru_cell without Rb_n).
  virtual void cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* s,
                    T* out) = 0;
  virtual void reduce(const dev::ReduceArgs& a, const T* x, T* out) = 0;
  virtual void scan(const dev::ScanArgs& a, const T* x, T* out) = 0;
  virtual void rotary(const dev::RotaryArgs& a, const T* x, const T* table, T* out) = 0;
  virtual void gather(const dev::GatherArgs& a, const T* table, const T* idx, T* out) = 0;
  virtual void loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* out) = 0;
  virtual void aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* out) = 0;
  /// One launch of a single thread (element 0).
  virtual void checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* out) = 0;
  virtual void bias(const dev::BiasArgs& a, const T* bias, T* out) = 0;
  virtual void im2col(const dev::Im2colArgs& a, const T* x, T* cols) = 0;
  virtual void direct_conv(const dev::DirectConvArgs& a, const T* x, const T* wt, T* out) = 0;
  virtual void pool(const dev::PoolArgs& a, const T* win, T* out) = 0;
  virtual void resize(const dev::ResizeArgs& a, const T* win, T* out) = 0;
  virtual void col2im(const dev::Col2imArgs& a, const T* cols, T* out) = 0;
  virtual void gemm(const GemmCall<T>& g) = 0;
  /// Device scratch of at least `elements` elements (valid until the next call of scratch()).
  virtual T* scratch(std::int64_t elements) = 0;
  /// Node v's cached values (KernelPlan::values) in device memory.
  virtual const T* values(NodeId v) = 0;
  /// The synthetic kernels' shared operands (Plan::syn_a, syn_b) in device memory.
  virtual const T* syn_a() = 0;
  virtual const T* syn_b() = 0;
};

/// Runs node v's kernel through `exec`: inputs[i] is the device buffer of operand i's producer,
/// `out` v's (plan.kernels[v].numel elements). Instantiated for float and dev::Bf16.
template <class T>
void run_with(const Plan& plan, NodeId v, std::span<const T* const> inputs, T* out,
              KernelExec<T>& exec);

/// InputError naming the first node whose kernel run_with() cannot run, if any (checked before
/// a device backend accepts a graph): a looped einsum of more than dev::kMaxLoopOperands
/// operands, or more than dev::kMaxLabels labels.
void check_device_plan(const Plan& plan);

}  // namespace doppler::engine_detail
