// Per-episode training time and inference (greedy placement) time of Doppler, Placeto and GDP:
// the paper's scalability figure (scripts/scalability.sh runs it on the reference graphs and on
// random DAGs made by `doppler generate random-dag -p ops=N`). P devices, reference model,
// single-threaded torch, everything in memory (no process start, no checkpoint loading).
//  - Doppler: Stage II with the standard preset, E updates of K = 16 rollouts (encoders once per
//    update, 16 rollouts and simulations on two threads, one update); the time per episode is
//    the time per rollout (update time / 16); inference: DopplerTrainer::greedy().
//  - Placeto: the first min(N, S) steps of an episode (each step recomputes the embedding of
//    the whole graph and simulates); per-episode time = measured time x N / steps (every step
//    costs the same); inference: the final greedy episode (N forward passes, no simulation).
//  - GDP: one-shot episodes (one forward, one simulation, one backward); inference: one forward.
//  - --placeto-max-ops M: Placeto is skipped ("-") on graphs of more than M ops (its greedy
//    placement alone takes minutes on 5,000 ops).
// Usage: bench_learned [--episodes E] [--placeto-steps S] [--placeto-max-ops M] [--devices P]
//        GRAPH...
// Prints a Markdown table, one row per graph (named by its file's stem).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/train/baselines.hpp"
#include "doppler/train/trainer.hpp"

namespace {

using namespace doppler;
using Clock = std::chrono::steady_clock;

struct Options {
  int episodes = 3, placeto_steps = 200, devices = 4;
  int placeto_max_ops = std::numeric_limits<int>::max();
  std::vector<std::filesystem::path> graphs;
};

struct Row {
  double train[3] = {0, 0, 0}, infer[3] = {0, 0, 0};  // Doppler, Placeto, GDP (seconds)
  int decided = 0;
};

std::string seconds(double s) {
  if (s < 0) return "-";
  return s < 1 ? fmt::format("{:.1f} ms", 1e3 * s) : fmt::format("{:.2f} s", s);
}

Row measure(const Problem& problem, const Options& o) {
  Row row;
  {
    TrainConfig c;
    c.stage = TrainStage::simulation;
    c.rollouts = 16;  // the standard preset: K = 16 rollouts per update
    c.episodes = 16 * o.episodes;
    c.checkpoint_every = 0;
    c.seed = 1;
    DopplerTrainer trainer(problem, c);
    const TrainResult r = trainer.train();
    row.train[0] = r.seconds / r.episodes;
    const auto t0 = Clock::now();
    trainer.greedy();
    row.infer[0] = std::chrono::duration<double>(Clock::now() - t0).count();
  }
  if (problem.graph().num_nodes() > o.placeto_max_ops) {
    row.train[1] = row.infer[1] = -1;  // skipped
  } else {
    BaselineConfig c;
    c.seed = 1;
    c.episodes = 1;
    // Truncate the episode to S steps: S step calls + the initial and greedy evaluations.
    c.calls = o.placeto_steps + 2;
    const BaselineResult r = train_placeto(problem, c);
    row.decided = r.decisions_per_episode;
    row.train[1] = r.seconds * r.decisions_per_episode / static_cast<double>(r.decisions);
    row.infer[1] = r.greedy_seconds;
  }
  {
    BaselineConfig c;
    c.seed = 1;
    c.calls = 0;
    c.episodes = o.episodes;
    const BaselineResult r = train_gdp(problem, c);
    row.decided = r.decisions_per_episode;
    row.train[2] = r.seconds / r.episodes;
    row.infer[2] = r.greedy_seconds;
  }
  return row;
}

void print(const std::string& name, const Row& r) {
  std::printf("| %s | %d | %s | %s | %s | %s | %s | %s |\n", name.c_str(), r.decided,
              seconds(r.train[0]).c_str(), seconds(r.train[1]).c_str(), seconds(r.train[2]).c_str(),
              seconds(r.infer[0]).c_str(), seconds(r.infer[1]).c_str(),
              seconds(r.infer[2]).c_str());
  std::fflush(stdout);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw InputError(a + " needs a value");
      return argv[++i];
    };
    if (a == "--episodes") {
      o.episodes = std::stoi(next());
    } else if (a == "--placeto-steps") {
      o.placeto_steps = std::stoi(next());
    } else if (a == "--placeto-max-ops") {
      o.placeto_max_ops = std::stoi(next());
    } else if (a == "--devices") {
      o.devices = std::stoi(next());
    } else if (a.rfind("--", 0) == 0) {
      throw InputError("unknown option " + a);
    } else {
      o.graphs.emplace_back(a);
    }
  }
  if (o.episodes < 1 || o.placeto_steps < 1 || o.devices < 1)
    throw InputError("--episodes, --placeto-steps and --devices must be positive");
  if (o.graphs.empty()) throw InputError("usage: bench_learned [options] GRAPH...");
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse(argc, argv);
    use_single_threaded_math();
    std::printf(
        "Per-episode training time and inference time on %d devices, reference model, "
        "single-threaded; Doppler and GDP: mean over %d episodes; Placeto: %d steps "
        "measured, scaled to a full episode of N steps.\n\n",
        o.devices, o.episodes, o.placeto_steps);
    std::printf(
        "| graph | decided ops N | Doppler train/ep | Placeto train/ep | GDP train/ep | "
        "Doppler infer | Placeto infer | GDP infer |\n|---|---:|---:|---:|---:|---:|---:|"
        "---:|\n");
    {  // Warm-up (one-time allocations and initialisation), not reported.
      const Graph g = load_graph(o.graphs.front());
      const Problem problem(g, Platform::reference(o.devices));
      Options w = o;
      w.episodes = 1;
      w.placeto_steps = 2;
      measure(problem, w);
    }
    for (const auto& path : o.graphs) {
      const Graph g = load_graph(path);
      const Problem problem(g, Platform::reference(o.devices));
      print(path.stem().string(), measure(problem, o));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_learned: %s\n", e.what());
    return 2;
  }
  return 0;
}
