#include "cublas_api.hpp"

#include <dlfcn.h>
#include <link.h>

#include <string>
#include <vector>

#include "doppler/engine/engine.hpp"

namespace doppler::cuda_detail {

namespace {

struct Loaded {
  CublasApi api;
  std::string error;  // "" when every function was found
};

// The library's file name for the headers' major version, as the loader's search path would
// find it, then in the toolkit's folder this was built against (DOPPLER_CUDA_LIBRARY_DIR): a
// machine whose loader does not search /usr/local/cuda still finds it there.
std::vector<std::string> candidates() {
  const std::string name = "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR);
  std::vector<std::string> c{name};
#ifdef DOPPLER_CUDA_LIBRARY_DIR
  c.push_back(std::string(DOPPLER_CUDA_LIBRARY_DIR) + "/" + name);
#endif
  return c;
}

// dlopen of the first candidate that loads; "" on success, else every candidate's dlerror.
std::string open_library(void*& handle) {
  std::string why;
  for (const std::string& file : candidates()) {
    handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle) return "";
    const char* e = dlerror();
    why += (why.empty() ? "" : "; ") + std::string(e ? e : file + ": not loadable");
  }
  return why;
}

std::string library_path(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name) return map->l_name;
  return "libcublas";
}

Loaded load() {
  Loaded l;
  void* handle = nullptr;
  const std::string why = open_library(handle);
  if (!handle) {
    l.error = "cannot load cuBLAS: " + why;
    return l;
  }
  l.api.path = library_path(handle);
#define DOPPLER_CUBLAS_FETCH(name)                               \
  *reinterpret_cast<void**>(&l.api.name) = dlsym(handle, #name); \
  if (!l.api.name && l.error.empty())                            \
    l.error = "cannot load cuBLAS: " + l.api.path + " has no " #name;
  DOPPLER_CUBLAS_FUNCTIONS(DOPPLER_CUBLAS_FETCH)
  DOPPLER_CUBLAS_FETCH(cublasGemmStridedBatchedEx)
#undef DOPPLER_CUBLAS_FETCH
  return l;  // the library stays loaded for the process's life
}

}  // namespace

const CublasApi& cublas_api() {
  static const Loaded l = load();
  if (!l.error.empty()) throw EngineError(l.error);
  return l.api;
}

}  // namespace doppler::cuda_detail
