#include "doppler/util/components.hpp"

namespace doppler {

namespace detail {
/// Defined by the build (cmake/Components.cmake writes generated/components_built.cpp).
bool component_built_flag(Component c);
}  // namespace detail

namespace {

// What each component is called: in DOPPLER_WITH_<OPTION>, in lists, and in messages.
struct ComponentNames {
  std::string_view name, option, library;
};

ComponentNames names(Component c) {
  switch (c) {
    case Component::torch:
      return {"torch", "TORCH", "libtorch"};
    case Component::onnx:
      return {"onnx", "ONNX", "libonnx"};
    case Component::mpi:
      return {"mpi", "MPI", "MPI"};
    case Component::graphviz:
      return {"graphviz", "GRAPHVIZ", "Graphviz's cgraph"};
    case Component::cuda:
      return {"cuda", "CUDA", "CUDA"};
  }
  return {"?", "?", "?"};
}

}  // namespace

std::string_view component_name(Component c) {
  return names(c).name;
}

std::string_view component_library(Component c) {
  return names(c).library;
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
  const ComponentNames n = names(c);
  return InputError(std::string(what) + " needs " + std::string(n.library) +
                    ", which this build of doppler does not include (configure with "
                    "-DDOPPLER_WITH_" +
                    std::string(n.option) + "=on)");
}

}  // namespace doppler
