#pragma once
// The body of `doppler compare`, shared with `doppler demo`.
#include <cstdint>
#include <string>
#include <vector>

#include "engine_options.hpp"

#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/budget.hpp"

namespace doppler::cli {

/// Options of `doppler compare`.
struct CompareOptions {
  // graph: path of the graph file (unused by compare_graph)
  std::string graph, methods = "all", hardware, csv, json_file, gantt_dir, assignments_dir;
  std::string curves;          ///< SVG file of the anytime curves (empty: none)
  int devices = 0, seeds = 3;  // devices 0: the graph's recorded count (devices_for)
  int first_seed = 0;  ///< randomised methods run seeds first_seed .. first_seed + seeds - 1
  std::int64_t budget = kDefaultSearchCalls;
  double time_budget = 0;
  int threads = 1;  ///< threads of each search (0: every core)
  int lanes = 0;    ///< speculative lanes per annealing chain (0: the rule)
  bool json = false;
  bool markdown = false;          ///< print the table as Markdown
  bool measure = false;           ///< also run every assignment on the engine
  int measure_repeat = 5;         ///< measured runs per assignment at least (median)
  int measure_max_repeat = 41;    ///< at most (more while the 95% interval is wider than target)
  double measure_target = 0.01;   ///< relative half-width of the median's 95% interval to reach
  double measure_seconds = 2;     ///< seconds of measured runs per assignment before stopping
  EngineCliOptions engine;        ///< engine flags for --measure and doppler-sys
  std::string backend = "local";  ///< --measure on: local (threads) or cuda
  /// --saved NAME=FILE: rows of saved assignments (FILE's placement simulated, no search), the
  /// files of one NAME its seeds in the order given; beside the methods, or alone with
  /// `--methods none`.
  std::vector<std::string> saved;
};

/// Runs every method of `o.methods` on `g` and prints the table (or JSON), writing the
/// requested files.
void compare_graph(const Graph& g, const CompareOptions& o);

}  // namespace doppler::cli
