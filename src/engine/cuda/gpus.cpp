// list_gpus(): the CUDA runtime's view of every visible GPU.
#include "doppler/engine/gpus.hpp"

#include "driver_api.hpp"

namespace doppler {

std::vector<GpuInfo> list_gpus() {
  cuda_detail::driver_api();  // throws "no CUDA driver or GPU: ..." when there is none
  int count = 0, driver = 0, runtime = 0;
  cuda_detail::check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::vector<GpuInfo> gpus;
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    cuda_detail::check(cudaGetDeviceProperties(&p, i), "cudaGetDeviceProperties");
    GpuInfo g;
    g.index = i;
    g.name = p.name;
    g.sms = p.multiProcessorCount;
    g.memory_bytes = static_cast<std::int64_t>(p.totalGlobalMem);
    g.compute_major = p.major;
    g.compute_minor = p.minor;
    g.driver_version = driver;
    g.runtime_version = runtime;
    gpus.push_back(g);
  }
  return gpus;
}

}  // namespace doppler
