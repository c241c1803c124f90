#pragma once
// Engine options shared by the commands that run the engine (execute, train --stage real,
// compare --measure, calibrate, validate-sim).
#include <string>

#include <CLI/CLI.hpp>

#include "doppler/engine/options.hpp"
#include "doppler/engine/runner.hpp"

namespace doppler::cli {

/// The engine flags of a command.
struct EngineCliOptions {
  std::string kernels = "auto";   ///< auto, real, synthetic or empty
  double scale = 0;               ///< synthetic kernels' FLOPs/bytes per cost unit (0: automatic)
  double link_bandwidth = 0;      ///< emulated link bandwidth, bytes/s (0: off)
  double link_latency = 0;        ///< emulated link latency, seconds
  std::string link_profile;       ///< emulate this hardware profile's links
  bool no_pin = false;            ///< do not pin compute workers to cores
  std::string copies = "worker";  ///< who copies between devices: worker or producer
  double timeout = 0;             ///< seconds after which a run is aborted (0: none)
  int gpu_partitions = 0;         ///< --backend cuda: SM partitions of one GPU (0: the rule)
  std::string gpus;               ///< --backend cuda: comma-separated GPU ordinals ("": 0)
  std::string gpu_math = "f32";   ///< --backend cuda: GEMM math (f32, tf32, bf16)
  std::string gpu_dtype = "f32";  ///< --backend cuda: tensors' storage type (f32, bf16)
  std::string gpu_link = "peer";  ///< --backend cuda: peer, host, nvlink or pcie
};

/// --gpu-link nvlink: one H100 SXM's NVLink 4 (the shipped h100 profile's port), bytes/s and s.
inline constexpr double kNvlinkBandwidth = 450e9, kNvlinkLatency = 1e-6;
/// --gpu-link pcie: a PCIe 5.0 x16 link's achieved copy rate per direction and a copy's
/// latency (assumptions, to be calibrated), bytes/s and s.
inline constexpr double kPcieBandwidth = 50e9, kPcieLatency = 5e-6;

/// Which engine flags a command takes.
enum class EngineFlags {
  all,    ///< every flag of EngineCliOptions
  links,  ///< --link-bandwidth, --link-latency, --link-profile, --no-pin and --copies only: for
          ///< commands that choose the kernels and run lengths themselves (calibrate,
          ///< validate-sim), whose other EngineCliOptions stay at their defaults
};

/// Adds --kernels, --scale, --link-bandwidth, --link-latency, --link-profile, --no-pin,
/// --copies and --timeout (`which` = links: the link, pinning and copy flags alone), and the
/// CUDA backend's --gpu-partitions and --gpus.
void add_engine_options(CLI::App& cmd, EngineCliOptions& o, EngineFlags which = EngineFlags::all);

/// Builds every engine a command makes (calibrate's benchmarks, the demo's) on eo's backend and
/// GPU devices, whatever the device count each asks for (partitions: the first ones).
EngineFactory engine_factory(const EngineOptions& eo);

/// EngineOptions for `devices` devices on `backend` (InputError on bad values). For CUDA
/// without --gpu-partitions: P > 1 devices are P partitions of the one GPU --gpus names (0 by
/// default); one device is that whole GPU; several GPUs named are one device each.
EngineOptions engine_options(const EngineCliOptions& o, int devices,
                             Backend backend = Backend::cpu);

}  // namespace doppler::cli
