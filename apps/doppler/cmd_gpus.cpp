// doppler gpus: the GPUs the CUDA backend can use and how each splits into SM partitions.
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/engine/gpus.hpp"

namespace doppler::cli {

namespace {

constexpr int kPartitionCounts[] = {1, 2, 3, 4, 8, 16};

struct GpusOptions {
  bool json = false;
};

void run_gpus(const GpusOptions& o) {
  const std::vector<GpuInfo> gpus = list_gpus();  // EngineError: no CUDA driver or GPU
  if (o.json) {
    ojson list = ojson::array();
    for (const GpuInfo& g : gpus) {
      ojson parts = ojson::object();
      for (int p : kPartitionCounts)
        parts[std::to_string(p)] = partition_sms(g.sms, p, sm_granularity(g.compute_major));
      list.push_back(
          {{"index", g.index},
           {"name", g.name},
           {"sms", g.sms},
           {"memory_bytes", g.memory_bytes},
           {"compute_capability", fmt::format("{}.{}", g.compute_major, g.compute_minor)},
           {"driver_version", g.driver_version},
           {"runtime_version", g.runtime_version},
           {"partition_sms", parts}});
    }
    print_json(ojson{{"gpus", list}});
    return;
  }
  for (const GpuInfo& g : gpus) {
    std::cout << fmt::format(
        "GPU {}: {}, {} SMs, {:.1f} GiB, compute {}.{}, driver {}.{}\n", g.index, g.name, g.sms,
        static_cast<double>(g.memory_bytes) / (1ull << 30), g.compute_major, g.compute_minor,
        g.driver_version / 1000, g.driver_version % 1000 / 10);
    std::string row = "  --gpu-partitions P: SMs each ";
    for (int p : kPartitionCounts) {
      const int sms = partition_sms(g.sms, p, sm_granularity(g.compute_major));
      row += fmt::format(" P={}:{}", p, sms ? std::to_string(sms) : "-");
    }
    std::cout << row << " (at most: the driver may find fewer groups)\n";
  }
}

}  // namespace

void add_gpus(CLI::App& app) {
  auto o = std::make_shared<GpusOptions>();
  CLI::App* cmd = app.add_subcommand(
      "gpus",
      "List the GPUs the CUDA backend can use: name, SMs, memory, compute capability, driver, "
      "and the SMs of each of P equal partitions (--gpu-partitions). Exit 1 with one line when "
      "there is no CUDA driver or GPU.");
  cmd->add_flag("--json", o->json, "print JSON instead of text");
  cmd->callback([o] { run_gpus(*o); });
}

void register_backends() {
  enable_cuda_backend();
}

bool cuda_usable() {
  try {
    return !list_gpus().empty();
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace doppler::cli
