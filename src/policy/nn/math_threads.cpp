#include "doppler/policy/math_threads.hpp"

#include <malloc.h>

#include <torch/torch.h>

extern "C" void openblas_set_num_threads(int);  // OpenBLAS (cblas.h is not on every path)

namespace doppler {

void use_single_threaded_math() {
  torch::set_num_threads(1);
  static bool interop_set = false;
  if (!interop_set) {
    try {
      torch::set_num_interop_threads(1);
    } catch (const std::exception&) {
      // already initialised by an earlier parallel call; harmless
    }
    interop_set = true;
  }
  openblas_set_num_threads(1);
  retain_freed_memory();
}

void retain_freed_memory() {
  constexpr int kMmapThreshold = 256 << 20;  // bytes; glibc's dynamic threshold stops at 32 MiB
  constexpr int kTrimThreshold = 512 << 20;  // bytes of free heap top kept before trimming
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace doppler
