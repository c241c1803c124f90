#include "engine_options.hpp"

#include <algorithm>
#include <charconv>

#include "doppler/util/error.hpp"

namespace doppler::cli {

namespace {

// Adds --copies worker|producer.
void add_copies_option(CLI::App& cmd, std::string& copies) {
  cmd.add_option("--copies", copies,
                 "who copies a block between devices: worker (the receiving device's copy "
                 "thread, overlapping its compute) or producer (the producing op's thread, at "
                 "once, no thread hand-off; with link emulation copies stay with the worker)")
      ->check(CLI::IsMember({"worker", "producer"}))
      ->capture_default_str();
}

}  // namespace

void add_engine_options(CLI::App& cmd, EngineCliOptions& o, EngineFlags which) {
  const bool all = which == EngineFlags::all;
  if (all) {
    cmd.add_option("--kernels", o.kernels,
                   "auto (real when every node has an exec description, else synthetic), real, "
                   "synthetic, or empty (engine overhead only)")
        ->check(CLI::IsMember({"auto", "real", "synthetic", "empty"}))
        ->capture_default_str();
    cmd.add_option("--scale", o.scale,
                   "synthetic kernels: FLOPs per unit of compute cost and bytes per unit of "
                   "transfer cost (default: about 1e8 FLOPs in all)")
        ->check(CLI::NonNegativeNumber);
  }
  cmd.add_option("--link-bandwidth", o.link_bandwidth,
                 "emulate links: a copy takes at least bytes / this (bytes/s)")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--link-latency", o.link_latency, "emulate links: seconds added to every copy")
      ->check(CLI::NonNegativeNumber);
  cmd.add_option("--link-profile", o.link_profile,
                 "emulate the links of this hardware profile (name or file)");
  cmd.add_flag("--no-pin", o.no_pin, "do not pin compute workers to cores");
  add_copies_option(cmd, o.copies);
  if (all)
    cmd.add_option("--timeout", o.timeout, "abort a run after this many seconds (0: never)")
        ->check(CLI::NonNegativeNumber);
  cmd.add_option("--gpu-partitions", o.gpu_partitions,
                 "--backend cuda: the devices are this many equal SM partitions of one GPU "
                 "(CUDA green contexts; Hopper: multiples of 8 SMs; `doppler gpus` lists the "
                 "splits); default: the device count when it is above 1 and --gpus names one "
                 "GPU or none")
      ->check(CLI::Range(1, kMaxDevices));
  cmd.add_option("--gpus", o.gpus,
                 "--backend cuda: GPU ordinals, comma-separated: with --gpu-partitions the GPU "
                 "to split (the first), else one device per GPU (default 0)");
  cmd.add_option("--gpu-math", o.gpu_math,
                 "--backend cuda: how GEMMs on f32 tensors compute: f32, or tf32 / bf16 on Tensor "
                 "Cores (operands rounded, f32 accumulation)")
      ->check(CLI::IsMember({"f32", "tf32", "bf16"}))
      ->capture_default_str();
  cmd.add_option("--gpu-dtype", o.gpu_dtype,
                 "--backend cuda: how tensors are stored in device memory: f32, or bf16 (half "
                 "the memory and copy bytes; every kernel rounds its result to bf16; GEMMs on "
                 "Tensor Cores with f32 sums)")
      ->check(CLI::IsMember({"f32", "bf16"}))
      ->capture_default_str();
  cmd.add_option("--gpu-link", o.gpu_link,
                 "--backend cuda: what a copy between devices costs: peer (the raw copy inside "
                 "the GPU), host (staged through pinned host memory: a real PCIe round trip), "
                 "nvlink or pcie (peer copies paced to 450 GB/s + 1 us or 50 GB/s + 5 us, as "
                 "--link-bandwidth / --link-latency would)")
      ->check(CLI::IsMember({"peer", "host", "nvlink", "pcie"}))
      ->capture_default_str();
}

namespace {

// --gpus "0,2" as ordinals (InputError naming the flag otherwise).
std::vector<int> parse_gpus(const std::string& list) {
  std::vector<int> gpus;
  std::size_t at = 0;
  while (at <= list.size()) {
    const std::size_t end = std::min(list.find(',', at), list.size());
    const std::string item = list.substr(at, end - at);
    int g = -1;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), g);
    if (ec != std::errc() || p != item.data() + item.size() || g < 0)
      throw InputError("--gpus: '" + item + "' is not a GPU ordinal (e.g. --gpus 0,1)");
    gpus.push_back(g);
    at = end + 1;
  }
  return gpus;
}

// The CUDA backend's devices from the flags (see engine_options()).
GpuDevices gpu_devices(const EngineCliOptions& o, int devices) {
  GpuDevices g;
  if (!o.gpus.empty()) g.gpus = parse_gpus(o.gpus);
  g.partitions = o.gpu_partitions;
  g.math = parse_gpu_math(o.gpu_math);
  g.storage = parse_gpu_storage(o.gpu_dtype);
  g.math = effective_gpu_math(g);  // bf16 tensors: bf16 GEMMs (tf32 is a bad request)
  g.link = o.gpu_link == "host" ? GpuDevices::Link::host : GpuDevices::Link::peer;
  if (g.partitions == 0 && g.gpus.size() == 1 && devices > 1) g.partitions = devices;
  return g;
}

}  // namespace

EngineFactory engine_factory(const EngineOptions& eo) {
  return [backend = eo.backend, gpu = eo.gpu](const Graph& g, const EngineOptions& asked) {
    EngineOptions on = asked;
    on.backend = backend;
    on.gpu = gpu;
    return local_engine_factory()(g, on);
  };
}

EngineOptions engine_options(const EngineCliOptions& o, int devices, Backend backend) {
  if (backend != Backend::cuda && (o.gpu_partitions > 0 || !o.gpus.empty() || o.gpu_math != "f32" ||
                                   o.gpu_dtype != "f32" || o.gpu_link != "peer"))
    throw InputError(
        "--gpu-partitions, --gpus, --gpu-math, --gpu-dtype and --gpu-link need --backend cuda");
  EngineOptions eo;
  eo.backend = backend;
  if (backend == Backend::cuda) eo.gpu = gpu_devices(o, devices);
  eo.devices = devices;
  eo.kernels = parse_kernel_mode(o.kernels);
  eo.synthetic_scale = o.scale;
  eo.link = LinkEmulation::from(o.link_bandwidth, o.link_latency, o.link_profile);
  if (o.gpu_link == "nvlink" || o.gpu_link == "pcie") {
    if (eo.link.enabled())
      throw InputError("--gpu-link " + o.gpu_link +
                       " paces the copies itself: leave out --link-bandwidth, --link-latency and "
                       "--link-profile");
    eo.link = o.gpu_link == "nvlink" ? LinkEmulation::from(kNvlinkBandwidth, kNvlinkLatency, "")
                                     : LinkEmulation::from(kPcieBandwidth, kPcieLatency, "");
  }
  eo.pin_threads = !o.no_pin;
  eo.copies = parse_copy_mode(o.copies);
  eo.timeout_seconds = o.timeout;
  return eo;
}

}  // namespace doppler::cli
