#pragma once
// The workload registry: generate any workload by name from string parameters (what the CLI's
// `doppler generate` uses), list the workloads and their parameters, and the default workload.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "doppler/graph/assignment.hpp"
#include "doppler/graph/graph.hpp"

namespace doppler::workloads {

/// What to generate.
struct WorkloadSpec {
  std::string name = "llama-layer";           ///< a name of list_workloads(), e.g. random-dag
  std::map<std::string, std::string> params;  ///< parameter name -> decimal value
  std::string dtype;                          ///< "f32", "f16", or empty for the default
  int devices = 4;                            ///< sets the default partitioning (1..kMaxDevices)
  bool training = false;                      ///< add the backward pass (ffnn, llama-block, llama)
};

/// One parameter of a workload.
struct ParamInfo {
  std::string name;           ///< as given to --param
  std::string default_value;  ///< e.g. "10000", or "P" for a devices-derived default
  std::string help;           ///< meaning and unit
};

/// One workload.
struct WorkloadInfo {
  std::string name;                ///< registry name
  std::string description;         ///< one line
  std::vector<ParamInfo> params;   ///< accepted parameters, dimensions first
  std::string default_dtype;       ///< "f32" or "f16"; empty when dtype does not apply
  bool supports_training = false;  ///< accepts training = true
};

/// Every workload, in a fixed order.
std::vector<WorkloadInfo> list_workloads();

/// Generates a workload. Throws InputError with a one-line message for an unknown workload or
/// parameter name, a value that is not a positive number (seed: non-negative integer), a bad
/// dtype or device count, training where unsupported, or inconsistent dimensions. The graph's
/// metadata holds every effective parameter (partitioning included) as strings.
Graph generate_workload(const WorkloadSpec& spec);

/// A generated graph and, for a workload planted around a known optimum (planted), the
/// assignment that reaches it (nullopt for the others).
struct GeneratedWorkload {
  Graph graph;                        ///< what generate_workload returns
  std::optional<Assignment> optimal;  ///< the planted optimal assignment, if any
};

/// generate_workload, also returning the planted optimal assignment where there is one.
GeneratedWorkload generate_workload_with_assignment(const WorkloadSpec& spec);

/// The specification of the default workload: llama-layer with its defaults for 4 devices.
WorkloadSpec default_workload_spec();

/// generate_workload(default_workload_spec()).
Graph default_workload();

/// The workload of `doppler demo` and of the engine benchmarks: one Llama layer (llama-layer)
/// in f32 at a size a 2-core CPU runs in about 10 ms (seq 256, dim 256, 4 heads, ffn 512,
/// vocab 1024), blocked for `devices` devices (1..kMaxDevices, checked by generate_workload).
WorkloadSpec demo_workload_spec(int devices);

}  // namespace doppler::workloads
