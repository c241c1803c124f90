// libFuzzer target: the assignment reader (one document, against a graph or alone, and JSON
// lines). An assignment that was read must format and parse back unchanged; anything other
// than an InputError for bad input is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/assignment_json.hpp"

namespace {

// The graph assignments are checked against: 0 -> 1 -> 2 -> 3 and 0 -> 2.
const doppler::Graph& chain() {
  static const doppler::Graph g = [] {
    doppler::GraphBuilder b;
    for (int i = 0; i < 4; ++i) b.add_node({});
    b.add_edge(0, 1);
    b.add_edge(1, 2);
    b.add_edge(2, 3);
    b.add_edge(0, 2);
    return b.build();
  }();
  return g;
}

void check_round_trip(const doppler::Assignment& a) {
  const std::string text = doppler::format_assignment_json(a);
  doppler::Assignment back;
  try {
    back = doppler::parse_assignment_json(text, "round-trip.json");
  } catch (const doppler::InputError& e) {
    doppler::fuzz::violated("a written assignment does not parse back", e.what() + text);
  }
  if (back.devices != a.devices || back.device_of != a.device_of || back.order != a.order ||
      back.method != a.method)
    doppler::fuzz::violated("the assignment round trip changed it", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  const std::string_view text = fuzz::as_text(data, size);
  for (const Graph* g : {&chain(), static_cast<const Graph*>(nullptr)}) {
    for (const int devices : {0, 3}) {
      try {
        check_round_trip(parse_assignment_json(text, "fuzz.json", g, devices));
      } catch (const InputError&) {
      }
    }
  }
  try {
    for (const Assignment& a : parse_assignments_jsonl(text, "fuzz.jsonl", chain(), 0))
      check_round_trip(a);
  } catch (const InputError&) {
  }
  return 0;
}
