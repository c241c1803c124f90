#include "engine_support.hpp"

#include <algorithm>
#include <filesystem>
#include <numeric>

#include "doppler/workloads/workload.hpp"

namespace doppler::test {

namespace {

Graph make(const std::string& name, std::map<std::string, std::string> params, int devices,
           bool training) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.dtype = "f32";
  s.devices = devices;
  s.training = training;
  return workloads::generate_workload(s);
}

}  // namespace

std::vector<SmallWorkload> small_workloads(int devices) {
  const std::map<std::string, std::string> llama = {
      {"dim", "64"}, {"heads", "4"}, {"ffn", "96"}, {"seq", "32"}};
  auto layer = llama;
  layer["vocab"] = "100";
  const std::map<std::string, std::string> ffnn = {
      {"batch", "64"}, {"dim", "16"}, {"hidden", "64"}};
  std::vector<SmallWorkload> w;
  w.push_back({"chainmm", make("chainmm", {{"n", "64"}}, devices, false)});
  w.push_back({"ffnn", make("ffnn", ffnn, devices, false)});
  w.push_back({"ffnn-training", make("ffnn", ffnn, devices, true)});
  w.push_back({"llama-block", make("llama-block", llama, devices, false)});
  w.push_back({"llama-block-training", make("llama-block", llama, devices, true)});
  w.push_back({"llama-layer", make("llama-layer", layer, devices, false)});
  return w;
}

Assignment single_device(const Graph& g, int devices) {
  Assignment a;
  a.devices = devices;
  a.device_of.assign(static_cast<std::size_t>(g.num_nodes()), 0);
  return a;
}

Assignment random_assignment(const Graph& g, int devices, std::mt19937_64& rng) {
  Assignment a;
  a.devices = devices;
  for (NodeId v = 0; v < g.num_nodes(); ++v)
    a.device_of.push_back(static_cast<DeviceId>(rng() % static_cast<unsigned>(devices)));
  a.order.resize(static_cast<std::size_t>(g.num_nodes()));
  std::iota(a.order.begin(), a.order.end(), 0);
  std::shuffle(a.order.begin(), a.order.end(), rng);
  return a;
}

std::vector<std::vector<float>> all_outputs(const Engine& e) {
  std::vector<std::vector<float>> out;
  for (NodeId v = 0; v < e.graph().num_nodes(); ++v) {
    const auto s = e.output(v);
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

int thread_count() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ++n;
  return n;
}

}  // namespace doppler::test
