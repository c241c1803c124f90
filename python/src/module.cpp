// The extension module doppler._doppler: a thin binding over libdoppler (python/doppler/__init__.py
// re-exports it); its learned part, doppler._doppler_learn (libtorch), is loaded on first use.
// Bad input raises ValueError with the library's one-line message (in both modules: the
// translator is pybind11's global one); other failures raise RuntimeError.
#include <string>

#include "bindings.hpp"
#include "watch.hpp"

#include "doppler/util/error.hpp"

namespace py = pybind11;

namespace {

// Python's wording of what would fix an input error (the library names it as a concept).
std::string python_remedy(const doppler::InputError& e) {
  const std::string& s = e.remedy_subject();
  switch (e.remedy()) {
    case doppler::Remedy::input_shape:
      return "; give its shape with import_onnx(..., input_shapes={'" + s + "': [1, 128]})";
    case doppler::Remedy::hardware:
      return ": pass doppler.Problem(graph, devices, hardware=NAME) (shipped: " + s + ")";
    case doppler::Remedy::output_format:
      return "; or pass format='txt', 'json' or 'dot'";
    case doppler::Remedy::none:
      break;
  }
  return "";
}

}  // namespace

PYBIND11_MODULE(_doppler, m) {
  m.doc() = "Doppler: device placement of dataflow graphs (C++ library binding)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const doppler::InputError& e) {
      PyErr_SetString(PyExc_ValueError, (e.what() + python_remedy(e)).c_str());
    }
  });
  doppler::python::bind_graph(m);
  m.attr("__version__") = DOPPLER_VERSION;
  doppler::python::bind_progress(m);
  doppler::python::bind_placement(m);
  doppler::python::bind_problem(m);
  doppler::python::bind_methods(m);
  doppler::python::bind_env(m);
  doppler::python::bind_learned_loader(m);
}
