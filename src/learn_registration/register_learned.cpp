// Compiled into every target that links libdoppler_learn (an INTERFACE source), so that the
// learned placers are in the registry before main() even though the library is static.
#include "doppler/train/learned_placers.hpp"

namespace {

const bool registered = (doppler::register_learned_placers(), true);

}  // namespace
