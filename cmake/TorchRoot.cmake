# doppler_torch_from_root(<root>): libtorch from a torch Python package folder (site-packages/
# torch of a pip wheel: include/, lib/, version.py), its CPU libraries only, without
# find_package(Torch): a CUDA wheel's CMake config looks for cuDNN and the CUDA toolkit it was
# built with, which a machine with another toolkit lacks, and the learned libraries need neither.
# Sets Torch_FOUND, TORCH_VERSION and TORCH_LIBRARIES (an imported target) in the caller's scope;
# a folder that is not a torch package is a configure error naming the missing file. When the
# package was built with the old libstdc++ ABI (its TorchConfig.cmake says so), the whole build
# takes that ABI, since project types cross between the libraries.
function(doppler_torch_from_root root)
  foreach(f include/torch/csrc/api/include/torch/torch.h lib/libtorch_cpu.so lib/libc10.so)
    if(NOT EXISTS "${root}/${f}")
      message(FATAL_ERROR "DOPPLER_TORCH_ROOT=${root}: no ${f} (expected a torch package folder: "
                          "python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))')")
    endif()
  endforeach()
  set(version "unknown")
  if(EXISTS "${root}/version.py")
    file(STRINGS "${root}/version.py" line REGEX "^__version__")
    string(REGEX REPLACE "^__version__ *= *['\"]([^'\"]*)['\"].*" "\\1" version "${line}")
  endif()
  set(config "${root}/share/cmake/Torch/TorchConfig.cmake")
  if(EXISTS "${config}")
    file(STRINGS "${config}" abi REGEX "_GLIBCXX_USE_CXX11_ABI=0")
    if(abi)
      message(STATUS "torch ${version} uses the old libstdc++ ABI: so does this build")
      add_compile_definitions(_GLIBCXX_USE_CXX11_ABI=0)
    endif()
  endif()
  if(NOT TARGET doppler_torch_root)
    add_library(doppler_torch_root INTERFACE IMPORTED)
    set_target_properties(doppler_torch_root PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${root}/include;${root}/include/torch/csrc/api/include"
      INTERFACE_LINK_LIBRARIES "${root}/lib/libtorch_cpu.so;${root}/lib/libc10.so")
  endif()
  message(STATUS "torch ${version} from ${root} (CPU libraries)")
  set(Torch_FOUND TRUE PARENT_SCOPE)
  set(TORCH_VERSION "${version}" PARENT_SCOPE)
  set(TORCH_LIBRARIES doppler_torch_root PARENT_SCOPE)
endfunction()
