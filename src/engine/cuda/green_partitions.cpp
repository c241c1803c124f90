#include "green_partitions.hpp"

#include <string>

#include "driver_api.hpp"

#include "doppler/engine/gpus.hpp"
#include "doppler/util/error.hpp"

namespace doppler::cuda_detail {

namespace {

// The GPU's SM resource.
CUdevResource sm_resource(CUdevice dev) {
  CUdevResource r{};
  check(driver_api().cuDeviceGetDevResource(dev, &r, CU_DEV_RESOURCE_TYPE_SM),
        "cuDeviceGetDevResource");
  return r;
}

// How many groups of `sms` SMs the driver can cut from `all` (it may find fewer than
// all / sms: groups follow the GPU's cluster layout).
unsigned groups_of(const CUdevResource& all, int sms) {
  unsigned n = 0;
  CUdevResource input = all;
  check(driver_api().cuDevSmResourceSplitByCount(nullptr, &n, &input, nullptr, 0,
                                                 static_cast<unsigned>(sms)),
        "cuDevSmResourceSplitByCount");
  return n;
}

}  // namespace

GreenPartitions::GreenPartitions(int gpu, int partitions) {
  const DriverApi& drv = driver_api();
  check(cudaSetDevice(gpu), "cudaSetDevice");
  check(cudaFree(nullptr), "initialising the GPU's primary context");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, gpu), "cudaGetDeviceProperties");
  gpu_sms_ = prop.multiProcessorCount;
  CUdevice dev = 0;
  check(drv.cuDeviceGet(&dev, gpu), "cuDeviceGet");
  const CUdevResource all = sm_resource(dev);
  const SmGranularity g = sm_granularity(prop.major);
  int sms = partition_sms(all.sm.smCount, partitions, g);
  while (sms >= g.min_sms && groups_of(all, sms) < static_cast<unsigned>(partitions)) sms -= g.step;
  if (partitions < 1 || sms < g.min_sms)
    throw InputError("--gpu-partitions " + std::to_string(partitions) + ": GPU " +
                     std::to_string(gpu) + " (" + prop.name + ", " +
                     std::to_string(all.sm.smCount) + " SMs) cannot be split into " +
                     std::to_string(partitions) + " partitions of at least " +
                     std::to_string(g.min_sms) + " SMs");
  unsigned n = groups_of(all, sms);
  std::vector<CUdevResource> groups(n);
  CUdevResource input = all;
  check(drv.cuDevSmResourceSplitByCount(groups.data(), &n, &input, nullptr, 0,
                                        static_cast<unsigned>(sms)),
        "cuDevSmResourceSplitByCount");
  groups.resize(n);
  try {
    create(dev, groups, partitions);
  } catch (...) {
    release();
    throw;
  }
}

void GreenPartitions::create(CUdevice dev, std::vector<CUdevResource>& groups, int partitions) {
  const DriverApi& drv = driver_api();
  for (int i = 0; i < partitions; ++i) {
    GreenPartition& p = parts_.emplace_back();
    CUdevResourceDesc desc = nullptr;
    check(drv.cuDevResourceGenerateDesc(&desc, &groups[static_cast<std::size_t>(i)], 1),
          "cuDevResourceGenerateDesc");
    check(drv.cuGreenCtxCreate(&p.context, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
          "cuGreenCtxCreate");
    check(drv.cuCtxFromGreenCtx(&p.ctx, p.context), "cuCtxFromGreenCtx");
    p.sms = static_cast<int>(groups[static_cast<std::size_t>(i)].sm.smCount);
    CUstream s = nullptr;
    check(drv.cuGreenCtxStreamCreate(&s, p.context, CU_STREAM_NON_BLOCKING, 0),
          "cuGreenCtxStreamCreate");
    p.compute = s;
    check(drv.cuGreenCtxStreamCreate(&s, p.context, CU_STREAM_NON_BLOCKING, 0),
          "cuGreenCtxStreamCreate");
    p.copy_in = s;
  }
}

void GreenPartitions::release() noexcept {
  // Streams first: destroying a green context with live streams leaks them.
  for (GreenPartition& p : parts_) {
    if (p.compute) cudaStreamDestroy(p.compute);
    if (p.copy_in) cudaStreamDestroy(p.copy_in);
    p.compute = p.copy_in = nullptr;
  }
  if (const auto destroy = driver_api().cuGreenCtxDestroy)
    for (GreenPartition& p : parts_)
      if (p.context) destroy(p.context);
  parts_.clear();
}

GreenPartitions::~GreenPartitions() {
  release();
}

}  // namespace doppler::cuda_detail
