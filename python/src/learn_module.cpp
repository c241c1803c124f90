// The extension module doppler._doppler_learn: the learned placers and doppler.Policy, the part of
// the binding that needs libtorch. Imported by doppler._doppler on first use (learned_loader.cpp),
// after which it resolves libdoppler's symbols in doppler._doppler.
#include "bindings.hpp"

#include "doppler/train/learned_placers.hpp"

PYBIND11_MODULE(_doppler_learn, m) {
  m.doc() = "Doppler's learned placement methods and policies (libtorch), loaded on first use";
  doppler::register_learned_placers();
  doppler::python::bind_policy(m);
}
