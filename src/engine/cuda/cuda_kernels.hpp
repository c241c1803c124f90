#pragma once
// Internal: launches of the elementwise kernels of engine/device_ops.hpp on a CUDA stream (one
// thread per output element, a grid-stride loop; cuda_kernels.cu). Each returns once the kernel
// is enqueued; a launch error throws EngineError naming the kernel.
#include <cuda_runtime.h>

#include "engine/device_ops.hpp"

namespace doppler::cuda_detail {

namespace dev = engine_detail::dev;

void launch_copy(const dev::CopyArgs& a, const float* src, float* dst, cudaStream_t s);
void launch_unary(const dev::UnaryArgs& a, const float* x, float* out, cudaStream_t s);
void launch_binary(const dev::BinaryArgs& a, const float* x, const float* y, float* out,
                   cudaStream_t s);
void launch_reduce(const dev::ReduceArgs& a, const float* x, float* out, cudaStream_t s);
void launch_rotary(const dev::RotaryArgs& a, const float* x, const float* table, float* out,
                   cudaStream_t s);
void launch_loop(const dev::LoopArgs& a, const dev::Operands& in, float* out, cudaStream_t s);
void launch_checksum(const dev::ChecksumArgs& a, const dev::Operands& in, float* out,
                     cudaStream_t s);
void launch_bias(const dev::BiasArgs& a, const float* bias, float* out, cudaStream_t s);
void launch_im2col(const dev::Im2colArgs& a, const float* x, float* cols, cudaStream_t s);
void launch_direct_conv(const dev::DirectConvArgs& a, const float* x, const float* wt, float* out,
                        cudaStream_t s);
void launch_pool(const dev::PoolArgs& a, const float* win, float* out, cudaStream_t s);
/// Test hook: a kernel that traps (a sticky launch failure once the stream reaches it).
void launch_trap(cudaStream_t s);

}  // namespace doppler::cuda_detail
