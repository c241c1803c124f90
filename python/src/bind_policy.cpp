// doppler.Policy: a trained Doppler policy (SEL + PLC) loaded for inspection and placement.
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <chrono>
#include <filesystem>
#include <optional>

#include "bindings.hpp"
#include "watch.hpp"

#include "doppler/policy/doppler_policy.hpp"
#include "doppler/util/error.hpp"

namespace doppler::python {
namespace {

std::shared_ptr<DopplerPolicy> load_policy(const std::optional<std::filesystem::path>& path) {
  const std::filesystem::path p = path ? *path : default_policy_path();
  py::gil_scoped_release unlocked;
  return std::make_shared<DopplerPolicy>(DopplerPolicy::load(p));
}

PyPlacement sample(DopplerPolicy& policy, const ProblemPtr& p, int samples, std::uint64_t seed,
                   double temperature, int threads, const py::object& callback) {
  if (!p) throw InputError("sample: problem is None");
  if (samples < 1) throw InputError("sample: samples must be >= 1");
  if (!(temperature > 0)) throw InputError("sample: temperature must be > 0");
  if (threads < 1) throw InputError("sample: threads must be >= 1");
  Watch watch(callback);
  SampledPlacement s;
  const auto start = std::chrono::steady_clock::now();
  watch.run([&] {
    s = policy.sample(*p->problem, {samples, seed, temperature, threads, watch.progress()});
  });
  PyPlacement out;
  out.run.assignment = s.best;
  out.run.assignment.devices = p->problem->devices();
  out.run.makespan = s.best_makespan;
  out.run.evaluations = s.calls;
  out.run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out.probabilities = std::move(s.proposal);
  out.devices = p->problem->devices();
  return out;
}

}  // namespace

void bind_policy(py::module_& m) {
  py::class_<DopplerPolicy, std::shared_ptr<DopplerPolicy>>(
      m, "Policy", "A trained Doppler policy (SEL + PLC networks) loaded for placement.")
      .def_static(
          "load", &load_policy, py::arg("path") = py::none(),
          "Load a checkpoint (ckpt.pt) or a `doppler train` run directory (str or os.PathLike); "
          "None: the "
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
           py::arg("callback") = py::none(),
           "The best of `samples` rollouts (rollout 0 greedy, the others sampled at "
           "`temperature`) as a doppler.Placement (method 'doppler'), whose probabilities are "
           "N x P: PLC's device distribution for each op at the step the best rollout placed "
           "it (NaN rows for ops PLC did not decide, such as inputs that follow their consumer). "
           "callback(progress) and Ctrl-C as in doppler.place: rollouts run in waves of 2 x "
           "threads, and returning False keeps the best rollout so far.")
      .def("__repr__", [](const DopplerPolicy& policy) -> py::str {
        const PolicyConfig& c = policy.config();
        return py::str(
                   "<doppler.Policy {}: hidden {}, {} message-passing steps, {} "
                   "features>")
            .format(policy_variant_name(c.variant), c.hidden, c.steps,
                    feature_mode_name(c.features));
      });
  m.def(
      "default_policy_path", [] { return default_policy_path().string(); },
      "the shipped pretrained model's file (DOPPLER_MODEL overrides it)");
}

}  // namespace doppler::python
