#pragma once
// The dispatch rule's order of the ready ops waiting for one device, shared by the simulator and
// the engine so that both dispatch the same op by construction: the smallest key first (fifo: the
// time, or the sequence number, at which the op became ready; priority: its position in the
// assignment's order), ties broken by the lower op id.
#include "doppler/graph/types.hpp"

namespace doppler {

/// True when the op `a` with key `ka` is dispatched before the op `b` with key `kb`.
constexpr bool ready_before(double ka, NodeId a, double kb, NodeId b) {
  return ka < kb || (ka == kb && a < b);
}

}  // namespace doppler
