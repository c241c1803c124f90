#pragma once
// The NVIDIA GPUs a process can use and how one GPU splits into SM partitions (CUDA green
// contexts), for the CUDA engine backend (libdoppler_cuda, built when nvcc is found). The header
// needs no CUDA: list_gpus() and enable_cuda_backend() are defined by libdoppler_cuda,
// partition_sms() by libdoppler.
#include <cstdint>
#include <string>
#include <vector>

namespace doppler {

/// One GPU as the CUDA runtime reports it.
struct GpuInfo {
  int index = 0;                  ///< CUDA device ordinal
  std::string name;               ///< e.g. "NVIDIA H100 80GB HBM3"
  int sms = 0;                    ///< streaming multiprocessors
  std::int64_t memory_bytes = 0;  ///< total device memory, bytes
  int compute_major = 0;          ///< compute capability, major (9 on Hopper)
  int compute_minor = 0;          ///< compute capability, minor
  int driver_version = 0;         ///< CUDA driver API version, e.g. 13000
  int runtime_version = 0;        ///< CUDA runtime version linked in, e.g. 13000
};

/// Smallest green-context partition and its granularity, in SMs, for a compute capability
/// (cuda.h's guideline): 8 and multiples of 8 on 9.0+, 4 and 2 on 8.x, 2 and 2 before.
struct SmGranularity {
  int min_sms = 2;  ///< fewest SMs in one partition
  int step = 2;     ///< a partition's SMs are a multiple of this
};

/// The granularity of compute capability `major`.
SmGranularity sm_granularity(int major);

/// SMs of each of `partitions` equal partitions of a GPU with `sms` SMs: the largest multiple
/// of g.step, at least g.min_sms, with partitions x that <= sms (the rest stays unused).
/// Returns 0 when the GPU cannot hold that many partitions. partitions >= 1.
int partition_sms(int sms, int partitions, SmGranularity g);

/// Makes Backend::cuda available to every Engine made after it (EngineOptions::backend).
/// Defined by libdoppler_cuda: a program links it and calls this once; without it an Engine
/// asked for CUDA throws InputError naming the missing component. Idempotent, thread-safe.
void enable_cuda_backend();

/// Every GPU this process sees. Throws EngineError "no CUDA driver or GPU: CAUSE" (one line)
/// when the driver is missing or too old, or no GPU is visible. Defined by libdoppler_cuda.
std::vector<GpuInfo> list_gpus();

}  // namespace doppler
