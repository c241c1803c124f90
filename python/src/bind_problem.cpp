// doppler.Problem (simulate, simulate_many, schedule) and doppler.place over the registry.
#include <pybind11/stl.h>

#include <algorithm>
#include <optional>
#include <thread>

#include "bindings.hpp"

#include "doppler/hardware/platform_for.hpp"
#include "doppler/heuristics/run_placer.hpp"
#include "doppler/sim/schedule.hpp"
#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

using DeviceArray = py::array_t<DeviceId, py::array::c_style | py::array::forcecast>;

ProblemPtr make_problem(GraphPtr g, int devices, const std::optional<std::string>& hardware) {
  if (!g) throw InputError("Problem: graph is None");
  auto p = std::make_shared<PyProblem>();
  p->graph = std::move(g);
  p->hardware = hardware.value_or("");
  p->problem = std::make_unique<Problem>(*p->graph, platform_for(*p->graph, p->hardware, devices));
  return p;
}

std::span<const DeviceId> one_assignment(const DeviceArray& a) {
  if (a.ndim() != 1) throw InputError("simulate: the assignment must be 1-D (one device per op)");
  return {a.data(), static_cast<std::size_t>(a.shape(0))};
}

double simulate(const PyProblem& p, const DeviceArray& a) {
  const auto devs = one_assignment(a);
  py::gil_scoped_release unlocked;
  thread_local SimWorkspace ws;  // resized by every call, so it serves any problem
  return p.problem->simulator().makespan(devs, ws);
}

py::array_t<double> simulate_many(const PyProblem& p, const DeviceArray& a, int threads) {
  if (a.ndim() != 2)
    throw InputError("simulate_many: assignments must be a K x N array (one row per assignment)");
  const auto k = static_cast<std::size_t>(a.shape(0)), n = static_cast<std::size_t>(a.shape(1));
  std::vector<std::vector<DeviceId>> batch(k);
  for (std::size_t i = 0; i < k; ++i) batch[i].assign(a.data() + i * n, a.data() + (i + 1) * n);
  std::vector<double> out;
  {
    py::gil_scoped_release unlocked;
    out = p.problem->simulator().makespans(batch, threads);
  }
  return to_array<double>(out);
}

py::dict schedule(const PyProblem& p, const DeviceArray& a) {
  Assignment as;
  as.devices = p.problem->devices();
  const auto devs = one_assignment(a);
  as.device_of.assign(devs.begin(), devs.end());
  as.validate(*p.graph, 0, "assignment");
  Schedule s;
  {
    py::gil_scoped_release unlocked;
    s = p.problem->simulator().simulate(as);
  }
  return py::dict(
      py::arg("makespan") = s.makespan, py::arg("device") = to_array<DeviceId>(s.device),
      py::arg("ready") = to_array<double>(s.ready), py::arg("start") = to_array<double>(s.start),
      py::arg("finish") = to_array<double>(s.finish), py::arg("busy") = to_array<double>(s.busy),
      py::arg("cross_transfers") = s.cross_transfers, py::arg("cross_bytes") = s.cross_bytes,
      py::arg("unit") = s.unit == CostUnit::seconds ? "seconds" : "reference");
}

PlacementRun place(const ProblemPtr& p, const std::string& method,
                   const std::optional<std::int64_t>& budget,
                   const std::optional<double>& time_budget, std::uint64_t seed, int threads) {
  if (!p) throw InputError("place: problem is None");
  if (budget && *budget < 0) throw InputError("place: budget must be >= 0 simulator calls");
  if (time_budget && *time_budget < 0) throw InputError("place: time_budget must be >= 0 seconds");
  if (threads < 0) throw InputError("place: threads must be >= 0 (0: every core)");
  PlaceOptions o;
  o.seed = seed;
  o.budget = {budget.value_or(0), time_budget.value_or(0)};
  o.threads =
      threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  py::gil_scoped_release unlocked;
  return run_placer(method, *p->problem, o);
}

void bind_problem_class(py::module_& m) {
  py::class_<PyProblem, ProblemPtr>(m, "Problem",
                                    "A graph on `devices` devices of a platform: the reference "
                                    "model (hardware=None) or a hardware profile (a shipped name "
                                    "such as 'v100' or a doppler-hardware JSON file).")
      .def(py::init(&make_problem), py::arg("graph"), py::arg("devices"),
           py::arg("hardware") = py::none())
      .def_property_readonly("graph", [](const PyProblem& p) { return p.graph; })
      .def_property_readonly("devices", [](const PyProblem& p) { return p.problem->devices(); })
      .def_property_readonly(
          "hardware", [](const PyProblem& p) { return p.hardware; },
          "the profile's name or file, '' for the reference model")
      .def_property_readonly(
          "unit",
          [](const PyProblem& p) {
            return p.problem->platform().unit() == CostUnit::seconds ? "seconds" : "reference";
          },
          "unit of every makespan: 'seconds' (hardware) or 'reference' (abstract units)")
      .def_property_readonly(
          "lower_bound", [](const PyProblem& p) { return p.problem->lower_bound(); },
          "makespan lower bound without transfers")
      .def_property_readonly(
          "transfer_lower_bound",
          [](const PyProblem& p) { return p.problem->transfer_lower_bound(); },
          "a tighter lower bound that also charges transfers")
      .def_property_readonly(
          "calls", [](const PyProblem& p) { return p.problem->simulator().calls(); },
          "simulator calls made on this problem so far")
      .def("simulate", &simulate, py::arg("assignment"),
           "makespan of an assignment (one device per op), FIFO dispatch, in `unit`")
      .def("simulate_many", &simulate_many, py::arg("assignments"), py::arg("threads") = 0,
           "makespans of a K x N array of assignments on `threads` threads (0: all cores); "
           "identical to K simulate() calls")
      .def("schedule", &schedule, py::arg("assignment"),
           "the simulated schedule: makespan and per-op device, ready, start and finish times")
      .def("__repr__", [](const PyProblem& p) {
        return "<doppler.Problem '" + p.graph->meta().name + "' on " +
               std::to_string(p.problem->devices()) + " devices (" + p.problem->platform().name() +
               ")>";
      });
}

void bind_placement(py::module_& m) {
  py::class_<PlacementRun>(m, "Placement", "The result of doppler.place.")
      .def_property_readonly(
          "assignment",
          [](const PlacementRun& r) { return to_array<DeviceId>(r.assignment.device_of); },
          "device of every op (int32 array, length num_ops)")
      .def_property_readonly(
          "order", [](const PlacementRun& r) { return to_array<std::int64_t>(r.assignment.order); },
          "the method's priority order (empty when it has none)")
      .def_readonly("makespan", &PlacementRun::makespan, "simulated makespan (problem units)")
      .def_readonly("seconds", &PlacementRun::seconds, "wall-clock placement time (seconds)")
      .def_readonly("evaluations", &PlacementRun::evaluations, "simulator calls the method made")
      .def_property_readonly("method", [](const PlacementRun& r) { return r.assignment.method; })
      .def_readonly("note", &PlacementRun::note, "the method's status line, or ''")
      .def_property_readonly(
          "curve",
          [](const PlacementRun& r) {
            py::list out;
            for (const ProgressPoint& p : r.curve)
              out.append(py::make_tuple(p.seconds, p.calls, p.makespan));
            return out;
          },
          "the search's anytime curve: (seconds, simulator calls, best makespan) at each "
          "improvement it reported (empty for methods that report none)")
      .def("__repr__", [](const PlacementRun& r) {
        return "<doppler.Placement " + r.assignment.method + ": makespan " +
               std::to_string(r.makespan) + ">";
      });
}

}  // namespace

void bind_problem(py::module_& m) {
  bind_problem_class(m);
  bind_placement(m);
  m.def("place", &place, py::arg("problem"), py::arg("method") = "auto", py::kw_only(),
        py::arg("budget") = py::none(), py::arg("time_budget") = py::none(), py::arg("seed") = 0,
        py::arg("threads") = 0,
        "Place with any registry method spec ('auto' (the default: picks and combines methods), "
        "'heft', 'local-search', 'multilevel:inner=dsc', 'doppler' with the shipped model, ...); "
        "budget: simulator calls, time_budget: seconds, threads: threads of the searches (0: "
        "every core; under a call budget the result depends on the count, not on timing).");
  m.def(
      "methods",
      [] {
        py::list out;
        for (const PlacerInfo& i : placer_infos())
          out.append(py::dict(py::arg("name") = i.name, py::arg("description") = i.description,
                              py::arg("params") = i.params,
                              py::arg("deterministic") = i.deterministic,
                              py::arg("learned") = i.learned));
        return out;
      },
      "Every placement method of the registry (name, description, params, learned).");
}

}  // namespace doppler::python
