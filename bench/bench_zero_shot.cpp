// Zero-shot placement time of a pretrained Doppler policy (docs/pretraining.md): a random DAG of
// N ops (doppler generate random-dag: width 64, density 0.1, ccr 1) on P devices of the
// reference model, placed by one greedy rollout (DopplerPolicy::place: features, both encoders,
// the rollout; no simulation) and by the best of 64 sampled rollouts (each simulated), the
// policy loaded once. Goal (issue "Pretrained Doppler"): one rollout of 2,000 ops on 8 devices
// in < 0.5 s on the 2-core development machine.
// Usage: bench_zero_shot [--policy CKPT] [--ops N] [--devices P] [--repeat R]
// Prints one Markdown row per measurement: median and min over R repetitions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "doppler/heuristics/problem.hpp"
#include "doppler/policy/doppler_policy.hpp"
#include "doppler/workloads/random_dag.hpp"

namespace {

using Clock = std::chrono::steady_clock;

template <class F>
std::pair<double, double> median_min(int repeat, F f) {
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

}  // namespace

int main(int argc, char** argv) {
  std::string policy = doppler::default_policy_path().string();
  int ops = 2000, devices = 8, repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--policy")
      policy = argv[i + 1];
    else if (a == "--ops")
      ops = std::atoi(argv[i + 1]);
    else if (a == "--devices")
      devices = std::atoi(argv[i + 1]);
    else if (a == "--repeat")
      repeat = std::max(1, std::atoi(argv[i + 1]));
    else {
      std::fprintf(stderr,
                   "usage: bench_zero_shot [--policy CKPT] [--ops N] [--devices P] [--repeat R]\n");
      return 2;
    }
  }
  try {
    doppler::DopplerPolicy p = doppler::DopplerPolicy::load(policy);
    doppler::workloads::RandomDagParams rp;
    rp.ops = ops;
    rp.width = 64;
    rp.density = 0.1;
    rp.ccr = 1;
    rp.seed = 7;
    const doppler::Graph g = doppler::workloads::generate_random_dag(rp);
    const doppler::Problem problem(g, doppler::Platform::reference(devices));
    fmt::print("| measurement ({} ops, {} devices) | median s | min s |\n|---|---:|---:|\n", ops,
               devices);
    const auto [m1, b1] = median_min(repeat, [&] { p.place(problem); });
    fmt::print("| zero-shot, 1 greedy rollout | {:.3f} | {:.3f} |\n", m1, b1);
    doppler::SampleOptions o;
    o.samples = 64;
    const auto [m64, b64] = median_min(std::max(1, repeat / 2), [&] { p.sample(problem, o); });
    fmt::print("| zero-shot, best of 64 rollouts (2 threads, simulated) | {:.3f} | {:.3f} |\n", m64,
               b64);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_zero_shot: %s\n", e.what());
    return 1;
  }
  return 0;
}
