#pragma once
// Shared pieces of the Python extension modules doppler._doppler and doppler._doppler_learn
// (pybind11): the Python-side Graph and Problem objects and the functions that add each part of
// the API to a module.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <string>

#include "doppler/graph/graph.hpp"
#include "doppler/heuristics/problem.hpp"
#include "doppler/heuristics/run_placer.hpp"

namespace doppler::python {

namespace py = pybind11;

/// A graph shared by Python objects (Problem keeps its graph alive).
using GraphPtr = std::shared_ptr<Graph>;

/// A placement problem as Python sees it: the graph it keeps alive, the hardware profile name
/// ("" for the reference model) and the library Problem.
struct PyProblem {
  GraphPtr graph;
  std::string hardware;
  std::unique_ptr<Problem> problem;
};
using ProblemPtr = std::shared_ptr<PyProblem>;

/// doppler.Placement, the one result type of doppler.place and Policy.sample: the run and, from
/// a policy's sample, PLC's device distribution per op (N x P; rows empty where PLC did not
/// decide; empty otherwise).
struct PyPlacement {
  PlacementRun run;
  std::vector<std::vector<double>> probabilities;
  int devices = 0;  ///< P (the width of `probabilities`)
};

/// The device ids of `ndim`-D `value` (1: one assignment; 2: K x N, one per row), checked
/// against problem `p`: integer dtype (or floats holding whole numbers), N per row, each id in
/// 0..P-1. InputError names `what` and the first bad entry and its op; `rows` gets K.
std::vector<DeviceId> assignment_rows(const py::handle& value, const PyProblem& p, int ndim,
                                      const std::string& what, std::int64_t& rows);

/// A 1-D NumPy array copied from `v`.
template <typename T, typename V>
py::array_t<T> to_array(const V& v) {
  py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
  auto* out = a.mutable_data();
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = static_cast<T>(v[i]);
  return a;
}

/// Graph, load_graph, generate, import_onnx, graph_from_arrays, workloads().
void bind_graph(py::module_& m);
/// Problem (simulate, simulate_many, schedule), Placement, place().
void bind_problem(py::module_& m);
/// methods(): the registry's placement methods.
void bind_methods(py::module_& m);
/// The step-level environment core (doppler.env wraps it in the Gymnasium API).
void bind_env(py::module_& m);
/// Placement (pickles).
void bind_placement(py::module_& m);
/// Policy (a trained Doppler policy) and default_policy_path(): doppler._doppler_learn's.
void bind_policy(py::module_& m);
/// The learned methods as deferred placers of the registry, and _load_learned(), which imports
/// doppler._doppler_learn (libtorch) on first use.
void bind_learned_loader(py::module_& m);

}  // namespace doppler::python
