// doppler._doppler.EnvCore: the step-level placement environment (policy/placement_env.hpp) that
// doppler.env.PlacementEnv wraps in the Gymnasium API.
#include <pybind11/stl.h>

#include "bindings.hpp"

#include "doppler/policy/features.hpp"
#include "doppler/policy/placement_env.hpp"
#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

// The environment and the problem it keeps alive.
struct PyEnv {
  ProblemPtr problem;
  PlacementEnv env;
  PyEnv(ProblemPtr p, EnvMode mode, bool defer_inputs)
      : problem(std::move(p)), env(*problem->problem, mode, defer_inputs) {}
};

std::unique_ptr<PyEnv> make_env(ProblemPtr p, const std::string& mode, bool defer_inputs) {
  if (!p) throw InputError("PlacementEnv: problem is None");
  const auto m = parse_env_mode(mode);
  if (!m) throw InputError("PlacementEnv: mode must be 'sel_plc' or 'plc', not '" + mode + "'");
  return std::make_unique<PyEnv>(std::move(p), *m, defer_inputs);
}

py::array_t<float> device_features(const PyEnv& e) {
  const int p = e.problem->problem->devices();
  py::array_t<float> a({static_cast<py::ssize_t>(p), static_cast<py::ssize_t>(kDeviceFeatures)});
  const std::vector<float> f = e.env.device_features();
  float* out = a.mutable_data();
  for (std::size_t i = 0; i < static_cast<std::size_t>(p * kDeviceFeatures); ++i)
    out[i] = f.empty() ? 0.0f : f[i];
  return a;
}

py::array_t<std::int8_t> candidate_mask(const PyEnv& e) {
  py::array_t<std::int8_t> a(static_cast<py::ssize_t>(e.problem->graph->num_nodes()));
  std::fill(a.mutable_data(), a.mutable_data() + a.size(), std::int8_t{0});
  for (NodeId v : e.env.candidates()) a.mutable_data()[v] = 1;
  return a;
}

// Static node features (N x 5, z-scored per column) and edge_index (2 x E) of the problem.
py::tuple static_features(const PyEnv& e) {
  const Problem& p = *e.problem->problem;
  const GraphFeatures f = graph_features(p.graph(), p.cost(), p.analysis(), p.devices());
  const auto n = static_cast<py::ssize_t>(f.num_nodes);
  py::array_t<float> node({n, static_cast<py::ssize_t>(f.cols)});
  std::copy(f.node.begin(), f.node.end(), node.mutable_data());
  const Graph& g = p.graph();
  py::array_t<std::int64_t> edges({py::ssize_t{2}, static_cast<py::ssize_t>(g.num_edges())});
  auto r = edges.mutable_unchecked<2>();
  for (EdgeId k = 0; k < g.num_edges(); ++k) {
    r(0, k) = g.edge(k).src;
    r(1, k) = g.edge(k).dst;
  }
  return py::make_tuple(node, edges);
}

}  // namespace

void bind_env(py::module_& m) {
  py::class_<PyEnv>(m, "EnvCore",
                    "The step-level placement episode behind doppler.env.PlacementEnv.")
      .def(py::init(&make_env), py::arg("problem"), py::arg("mode") = "sel_plc",
           py::arg("defer_inputs") = false)
      .def("reset", [](PyEnv& e) { e.env.reset(); })
      .def(
          "select", [](PyEnv& e, NodeId v) { e.env.select(v); }, py::arg("op"))
      .def(
          "place", [](PyEnv& e, DeviceId d) { e.env.place(d); }, py::arg("device"))
      .def_property_readonly("selecting", [](const PyEnv& e) { return e.env.selecting(); })
      .def_property_readonly("op", [](const PyEnv& e) { return e.env.op(); })
      .def_property_readonly("done", [](const PyEnv& e) { return e.env.done(); })
      .def_property_readonly("steps", [](const PyEnv& e) { return e.env.steps(); })
      .def_property_readonly("makespan", [](const PyEnv& e) { return e.env.makespan(); })
      .def_property_readonly("reference_makespan",
                             [](const PyEnv& e) { return e.env.reference_makespan(); })
      .def_property_readonly("reward", [](const PyEnv& e) { return e.env.reward(); })
      .def("device_features", &device_features)
      .def("candidate_mask", &candidate_mask)
      .def("is_candidate", [](const PyEnv& e, NodeId v) { return e.env.is_candidate(v); })
      .def("device_of", [](const PyEnv& e) { return to_array<DeviceId>(e.env.device_of()); })
      .def("order", [](const PyEnv& e) { return to_array<std::int64_t>(e.env.order()); })
      .def("static_features", &static_features);
}

}  // namespace doppler::python
