// The learned part of the module, doppler._doppler_learn (libtorch), loaded on first use: the
// learned methods are listed at once and loaded by the first doppler.place() that makes one, or by
// doppler.Policy (doppler/__init__.py), so that `import doppler` does not load libtorch.
#include <dlfcn.h>

#include <stdexcept>
#include <string>

#include "bindings.hpp"

#include "doppler/heuristics/deferred_placers.hpp"
#include "doppler/train/learned_infos.hpp"

namespace doppler::python {
namespace {

constexpr const char* kCannotLoad = "cannot load the learned methods: ";

// Puts this module's symbols (every object of libdoppler, linked whole) in the global scope, where
// doppler._doppler_learn, which links the learned libraries and libtorch but not libdoppler, finds
// them: so that both use one registry. Python loads extension modules with RTLD_LOCAL.
void export_this_module() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&export_this_module), &info) == 0 || info.dli_fname == nullptr)
    throw std::runtime_error(std::string(kCannotLoad) + "cannot find doppler._doppler's file");
  if (dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL) == nullptr)
    throw std::runtime_error(std::string(kCannotLoad) + dlerror());
}

// Imports doppler._doppler_learn, which registers the learned placers' factories; from any thread.
py::module_ load_learned() {
  py::gil_scoped_acquire gil;
  export_this_module();
  try {
    return py::module_::import("doppler._doppler_learn");
  } catch (py::error_already_set& e) {
    throw std::runtime_error(std::string(kCannotLoad) + e.what());
  }
}

}  // namespace

void bind_learned_loader(py::module_& m) {
  register_deferred_placers(learned_placer_infos(), [] { load_learned(); });
  m.def("_load_learned", &load_learned,
        "the learned part of the module (Policy, default_policy_path), loaded on the first call");
}

}  // namespace doppler::python
