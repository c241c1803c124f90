// The elementwise kernels of engine/device_ops.hpp on the GPU: one thread per output element in
// a grid-stride loop, the element functions shared with the host (tests/engine/test_device_ops).
// No project headers beyond device_ops.hpp and driver_api.hpp: nvcc compiles this file.
#include "cuda_kernels.hpp"
#include "driver_api.hpp"

namespace doppler::cuda_detail {

namespace {

using dev::I64;

constexpr int kThreads = 256;
static_assert(kThreads % dev::kReduceLanes == 0, "a block holds whole warps of lanes");
// Blocks of one launch at most (the grid-stride loop covers the rest): enough to fill 132 SMs
// many times over.
constexpr I64 kMaxBlocks = 8192;

int blocks_for(I64 n) {
  const I64 b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

__device__ I64 first_index() {
  return static_cast<I64>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ I64 index_step() {
  return static_cast<I64>(gridDim.x) * blockDim.x;
}

#define DOPPLER_EACH(i, n) for (I64 i = first_index(); i < (n); i += index_step())

template <class T>
__global__ void copy_kernel(dev::CopyArgs a, const T* src, T* dst) {
  DOPPLER_EACH(i, a.n) dev::copy_element(a, i, src, dst);
}
template <class T>
__global__ void unary_kernel(dev::UnaryArgs a, const T* x, T* out) {
  DOPPLER_EACH(i, a.n) dev::unary_element(a, i, x, out);
}
template <class T>
__global__ void binary_kernel(dev::BinaryArgs a, const T* x, const T* y, T* out) {
  DOPPLER_EACH(i, a.n) dev::binary_element(a, i, x, y, out);
}
template <class T>
__global__ void reduce_kernel(dev::ReduceArgs a, const T* x, T* out) {
  DOPPLER_EACH(i, a.n) dev::reduce_element(a, i, x, out);
}
// A warp per row (ReduceArgs::lanes = kReduceLanes): every lane of a warp takes the same rows
// (kThreads and the grid's width are multiples of 32), so the shuffles see all 32 lanes.
template <class T>
__global__ void reduce_lanes_kernel(dev::ReduceArgs a, const T* x, T* out) {
  const auto lane = static_cast<int>(threadIdx.x % dev::kReduceLanes);
  const I64 step = index_step() / dev::kReduceLanes;
  for (I64 r = first_index() / dev::kReduceLanes; r < a.n; r += step) {
    double acc = dev::reduce_lane(a, r, lane, x);
    for (int o = dev::kReduceLanes / 2; o > 0; o /= 2)
      acc = dev::reduce_combine(a.fn, acc, __shfl_down_sync(0xffffffffu, acc, o));
    if (lane == 0) dev::put(out + r, static_cast<float>(acc));
  }
}
template <class T>
__global__ void rotary_kernel(dev::RotaryArgs a, const T* x, const T* t, T* out) {
  DOPPLER_EACH(i, a.n) dev::rotary_element(a, i, x, t, out);
}
template <class T>
__global__ void gather_kernel(dev::GatherArgs a, const T* table, const T* idx, T* out) {
  DOPPLER_EACH(i, a.n) dev::gather_element(a, i, table, idx, out);
}
template <class T>
__global__ void loop_kernel(dev::LoopArgs a, dev::Operands<T> in, T* out) {
  DOPPLER_EACH(i, a.n) dev::loop_element(a, i, in, out);
}
template <class T>
__global__ void aggregate_kernel(dev::AggregateArgs a, dev::Operands<T> in, T* out) {
  DOPPLER_EACH(i, a.n) dev::aggregate_element(a, i, in, out);
}
template <class T>
__global__ void checksum_kernel(dev::ChecksumArgs a, dev::Operands<T> in, T* out) {
  if (first_index() == 0) dev::checksum_element(a, in, out);
}
template <class T>
__global__ void bias_kernel(dev::BiasArgs a, const T* bias, T* out) {
  DOPPLER_EACH(i, a.n) dev::bias_element(a, i, bias, out);
}
template <class T>
__global__ void im2col_kernel(dev::Im2colArgs a, const T* x, T* cols) {
  DOPPLER_EACH(i, a.n) dev::im2col_element(a, i, x, cols);
}
template <class T>
__global__ void direct_conv_kernel(dev::DirectConvArgs a, const T* x, const T* wt, T* out) {
  DOPPLER_EACH(i, a.n) dev::direct_conv_element(a, i, x, wt, out);
}
template <class T>
__global__ void pool_kernel(dev::PoolArgs a, const T* win, T* out) {
  DOPPLER_EACH(i, a.n) dev::pool_element(a, i, win, out);
}
template <class T>
__global__ void resize_kernel(dev::ResizeArgs a, const T* win, T* out) {
  DOPPLER_EACH(i, a.n) dev::resize_element(a, i, win, out);
}
template <class T>
__global__ void where_kernel(dev::WhereArgs a, const T* c, const T* x, const T* y, T* out) {
  DOPPLER_EACH(i, a.n) dev::where_element(a, i, c, x, y, out);
}
template <class T>
__global__ void cell_kernel(dev::CellArgs a, const T* p, const T* q, const T* r, const T* t,
                            T* out) {
  DOPPLER_EACH(i, a.n) dev::cell_element(a, i, p, q, r, t, out);
}
template <class T>
__global__ void scan_kernel(dev::ScanArgs a, const T* x, T* out) {
  DOPPLER_EACH(r, a.n) dev::scan_row(a, r, x, out);
}
template <class T>
__global__ void col2im_kernel(dev::Col2imArgs a, const T* cols, T* out) {
  DOPPLER_EACH(i, a.n) dev::col2im_element(a, i, cols, out);
}

__global__ void trap_kernel() {
  __trap();
}

#undef DOPPLER_EACH

void launched(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace

template <class T>
void launch_copy(const dev::CopyArgs& a, const T* src, T* dst, cudaStream_t s) {
  copy_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, src, dst);
  launched("copy kernel");
}
template <class T>
void launch_unary(const dev::UnaryArgs& a, const T* x, T* out, cudaStream_t s) {
  unary_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, out);
  launched("unary kernel");
}
template <class T>
void launch_binary(const dev::BinaryArgs& a, const T* x, const T* y, T* out, cudaStream_t s) {
  binary_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, y, out);
  launched("binary kernel");
}
template <class T>
void launch_reduce(const dev::ReduceArgs& a, const T* x, T* out, cudaStream_t s) {
  if (a.lanes == dev::kReduceLanes)
    reduce_lanes_kernel<T><<<blocks_for(a.n * dev::kReduceLanes), kThreads, 0, s>>>(a, x, out);
  else
    reduce_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, out);
  launched("reduce kernel");
}
template <class T>
void launch_rotary(const dev::RotaryArgs& a, const T* x, const T* table, T* out, cudaStream_t s) {
  rotary_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, table, out);
  launched("rotary kernel");
}
template <class T>
void launch_gather(const dev::GatherArgs& a, const T* table, const T* idx, T* out, cudaStream_t s) {
  gather_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, table, idx, out);
  launched("gather kernel");
}
template <class T>
void launch_loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* out, cudaStream_t s) {
  loop_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, in, out);
  launched("einsum loop kernel");
}
template <class T>
void launch_aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* out,
                      cudaStream_t s) {
  aggregate_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, in, out);
  launched("aggregate kernel");
}
template <class T>
void launch_checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* out,
                     cudaStream_t s) {
  checksum_kernel<T><<<1, 32, 0, s>>>(a, in, out);
  launched("checksum kernel");
}
template <class T>
void launch_bias(const dev::BiasArgs& a, const T* bias, T* out, cudaStream_t s) {
  bias_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, bias, out);
  launched("bias kernel");
}
template <class T>
void launch_im2col(const dev::Im2colArgs& a, const T* x, T* cols, cudaStream_t s) {
  im2col_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, cols);
  launched("im2col kernel");
}
template <class T>
void launch_direct_conv(const dev::DirectConvArgs& a, const T* x, const T* wt, T* out,
                        cudaStream_t s) {
  direct_conv_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, wt, out);
  launched("direct conv kernel");
}
template <class T>
void launch_pool(const dev::PoolArgs& a, const T* win, T* out, cudaStream_t s) {
  pool_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, win, out);
  launched("pool kernel");
}

template <class T>
void launch_resize(const dev::ResizeArgs& a, const T* win, T* out, cudaStream_t s) {
  resize_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, win, out);
  launched("resize kernel");
}

template <class T>
void launch_where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* out,
                  cudaStream_t s) {
  where_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, c, x, y, out);
  launched("where kernel");
}

template <class T>
void launch_cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* t, T* out,
                 cudaStream_t s) {
  cell_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, p, q, r, t, out);
  launched("recurrent cell kernel");
}

template <class T>
void launch_scan(const dev::ScanArgs& a, const T* x, T* out, cudaStream_t s) {
  scan_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, x, out);
  launched("scan kernel");
}

template <class T>
void launch_col2im(const dev::Col2imArgs& a, const T* cols, T* out, cudaStream_t s) {
  col2im_kernel<T><<<blocks_for(a.n), kThreads, 0, s>>>(a, cols, out);
  launched("col2im kernel");
}

// Every launcher for both storage types.
#define DOPPLER_LAUNCHERS(T)                                                                  \
  template void launch_copy(const dev::CopyArgs&, const T*, T*, cudaStream_t);                \
  template void launch_unary(const dev::UnaryArgs&, const T*, T*, cudaStream_t);              \
  template void launch_binary(const dev::BinaryArgs&, const T*, const T*, T*, cudaStream_t);  \
  template void launch_reduce(const dev::ReduceArgs&, const T*, T*, cudaStream_t);            \
  template void launch_rotary(const dev::RotaryArgs&, const T*, const T*, T*, cudaStream_t);  \
  template void launch_gather(const dev::GatherArgs&, const T*, const T*, T*, cudaStream_t);  \
  template void launch_loop(const dev::LoopArgs&, const dev::Operands<T>&, T*, cudaStream_t); \
  template void launch_aggregate(const dev::AggregateArgs&, const dev::Operands<T>&, T*,      \
                                 cudaStream_t);                                               \
  template void launch_checksum(const dev::ChecksumArgs&, const dev::Operands<T>&, T*,        \
                                cudaStream_t);                                                \
  template void launch_bias(const dev::BiasArgs&, const T*, T*, cudaStream_t);                \
  template void launch_im2col(const dev::Im2colArgs&, const T*, T*, cudaStream_t);            \
  template void launch_direct_conv(const dev::DirectConvArgs&, const T*, const T*, T*,        \
                                   cudaStream_t);                                             \
  template void launch_pool(const dev::PoolArgs&, const T*, T*, cudaStream_t);                \
  template void launch_resize(const dev::ResizeArgs&, const T*, T*, cudaStream_t);            \
  template void launch_col2im(const dev::Col2imArgs&, const T*, T*, cudaStream_t);            \
  template void launch_where(const dev::WhereArgs&, const T*, const T*, const T*, T*,         \
                             cudaStream_t);                                                   \
  template void launch_scan(const dev::ScanArgs&, const T*, T*, cudaStream_t);                \
  template void launch_cell(const dev::CellArgs&, const T*, const T*, const T*, const T*, T*, \
                            cudaStream_t);
DOPPLER_LAUNCHERS(float)
DOPPLER_LAUNCHERS(dev::Bf16)
#undef DOPPLER_LAUNCHERS

void launch_trap(cudaStream_t s) {
  trap_kernel<<<1, 1, 0, s>>>();
  launched("trap kernel");
}

}  // namespace doppler::cuda_detail
