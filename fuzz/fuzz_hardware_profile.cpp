// libFuzzer target: the hardware-profile reader. A profile that was read must have a route for
// every ordered pair of devices made of valid links, non-negative transfer times (infinite only
// for absurd bandwidths such as 1e-320 bytes/s), and
// give a cost model; anything other than an InputError for bad input is a bug.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/hardware/platform.hpp"
#include "doppler/hardware/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  HardwareProfile p;
  try {
    p = parse_hardware_profile(fuzz::as_text(data, size), "fuzz.json");
  } catch (const InputError&) {
    return 0;
  }
  const int n = p.num_devices();
  if (n < 1 || n > kMaxDevices) fuzz::violated("device count out of range");
  if (p.routes.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n))
    fuzz::violated("routes are not P x P");
  for (int s = 0; s < n; ++s)
    for (int d = 0; d < n; ++d) {
      for (const int l : p.route(s, d))
        if (l < 0 || l >= static_cast<int>(p.links.size())) fuzz::violated("route to no link");
      if (s != d && p.route(s, d).empty()) fuzz::violated("a pair of devices has no route");
      const double t = p.transfer_time(s, d, 1e6);
      if (std::isnan(t) || t < 0) fuzz::violated("transfer time NaN or negative");
    }
  for (int d = 0; d < n; ++d) {
    const double spf = p.seconds_per_flop(d, "f16");
    if (!(spf > 0) || std::isnan(spf)) fuzz::violated("seconds per FLOP not > 0");
  }
  if (n <= 64) {
    GraphBuilder b;
    b.add_node({});
    b.add_node({});
    b.add_edge(0, 1);
    const Graph g = b.build();
    (void)Platform::hardware(p, n).cost_model(g);
  }
  return 0;
}
