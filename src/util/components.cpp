#include "doppler/util/components.hpp"

#include <cctype>

namespace doppler {

namespace detail {
/// Defined by the build (cmake/Components.cmake writes generated/components_built.cpp).
bool component_built_flag(Component c);
}  // namespace detail

std::string_view component_name(Component c) {
  switch (c) {
    case Component::torch:
      return "torch";
    case Component::onnx:
      return "onnx";
    case Component::mpi:
      return "mpi";
    case Component::graphviz:
      return "graphviz";
    case Component::cuda:
      return "cuda";
  }
  return "?";
}

std::string_view component_library(Component c) {
  switch (c) {
    case Component::torch:
      return "libtorch";
    case Component::onnx:
      return "libonnx";
    case Component::mpi:
      return "MPI";
    case Component::graphviz:
      return "Graphviz's cgraph";
    case Component::cuda:
      return "CUDA";
  }
  return "?";
}

bool component_built(Component c) {
  return detail::component_built_flag(c);
}

std::string describe_components() {
  std::string built, absent;
  for (Component c : kComponents) {
    std::string& list = component_built(c) ? built : absent;
    list += (list.empty() ? "" : " ") + std::string(component_name(c));
  }
  return "components: " + (built.empty() ? "none" : built) +
         (absent.empty() ? "" : "; not built: " + absent);
}

InputError component_absent(std::string_view what, Component c) {
  std::string upper(component_name(c));
  for (char& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
  return InputError(std::string(what) + " needs " + std::string(component_library(c)) +
                    ", which this build of doppler does not include (configure with "
                    "-DDOPPLER_WITH_" +
                    upper + "=on)");
}

}  // namespace doppler
