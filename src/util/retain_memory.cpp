#include "doppler/util/retain_memory.hpp"

#include <malloc.h>

namespace doppler {

void retain_freed_memory() {
  constexpr int kMmapThreshold = 256 << 20;  // bytes; glibc's dynamic threshold stops at 32 MiB
  constexpr int kTrimThreshold = 512 << 20;  // bytes of free heap top kept before trimming
  mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
  mallopt(M_TRIM_THRESHOLD, kTrimThreshold);
}

}  // namespace doppler
