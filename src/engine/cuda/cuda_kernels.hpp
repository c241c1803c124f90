#pragma once
// Internal: launches of the elementwise kernels of engine/device_ops.hpp on a CUDA stream (one
// thread per output element, a grid-stride loop; cuda_kernels.cu). Each returns once the kernel
// is enqueued; a launch error throws EngineError naming the kernel.
#include <cuda_runtime.h>

#include "engine/device_ops.hpp"

namespace doppler::cuda_detail {

namespace dev = engine_detail::dev;

// T is float or dev::Bf16 (the tensors' storage type); both are instantiated in cuda_kernels.cu.
template <class T>
void launch_copy(const dev::CopyArgs& a, const T* src, T* dst, cudaStream_t s);
template <class T>
void launch_unary(const dev::UnaryArgs& a, const T* x, T* out, cudaStream_t s);
template <class T>
void launch_binary(const dev::BinaryArgs& a, const T* x, const T* y, T* out, cudaStream_t s);
template <class T>
void launch_reduce(const dev::ReduceArgs& a, const T* x, T* out, cudaStream_t s);
template <class T>
void launch_rotary(const dev::RotaryArgs& a, const T* x, const T* table, T* out, cudaStream_t s);
template <class T>
void launch_gather(const dev::GatherArgs& a, const T* table, const T* idx, T* out, cudaStream_t s);
template <class T>
void launch_loop(const dev::LoopArgs& a, const dev::Operands<T>& in, T* out, cudaStream_t s);
template <class T>
void launch_aggregate(const dev::AggregateArgs& a, const dev::Operands<T>& in, T* out,
                      cudaStream_t s);
template <class T>
void launch_checksum(const dev::ChecksumArgs& a, const dev::Operands<T>& in, T* out,
                     cudaStream_t s);
template <class T>
void launch_bias(const dev::BiasArgs& a, const T* bias, T* out, cudaStream_t s);
template <class T>
void launch_im2col(const dev::Im2colArgs& a, const T* x, T* cols, cudaStream_t s);
template <class T>
void launch_direct_conv(const dev::DirectConvArgs& a, const T* x, const T* wt, T* out,
                        cudaStream_t s);
template <class T>
void launch_pool(const dev::PoolArgs& a, const T* win, T* out, cudaStream_t s);
template <class T>
void launch_resize(const dev::ResizeArgs& a, const T* win, T* out, cudaStream_t s);
template <class T>
void launch_where(const dev::WhereArgs& a, const T* c, const T* x, const T* y, T* out,
                  cudaStream_t s);
template <class T>
void launch_scan(const dev::ScanArgs& a, const T* x, T* out, cudaStream_t s);
/// A fused recurrent step (dev::cell_element); `t` may be null.
template <class T>
void launch_cell(const dev::CellArgs& a, const T* p, const T* q, const T* r, const T* t, T* out,
                 cudaStream_t s);
template <class T>
void launch_col2im(const dev::Col2imArgs& a, const T* cols, T* out, cudaStream_t s);
/// Test hook: a kernel that traps (a sticky launch failure once the stream reaches it).
void launch_trap(cudaStream_t s);

}  // namespace doppler::cuda_detail
