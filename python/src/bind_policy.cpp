// doppler.Policy: a trained Doppler policy (SEL + PLC) loaded for inspection and placement.
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include "bindings.hpp"

#include "doppler/policy/doppler_policy.hpp"
#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

std::shared_ptr<DopplerPolicy> load_policy(const std::optional<std::string>& path) {
  const std::filesystem::path p = path ? std::filesystem::path(*path) : default_policy_path();
  py::gil_scoped_release unlocked;
  return std::make_shared<DopplerPolicy>(DopplerPolicy::load(p));
}

py::dict sample(DopplerPolicy& policy, const ProblemPtr& p, int samples, std::uint64_t seed,
                double temperature, int threads) {
  if (!p) throw InputError("sample: problem is None");
  if (samples < 1) throw InputError("sample: samples must be >= 1");
  if (!(temperature > 0)) throw InputError("sample: temperature must be > 0");
  if (threads < 1) throw InputError("sample: threads must be >= 1");
  SampledPlacement s;
  {
    py::gil_scoped_release unlocked;
    s = policy.sample(*p->problem, {samples, seed, temperature, threads});
  }
  const auto n = static_cast<py::ssize_t>(p->graph->num_nodes());
  const auto devices = static_cast<py::ssize_t>(p->problem->devices());
  py::array_t<double> prob({n, devices});
  auto r = prob.mutable_unchecked<2>();
  for (py::ssize_t v = 0; v < n; ++v)
    for (py::ssize_t d = 0; d < devices; ++d) {
      const auto& row = s.proposal.empty() ? std::vector<double>{} : s.proposal[v];
      r(v, d) = row.empty() ? std::nan("") : row[static_cast<std::size_t>(d)];
    }
  return py::dict(py::arg("assignment") = to_array<DeviceId>(s.best.device_of),
                  py::arg("order") = to_array<std::int64_t>(s.best.order),
                  py::arg("makespan") = s.best_makespan, py::arg("calls") = s.calls,
                  py::arg("probabilities") = prob);
}

}  // namespace

void bind_policy(py::module_& m) {
  py::class_<DopplerPolicy, std::shared_ptr<DopplerPolicy>>(
      m, "Policy", "A trained Doppler policy (SEL + PLC networks) loaded for placement.")
      .def_static("load", &load_policy, py::arg("path") = py::none(),
                  "Load a checkpoint (ckpt.pt) or a `doppler train` run directory; None: the "
                  "shipped pretrained model.")
      .def(
          "place",
          [](DopplerPolicy& policy, const ProblemPtr& p) {
            if (!p) throw InputError("place: problem is None");
            Assignment a;
            {
              py::gil_scoped_release unlocked;
              a = policy.place(*p->problem);
            }
            return to_array<DeviceId>(a.device_of);
          },
          py::arg("problem"), "the greedy rollout's assignment (no simulator call)")
      .def("sample", &sample, py::arg("problem"), py::kw_only(), py::arg("samples") = 16,
           py::arg("seed") = 0, py::arg("temperature") = 1.0, py::arg("threads") = 2,
           "The best of `samples` rollouts (rollout 0 greedy, the others sampled at "
           "`temperature`): a dict with assignment, order, makespan, calls and probabilities "
           "(N x P: PLC's device distribution for each op at the step the best rollout placed "
           "it; NaN rows for ops PLC did not decide, such as inputs that follow their consumer).");
  m.def(
      "default_policy_path", [] { return default_policy_path().string(); },
      "the shipped pretrained model's file (DOPPLER_MODEL overrides it)");
}

}  // namespace doppler::python
