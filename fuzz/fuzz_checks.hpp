#pragma once
// Invariants shared by the fuzz targets. A violated invariant aborts, which libFuzzer reports as
// a crash with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "doppler/graph/io/dot.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/util/error.hpp"

namespace doppler::fuzz {

/// The input of one fuzz iteration as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Reports `what` (and `detail`) on stderr and aborts.
[[noreturn]] inline void violated(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "fuzz invariant violated: %s\n%s\n", what, detail.c_str());
  std::abort();
}

/// A graph that was read must be writable in every format, and its JSON form must parse back
/// into a graph with the same JSON form.
inline void check_graph_round_trip(const Graph& g) {
  const std::string once = format_graph_json(g);
  Graph back;
  try {
    back = parse_graph_json(once, "round-trip.json");
  } catch (const InputError& e) {
    violated("a written graph does not parse back", e.what());
  }
  if (format_graph_json(back) != once) violated("the JSON round trip changed the graph", once);
  (void)format_dot(g);
  try {
    (void)format_reference_text(g);  // needs reference costs: an InputError otherwise
  } catch (const InputError&) {
  }
}

}  // namespace doppler::fuzz
