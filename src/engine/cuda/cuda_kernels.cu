// The elementwise kernels of engine/device_ops.hpp on the GPU: one thread per output element in
// a grid-stride loop, the element functions shared with the host (tests/engine/test_device_ops).
// No project headers beyond device_ops.hpp and driver_api.hpp: nvcc compiles this file.
#include "cuda_kernels.hpp"
#include "driver_api.hpp"

namespace doppler::cuda_detail {

namespace {

using dev::I64;

constexpr int kThreads = 256;
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

__global__ void copy_kernel(dev::CopyArgs a, const float* src, float* dst) {
  DOPPLER_EACH(i, a.n) dev::copy_element(a, i, src, dst);
}
__global__ void unary_kernel(dev::UnaryArgs a, const float* x, float* out) {
  DOPPLER_EACH(i, a.n) dev::unary_element(a, i, x, out);
}
__global__ void binary_kernel(dev::BinaryArgs a, const float* x, const float* y, float* out) {
  DOPPLER_EACH(i, a.n) dev::binary_element(a, i, x, y, out);
}
__global__ void reduce_kernel(dev::ReduceArgs a, const float* x, float* out) {
  DOPPLER_EACH(i, a.n) dev::reduce_element(a, i, x, out);
}
__global__ void rotary_kernel(dev::RotaryArgs a, const float* x, const float* t, float* out) {
  DOPPLER_EACH(i, a.n) dev::rotary_element(a, i, x, t, out);
}
__global__ void loop_kernel(dev::LoopArgs a, dev::Operands in, float* out) {
  DOPPLER_EACH(i, a.n) dev::loop_element(a, i, in, out);
}
__global__ void checksum_kernel(dev::ChecksumArgs a, dev::Operands in, float* out) {
  if (first_index() == 0) dev::checksum_element(a, in, out);
}
__global__ void bias_kernel(dev::BiasArgs a, const float* bias, float* out) {
  DOPPLER_EACH(i, a.n) dev::bias_element(a, i, bias, out);
}
__global__ void im2col_kernel(dev::Im2colArgs a, const float* x, float* cols) {
  DOPPLER_EACH(i, a.n) dev::im2col_element(a, i, x, cols);
}
__global__ void direct_conv_kernel(dev::DirectConvArgs a, const float* x, const float* wt,
                                   float* out) {
  DOPPLER_EACH(i, a.n) dev::direct_conv_element(a, i, x, wt, out);
}
__global__ void pool_kernel(dev::PoolArgs a, const float* win, float* out) {
  DOPPLER_EACH(i, a.n) dev::pool_element(a, i, win, out);
}

__global__ void trap_kernel() {
  __trap();
}

#undef DOPPLER_EACH

void launched(const char* what) {
  check(cudaGetLastError(), what);
}

}  // namespace

void launch_copy(const dev::CopyArgs& a, const float* src, float* dst, cudaStream_t s) {
  copy_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, src, dst);
  launched("copy kernel");
}
void launch_unary(const dev::UnaryArgs& a, const float* x, float* out, cudaStream_t s) {
  unary_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, out);
  launched("unary kernel");
}
void launch_binary(const dev::BinaryArgs& a, const float* x, const float* y, float* out,
                   cudaStream_t s) {
  binary_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, y, out);
  launched("binary kernel");
}
void launch_reduce(const dev::ReduceArgs& a, const float* x, float* out, cudaStream_t s) {
  reduce_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, out);
  launched("reduce kernel");
}
void launch_rotary(const dev::RotaryArgs& a, const float* x, const float* table, float* out,
                   cudaStream_t s) {
  rotary_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, table, out);
  launched("rotary kernel");
}
void launch_loop(const dev::LoopArgs& a, const dev::Operands& in, float* out, cudaStream_t s) {
  loop_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, in, out);
  launched("einsum loop kernel");
}
void launch_checksum(const dev::ChecksumArgs& a, const dev::Operands& in, float* out,
                     cudaStream_t s) {
  checksum_kernel<<<1, 32, 0, s>>>(a, in, out);
  launched("checksum kernel");
}
void launch_bias(const dev::BiasArgs& a, const float* bias, float* out, cudaStream_t s) {
  bias_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, bias, out);
  launched("bias kernel");
}
void launch_im2col(const dev::Im2colArgs& a, const float* x, float* cols, cudaStream_t s) {
  im2col_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, cols);
  launched("im2col kernel");
}
void launch_direct_conv(const dev::DirectConvArgs& a, const float* x, const float* wt, float* out,
                        cudaStream_t s) {
  direct_conv_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, x, wt, out);
  launched("direct conv kernel");
}
void launch_trap(cudaStream_t s) {
  trap_kernel<<<1, 1, 0, s>>>();
  launched("trap kernel");
}

void launch_pool(const dev::PoolArgs& a, const float* win, float* out, cudaStream_t s) {
  pool_kernel<<<blocks_for(a.n), kThreads, 0, s>>>(a, win, out);
  launched("pool kernel");
}

}  // namespace doppler::cuda_detail
