#pragma once
// Internal: one GPU split into P equal SM partitions with CUDA green contexts, the devices of
// the CUDA backend's `--gpu-partitions P` mode. Each partition has a compute stream and an
// incoming-copy stream created in its green context, so that what runs on them uses only the
// partition's SMs. Memory stays in the primary context (cudaMalloc), which every partition sees.
#include <cuda.h>
#include <cuda_runtime.h>

#include <vector>

namespace doppler::cuda_detail {

/// One partition: its green context, streams and SM count.
struct GreenPartition {
  CUgreenCtx context = nullptr;    ///< owned by GreenPartitions
  CUcontext ctx = nullptr;         ///< the same as a CUcontext (cuCtxFromGreenCtx), which owns
                                   ///< the streams: events recorded on them are made with it
                                   ///< current (ContextScope)
  cudaStream_t compute = nullptr;  ///< kernels of the device's ops
  cudaStream_t copy_in = nullptr;  ///< copies into the device
  int sms = 0;                     ///< SMs of the partition
};

/// P green-context partitions of one GPU, released (streams, then contexts) on destruction.
/// Not copyable or movable: the streams are handed out by pointer.
class GreenPartitions {
public:
  /// Splits GPU `gpu` into `partitions` equal partitions of as many SMs as the split allows
  /// (partition_sms(), lowered a step at a time while the driver finds fewer groups). Makes the
  /// GPU's primary context current on the calling thread. Throws InputError when the GPU cannot
  /// hold that many partitions, EngineError "no CUDA driver or GPU: ..." or for a CUDA failure.
  GreenPartitions(int gpu, int partitions);
  ~GreenPartitions();
  GreenPartitions(const GreenPartitions&) = delete;
  GreenPartitions& operator=(const GreenPartitions&) = delete;

  /// Partition i (0 <= i < size()).
  const GreenPartition& operator[](int i) const { return parts_[static_cast<std::size_t>(i)]; }
  /// P.
  int size() const { return static_cast<int>(parts_.size()); }
  /// The GPU's total SMs (some may belong to no partition).
  int gpu_sms() const { return gpu_sms_; }

private:
  void create(CUdevice dev, std::vector<CUdevResource>& groups, int partitions);
  void release() noexcept;

  std::vector<GreenPartition> parts_;
  int gpu_sms_ = 0;
};

/// The SM ids (%smid) that `blocks` blocks of a short spinning kernel ran on, launched on
/// `stream`: a partition's kernels must stay on its own SMs (smid_kernel.cu).
std::vector<int> observed_sm_ids(cudaStream_t stream, int blocks);

}  // namespace doppler::cuda_detail
