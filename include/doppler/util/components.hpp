#pragma once
// The optional components a build of Doppler includes (CMake DOPPLER_WITH_TORCH, _ONNX, _MPI,
// _GRAPHVIZ, _CUDA; cmake/Components.cmake). A front end asks here before offering a feature
// and words its own remedy; the library's stand-ins for absent components throw
// component_absent() errors.
#include <string>
#include <string_view>

#include "doppler/util/error.hpp"

namespace doppler {

/// One optional component of the build.
enum class Component { torch, onnx, mpi, graphviz, cuda };

/// Every component, in the order `doppler --version` lists them.
inline constexpr Component kComponents[] = {Component::torch, Component::onnx, Component::mpi,
                                            Component::graphviz, Component::cuda};

/// Lower-case name of a component ("torch", ..., "cuda"), as in DOPPLER_WITH_<NAME>.
std::string_view component_name(Component c);

/// What the component needs, for messages ("libtorch", "libonnx", "MPI", ...).
std::string_view component_library(Component c);

/// True when this build includes component c.
bool component_built(Component c);

/// "components: torch onnx mpi graphviz; not built: cuda" (one line).
std::string describe_components();

/// The InputError for `what` (e.g. "doppler train", "--backend mpi") needing an absent
/// component: "<what> needs <library>, which this build of doppler does not include
/// (configure with -DDOPPLER_WITH_<NAME>=on)".
InputError component_absent(std::string_view what, Component c);

}  // namespace doppler
