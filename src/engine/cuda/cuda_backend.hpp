#pragma once
// Internal: the CUDA device backend (engine/device_backend.hpp). Devices are SM partitions of
// one GPU (green contexts) or whole GPUs. Per device: a compute stream and an incoming-copy
// stream (in its partition), a cuBLAS handle bound to the compute stream and told its SM count,
// a buffer per node in device memory, scratch, and the cached values of its constant and rotary
// kernels. launch() enqueues a kernel's steps (engine/kernel_driver.hpp) between two events and
// waits for the second on the calling worker (no device-wide synchronisation); copy() does the
// same with cudaMemcpyAsync on the destination's incoming-copy stream. Times come from the
// events, measured from an origin event recorded when the run starts.
#include <memory>

#include "engine/device_backend.hpp"

namespace doppler::cuda_detail {

/// The CUDA backend for `plan` (`nodes` nodes) with `options.devices` devices as
/// `options.gpu` says. InputError when the device count does not match the partitions or GPUs,
/// or a GPU cannot be split that way; EngineError "no CUDA driver or GPU: ..." without one, or
/// when CUDA fails (out of device memory included).
std::unique_ptr<engine_detail::DeviceBackend> make_cuda_backend(const engine_detail::Plan& plan,
                                                                const EngineOptions& options,
                                                                int nodes);

}  // namespace doppler::cuda_detail
