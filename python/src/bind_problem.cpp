// doppler.Problem (simulate, simulate_many, schedule) and doppler.place over the registry.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <thread>

#include "bindings.hpp"
#include "watch.hpp"

#include "doppler/hardware/platform_for.hpp"
#include "doppler/heuristics/placer.hpp"
#include "doppler/heuristics/run_placer.hpp"
#include "doppler/sim/schedule.hpp"
#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

ProblemPtr make_problem(GraphPtr g, int devices,
                        const std::optional<std::filesystem::path>& hardware) {
  if (!g) throw InputError("Problem: graph is None");
  auto p = std::make_shared<PyProblem>();
  p->graph = std::move(g);
  p->hardware = hardware ? hardware->string() : "";
  p->problem = std::make_unique<Problem>(*p->graph, platform_for(*p->graph, p->hardware, devices));
  if (const std::string w = pricing_warning(*p->graph, p->hardware); !w.empty())
    if (PyErr_WarnEx(PyExc_UserWarning, (w + " (drop hardware=)").c_str(), 1) != 0)
      throw py::error_already_set();  // warnings turned into errors
  if (const std::string w = kernel_coverage_warning(*p->graph, p->problem->platform()); !w.empty())
    if (PyErr_WarnEx(PyExc_UserWarning, w.c_str(), 1) != 0) throw py::error_already_set();
  return p;
}

double simulate(const PyProblem& p, const py::handle& a) {
  std::int64_t rows = 0;
  const std::vector<DeviceId> devs = assignment_rows(a, p, 1, "simulate: assignment", rows);
  py::gil_scoped_release unlocked;
  thread_local SimWorkspace ws;  // resized by every call, so it serves any problem
  return p.problem->simulator().makespan(devs, ws);
}

// Batches this large run on a watched worker (Ctrl-C); smaller ones directly.
constexpr std::int64_t kWatchedOps = 200000;

// `threads`, or every core for 0.
int thread_count(int threads) {
  return threads > 0 ? threads
                     : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

py::array_t<double> simulate_many(const PyProblem& p, const py::handle& a, int threads) {
  if (threads < 0) throw InputError("simulate_many: threads must be >= 0 (0: every core)");
  std::int64_t k = 0;
  const std::vector<DeviceId> all = assignment_rows(a, p, 2, "simulate_many: assignments", k);
  const std::int64_t n = p.graph->num_nodes();
  // The makespans of rows [from, to) of `all`, appended to `out`.
  std::vector<double> out;
  const auto run_rows = [&](std::int64_t from, std::int64_t to) {
    std::vector<std::vector<DeviceId>> batch(static_cast<std::size_t>(to - from));
    for (std::int64_t i = from; i < to; ++i)
      batch[static_cast<std::size_t>(i - from)].assign(all.begin() + i * n,
                                                       all.begin() + (i + 1) * n);
    const std::vector<double> m = p.problem->simulator().makespans(batch, threads);
    out.insert(out.end(), m.begin(), m.end());
  };
  if (k * n < kWatchedOps) {
    {
      py::gil_scoped_release unlocked;
      run_rows(0, k);
    }
    return to_array<double>(out);
  }
  // Chunks of about kWatchedOps ops per thread, so that a stop takes effect within one chunk.
  const int width = thread_count(threads);
  const std::int64_t chunk =
      std::max<std::int64_t>(width, width * kWatchedOps / std::max<std::int64_t>(n, 1));
  Watch watch;
  watch.run([&] {
    for (std::int64_t i = 0; i < k && !watch.stopped(); i += chunk)
      run_rows(i, std::min(k, i + chunk));
  });
  return to_array<double>(out);
}

py::dict schedule(const PyProblem& p, const py::handle& a) {
  std::int64_t rows = 0;
  Assignment as;
  as.devices = p.problem->devices();
  as.device_of = assignment_rows(a, p, 1, "schedule: assignment", rows);
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

PyPlacement place(const ProblemPtr& p, const std::string& method,
                  const std::optional<std::int64_t>& budget,
                  const std::optional<double>& time_budget, std::uint64_t seed, int threads,
                  int lanes, const py::object& callback) {
  if (!p) throw InputError("place: problem is None");
  if (budget && *budget < 0) throw InputError("place: budget must be >= 0 simulator calls");
  if (time_budget && *time_budget < 0) throw InputError("place: time_budget must be >= 0 seconds");
  if (threads < 0) throw InputError("place: threads must be >= 0 (0: every core)");
  if (lanes < 0) throw InputError("place: lanes must be >= 0 (0: the rule, 1: chains only)");
  make_placer(method);  // an unknown method or option fails here, before any thread starts
  PlaceOptions o;
  o.seed = seed;
  o.budget = {budget.value_or(0), time_budget.value_or(0)};
  o.threads = thread_count(threads);
  o.lanes = lanes;
  Watch watch(callback);
  o.progress = watch.progress();
  PyPlacement out;
  out.devices = p->problem->devices();
  watch.run([&] { out.run = run_placer(method, *p->problem, o); });
  return out;
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

}  // namespace

void bind_problem(py::module_& m) {
  bind_problem_class(m);
  m.def("place", &place, py::arg("problem"), py::arg("method") = "auto", py::kw_only(),
        py::arg("budget") = py::none(), py::arg("time_budget") = py::none(), py::arg("seed") = 0,
        py::arg("threads") = 0, py::arg("lanes") = 0, py::arg("callback") = py::none(),
        "Place with any registry method spec ('auto' (the default: picks and combines methods), "
        "'heft', 'local-search', 'multilevel:inner=dsc', 'doppler' with the shipped model, ...); "
        "budget: simulator calls, time_budget: seconds, threads: threads of the searches (0: "
        "every core; under a call budget the result depends on the count, not on timing), lanes: "
        "speculative lanes per annealing chain (0: the rule, 1: chains only; docs/cli.md). "
        "callback(progress) is called on this thread at most every 0.1 s while the search "
        "reports progress (a doppler.Progress: seconds, calls, best makespan); returning False "
        "stops the search, which returns the best placement found so far. Ctrl-C raises "
        "KeyboardInterrupt within about 0.1 s of the search's next report (searches report at "
        "least every 0.2 s). Returns a doppler.Placement.");
}

}  // namespace doppler::python
