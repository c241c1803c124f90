// The extension module doppler._doppler: a thin binding over libdoppler and libdoppler_learn
// (python/doppler/__init__.py re-exports it). Bad input raises ValueError with the library's
// one-line message; other failures raise RuntimeError.
#include "bindings.hpp"

#include "doppler/util/error.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_doppler, m) {
  m.doc() = "Doppler: device placement of dataflow graphs (C++ library binding)";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const doppler::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    }
  });
  doppler::python::bind_graph(m);
  doppler::python::bind_problem(m);
  doppler::python::bind_env(m);
  doppler::python::bind_policy(m);
}
