# Optional components: DOPPLER_WITH_<NAME> = auto (build it when its dependencies are found,
# the default), on (required: configuring fails without them) or off. ON/OFF/TRUE/FALSE/1/0 are
# accepted too. doppler_component_found(<NAME> <found>) then sets DOPPLER_HAVE_<NAME> (ON/OFF) and
# records the component for the summary and for src/util/components.cpp (doppler --version).

set(DOPPLER_COMPONENTS_BUILT "")
set(DOPPLER_COMPONENTS_ABSENT "")

# doppler_component(<NAME> <doc>): declares the cache option and sets DOPPLER_WANT_<NAME> to
# auto, on or off.
function(doppler_component name doc)
  set(DOPPLER_WITH_${name} auto CACHE STRING "${doc}: auto, on or off")
  set_property(CACHE DOPPLER_WITH_${name} PROPERTY STRINGS auto on off)
  string(TOLOWER "${DOPPLER_WITH_${name}}" v)
  if(v MATCHES "^(on|yes|true|1)$")
    set(v on)
  elseif(v MATCHES "^(off|no|false|0)$")
    set(v off)
  elseif(NOT v STREQUAL "auto")
    message(FATAL_ERROR "DOPPLER_WITH_${name}=${DOPPLER_WITH_${name}}: expected auto, on or off")
  endif()
  set(DOPPLER_WANT_${name} ${v} PARENT_SCOPE)
endfunction()

# doppler_component_found(<NAME> <found> [<what is missing>]): DOPPLER_HAVE_<NAME> from the
# request and whether the dependencies were found; `on` without them is a configure error.
function(doppler_component_found name found)
  string(TOLOWER ${name} lower)
  if(DOPPLER_WANT_${name} STREQUAL "off")
    set(have OFF)
  elseif(found)
    set(have ON)
  elseif(DOPPLER_WANT_${name} STREQUAL "on")
    message(FATAL_ERROR "DOPPLER_WITH_${name}=on, but ${ARGN} was not found "
                        "(scripts/install-deps.sh installs it; or configure with -DDOPPLER_WITH_${name}=off)")
  else()
    set(have OFF)
  endif()
  set(DOPPLER_HAVE_${name} ${have} PARENT_SCOPE)
  if(have)
    list(APPEND DOPPLER_COMPONENTS_BUILT ${lower})
    set(DOPPLER_COMPONENTS_BUILT ${DOPPLER_COMPONENTS_BUILT} PARENT_SCOPE)
  else()
    list(APPEND DOPPLER_COMPONENTS_ABSENT ${lower})
    set(DOPPLER_COMPONENTS_ABSENT ${DOPPLER_COMPONENTS_ABSENT} PARENT_SCOPE)
  endif()
endfunction()

doppler_component(TORCH "Learned placers, training, the demo and the Python binding (libtorch)")
doppler_component(ONNX "ONNX import (libonnx, protobuf)")
doppler_component(MPI "The MPI engine backend and data-parallel pretraining (Open MPI)")
doppler_component(GRAPHVIZ "DOT task-graph reading (Graphviz cgraph)")
doppler_component(CUDA "The CUDA engine library doppler_cuda (nvcc, cudart, cuBLAS)")

# --- torch (+ zlib, which the checkpoint reader uses) ---
set(DOPPLER_TORCH_ROOT "" CACHE PATH
    "a torch Python package folder (a pip wheel's site-packages/torch) to build against, its CPU libraries only, instead of find_package(Torch)")
if(NOT DOPPLER_WANT_TORCH STREQUAL "off")
  if(DOPPLER_TORCH_ROOT)
    include(${CMAKE_CURRENT_LIST_DIR}/TorchRoot.cmake)
    doppler_torch_from_root("${DOPPLER_TORCH_ROOT}")
  else()
    find_package(Torch 1.13 QUIET)
  endif()
  find_package(ZLIB QUIET)
endif()
set(_found OFF)
if(Torch_FOUND AND ZLIB_FOUND)
  set(_found ON)
endif()
doppler_component_found(TORCH ${_found} "libtorch (Debian libtorch-dev) or zlib")

# --- ONNX ---
if(NOT DOPPLER_WANT_ONNX STREQUAL "off")
  find_package(Protobuf QUIET)
  find_package(ONNX QUIET)
endif()
set(_found OFF)
if(Protobuf_FOUND AND ONNX_FOUND)
  set(_found ON)
endif()
doppler_component_found(ONNX ${_found} "libonnx (Debian libonnx-dev) or protobuf")

# --- MPI (the C API only) ---
if(NOT DOPPLER_WANT_MPI STREQUAL "off")
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
doppler_component_found(MPI "${MPI_CXX_FOUND}" "MPI (Debian libopenmpi-dev)")

# --- Graphviz cgraph: pkg-config, else its header and libraries directly ---
set(_found OFF)
if(NOT DOPPLER_WANT_GRAPHVIZ STREQUAL "off")
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(CGRAPH QUIET IMPORTED_TARGET libcgraph)
  endif()
  if(CGRAPH_FOUND)
    add_library(doppler_cgraph INTERFACE IMPORTED)
    target_link_libraries(doppler_cgraph INTERFACE PkgConfig::CGRAPH)
    set(_found ON)
  else()
    find_path(CGRAPH_INCLUDE_DIR cgraph.h PATH_SUFFIXES graphviz)
    find_library(CGRAPH_LIBRARY cgraph)
    find_library(CDT_LIBRARY cdt)
    if(CGRAPH_INCLUDE_DIR AND CGRAPH_LIBRARY AND CDT_LIBRARY)
      add_library(doppler_cgraph INTERFACE IMPORTED)
      target_include_directories(doppler_cgraph INTERFACE ${CGRAPH_INCLUDE_DIR})
      target_link_libraries(doppler_cgraph INTERFACE ${CGRAPH_LIBRARY} ${CDT_LIBRARY})
      set(_found ON)
    endif()
  endif()
endif()
doppler_component_found(GRAPHVIZ ${_found} "Graphviz cgraph (Debian libgraphviz-dev)")

# --- CUDA: nvcc, cudart and cuBLAS (the driver is reached at run time, never linked) ---
set(_found OFF)
if(NOT DOPPLER_WANT_CUDA STREQUAL "off")
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 90)  # Hopper (H100, H200)
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND AND TARGET CUDA::cublas AND TARGET CUDA::cudart_static)
      set(_found ON)
    endif()
  endif()
endif()
doppler_component_found(CUDA ${_found} "the CUDA toolkit (nvcc, cudart, cuBLAS)")

message(STATUS "Doppler components built: ${DOPPLER_COMPONENTS_BUILT}")
message(STATUS "Doppler components not built: ${DOPPLER_COMPONENTS_ABSENT}")

# generated/components_built.cpp: the one source that differs between configurations (every
# other object is the same, so that ccache serves the minimal build from the full one).
set(_cases "")
foreach(c TORCH ONNX MPI GRAPHVIZ CUDA)
  string(TOLOWER ${c} lower)
  if(DOPPLER_HAVE_${c})
    set(v true)
  else()
    set(v false)
  endif()
  string(APPEND _cases "    case Component::${lower}: return ${v};\n")
endforeach()
file(CONFIGURE OUTPUT ${PROJECT_BINARY_DIR}/generated/components_built.cpp CONTENT
"// Generated by cmake/Components.cmake: do not edit.
#include \"doppler/util/components.hpp\"

namespace doppler::detail {

bool component_built_flag(Component c) {
  switch (c) {
${_cases}  }
  return false;
}

}  // namespace doppler::detail
" @ONLY)
