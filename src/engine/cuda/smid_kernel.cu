// A kernel that records the SM each block ran on (%smid), to check that a green-context
// partition's kernels stay on its SMs. No project headers: nvcc compiles this file alone.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "green_partitions.hpp"

namespace doppler::cuda_detail {

namespace {

__global__ void record_sm_ids(int* out, long long spin_cycles) {
  if (threadIdx.x != 0) return;
  unsigned sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  // Hold the SM a little, so that the blocks spread over every SM the stream may use.
  const long long start = clock64();
  while (clock64() - start < spin_cycles) {
  }
  out[blockIdx.x] = static_cast<int>(sm);
}

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace

std::vector<int> observed_sm_ids(cudaStream_t stream, int blocks) {
  int* dev = nullptr;
  check_cuda(cudaMallocAsync(reinterpret_cast<void**>(&dev), sizeof(int) * blocks, stream),
             "cudaMallocAsync");
  record_sm_ids<<<blocks, 32, 0, stream>>>(dev, 200000);
  check_cuda(cudaGetLastError(), "launching record_sm_ids");
  std::vector<int> ids(static_cast<std::size_t>(blocks));
  check_cuda(cudaMemcpyAsync(ids.data(), dev, sizeof(int) * blocks, cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync");
  check_cuda(cudaFreeAsync(dev, stream), "cudaFreeAsync");
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  return ids;
}

}  // namespace doppler::cuda_detail
