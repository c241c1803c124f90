#include "engine_options.hpp"

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
}

EngineOptions engine_options(const EngineCliOptions& o, int devices) {
  EngineOptions eo;
  eo.devices = devices;
  eo.kernels = parse_kernel_mode(o.kernels);
  eo.synthetic_scale = o.scale;
  eo.link = LinkEmulation::from(o.link_bandwidth, o.link_latency, o.link_profile);
  eo.pin_threads = !o.no_pin;
  eo.copies = parse_copy_mode(o.copies);
  eo.timeout_seconds = o.timeout;
  return eo;
}

}  // namespace doppler::cli
