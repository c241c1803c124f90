// doppler.Placement: the result of doppler.place and Policy.sample (picklable).
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <tuple>

#include "bindings.hpp"

#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

py::object probabilities(const PyPlacement& r) {
  if (r.probabilities.empty()) return py::none();
  const auto n = static_cast<py::ssize_t>(r.probabilities.size());
  py::array_t<double> out({n, static_cast<py::ssize_t>(r.devices)});
  auto w = out.mutable_unchecked<2>();
  for (py::ssize_t v = 0; v < n; ++v)
    for (py::ssize_t d = 0; d < r.devices; ++d) {
      const auto& row = r.probabilities[static_cast<std::size_t>(v)];
      w(v, d) = row.empty() ? std::nan("") : row[static_cast<std::size_t>(d)];
    }
  return out;
}

py::list curve(const PyPlacement& r) {
  py::list out;
  for (const ProgressPoint& p : r.run.curve)
    out.append(py::make_tuple(p.seconds, p.calls, p.makespan));
  return out;
}

// Pickled state: every field, as plain Python values.
py::tuple get_state(const PyPlacement& r) {
  const PlacementRun& x = r.run;
  std::vector<std::tuple<double, std::int64_t, double>> c;
  for (const ProgressPoint& p : x.curve) c.emplace_back(p.seconds, p.calls, p.makespan);
  return py::make_tuple(1, x.assignment.devices, x.assignment.device_of, x.assignment.order,
                        x.assignment.method, x.makespan, x.seconds, x.evaluations, x.note,
                        x.cross_transfers, x.cross_bytes, c, r.probabilities, r.devices);
}

PyPlacement set_state(const py::tuple& t) {
  if (t.size() != 14 || t[0].cast<int>() != 1)
    throw InputError("Placement: unpickling a state of another version");
  PyPlacement r;
  PlacementRun& x = r.run;
  x.assignment.devices = t[1].cast<int>();
  x.assignment.device_of = t[2].cast<std::vector<DeviceId>>();
  x.assignment.order = t[3].cast<std::vector<NodeId>>();
  x.assignment.method = t[4].cast<std::string>();
  x.makespan = t[5].cast<double>();
  x.seconds = t[6].cast<double>();
  x.evaluations = t[7].cast<std::int64_t>();
  x.note = t[8].cast<std::string>();
  x.cross_transfers = t[9].cast<int>();
  x.cross_bytes = t[10].cast<double>();
  for (const auto& [s, calls, m] :
       t[11].cast<std::vector<std::tuple<double, std::int64_t, double>>>())
    x.curve.push_back({s, calls, m});
  r.probabilities = t[12].cast<std::vector<std::vector<double>>>();
  r.devices = t[13].cast<int>();
  return r;
}

}  // namespace

void bind_placement(py::module_& m) {
  py::class_<PyPlacement>(m, "Placement",
                          "A placement and how it was found: the result of doppler.place and "
                          "Policy.sample (picklable).")
      .def_property_readonly(
          "assignment",
          [](const PyPlacement& r) { return to_array<DeviceId>(r.run.assignment.device_of); },
          "device of every op (int32 array, length num_ops)")
      .def_property_readonly(
          "order",
          [](const PyPlacement& r) { return to_array<std::int64_t>(r.run.assignment.order); },
          "the method's priority order (empty when it has none)")
      .def_property_readonly(
          "devices", [](const PyPlacement& r) { return r.run.assignment.devices; },
          "device count P")
      .def_property_readonly(
          "makespan", [](const PyPlacement& r) { return r.run.makespan; },
          "simulated makespan (FIFO dispatch, problem units)")
      .def_property_readonly(
          "seconds", [](const PyPlacement& r) { return r.run.seconds; },
          "wall-clock time the method took (seconds)")
      .def_property_readonly(
          "calls", [](const PyPlacement& r) { return r.run.evaluations; },
          "simulator calls the method made (its budget's unit)")
      .def_property_readonly(
          "evaluations", [](const PyPlacement& r) { return r.run.evaluations; },
          "the same as calls (older name)")
      .def_property_readonly(
          "method", [](const PyPlacement& r) { return r.run.assignment.method; },
          "the method spec that produced it")
      .def_property_readonly(
          "note", [](const PyPlacement& r) { return r.run.note; },
          "the method's status line, or ''")
      .def_property_readonly("curve", &curve,
                             "the search's anytime curve: (seconds, simulator calls, best "
                             "makespan) at each improvement it reported (empty for methods that "
                             "report none)")
      .def_property_readonly("probabilities", &probabilities,
                             "from Policy.sample: N x P, PLC's device distribution for each op at "
                             "the step the best rollout placed it (NaN rows for ops PLC did not "
                             "decide); None from doppler.place")
      .def(py::pickle(&get_state, &set_state))
      .def("__repr__", [](const PyPlacement& r) -> py::str {
        return py::str("<doppler.Placement {}: makespan {:.6g} on {} devices, {} calls, {:.3g} s>")
            .format(r.run.assignment.method, r.run.makespan, r.run.assignment.devices,
                    r.run.evaluations, r.run.seconds);
      });
}

}  // namespace doppler::python
