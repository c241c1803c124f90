#pragma once
// The distribution of placement problems a Doppler policy is pretrained on (docs/pretraining.md):
// families of generated workloads, random DAGs and graph files on device counts and platforms,
// drawn once into a fixed pool, and a held-out list that training never samples. Torch-free.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/problem.hpp"

namespace doppler {

/// How one parameter of a family is drawn.
struct ParamChoice {
  std::vector<std::string> values;  ///< choose one uniformly (when not a range)
  bool range = false;               ///< draw from [lo, hi] instead
  double lo = 0, hi = 0;            ///< range bounds (lo <= hi, lo > 0 when log)
  bool log = false;                 ///< log-uniform range
  bool integer = false;             ///< round the drawn value to an integer
};

/// One family of problems: a workload generator (or a graph file) with parameter choices.
struct ProblemFamily {
  std::string name;                           ///< label in logs ("llama-layer", a file name, ...)
  std::string workload;                       ///< registry name of the generator; empty for a file
  std::filesystem::path file;                 ///< a graph file (when workload is empty)
  std::map<std::string, ParamChoice> params;  ///< generator parameters
  std::vector<bool> training = {false};       ///< forward only / with backward pass, uniformly
  std::vector<int> devices = {4};             ///< device counts P, uniformly
  std::vector<std::string> hardware = {"reference"};  ///< "reference" or shipped profile names
  double weight = 1;                                  ///< relative draw probability (> 0)
};

/// One concrete problem of a pretraining run: its graph and platform, and how it was drawn.
struct PoolProblem {
  std::string name;  ///< e.g. "llama-layer[seq=1024,dim=2048]/a100x8": unique in a pool
  std::string family;
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Problem> problem;  ///< on graph (declared after it)
};

/// A pretraining distribution.
struct PretrainSpec {
  std::vector<ProblemFamily> families;  ///< what training draws from (at least one)
  std::vector<ProblemFamily> held_out;  ///< evaluated, never trained on (files or generators)
  int pool = 64;                        ///< problems drawn into the training pool
  std::int64_t max_ops = 600;           ///< larger drawn graphs are redrawn
  std::uint64_t seed = 1;               ///< seeds the pool's draws
  std::string text;                     ///< the normalised spec (JSON) as stored in checkpoints
};

/// Reads a spec from JSON text (`file` names it in messages; relative graph files are resolved
/// against `base`). InputError "FILE:LINE: problem" on anything invalid. Format:
///   {"pool": 64, "max_ops": 600, "seed": 1,
///    "families": [{"workload": "random-dag", "params": {"ops": {"min": 50, "max": 400,
///                  "int": true}, "ccr": {"min": 0.1, "max": 10, "log": true}},
///                  "devices": [2, 4, 8], "hardware": ["reference", "a100"], "weight": 2},
///                 {"workload": "llama-layer", "params": {"seq": [512, 1024]},
///                  "training": [false, true]},
///                 {"file": "graphs/mine.txt", "devices": [4]}],
///    "held_out": [{"file": "ref.txt", "devices": [4]}]}
/// A parameter is a scalar, a list (one is chosen), or a range object {min, max, log?, int?}.
PretrainSpec parse_pretrain_spec(const std::string& text, const std::string& file,
                                 const std::filesystem::path& base);

/// The spec as self-contained JSON text (graph files as absolute paths, held-out families
/// included): parse_pretrain_spec() of it gives the same spec.
std::string spec_json_text(const PretrainSpec& s);

/// Reads a spec file (InputError when unreadable or invalid).
PretrainSpec load_pretrain_spec(const std::filesystem::path& path);

/// The default distribution (embedded; docs/pretraining.md): chainmm, ffnn, llama-block and
/// llama-layer at several sizes and partitions with and without backward pass, and random DAGs
/// with transfer/compute ratios 0.1 to 10, on 2 to 16 devices, reference model and the V100,
/// A100 and H100 profiles; no held-out problems.
std::string default_pretrain_spec_text();

/// A held-out family for a graph file on `devices` devices of the reference model.
ProblemFamily held_out_file(const std::filesystem::path& file, int devices);

/// Draws the training pool: spec.pool problems, deterministic in spec.seed. A draw that fails
/// (inconsistent dimensions, too many ops, a device count the profile lacks) or whose graph is
/// one of `excluded` (fingerprints, e.g. the held-out graphs) is redrawn; InputError when the
/// families cannot produce a valid problem after many draws.
std::vector<PoolProblem> draw_pool(const PretrainSpec& spec,
                                   const std::vector<std::uint64_t>& excluded);

/// Every (file or generated) held-out problem: one per (family, device count, hardware), with
/// each family's parameters at their first value (ranges at their low end).
std::vector<PoolProblem> held_out_problems(const PretrainSpec& spec);

}  // namespace doppler
