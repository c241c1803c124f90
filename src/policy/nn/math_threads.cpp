#include "doppler/policy/math_threads.hpp"

#include <torch/torch.h>

#include "doppler/util/retain_memory.hpp"

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

}  // namespace doppler
