// libFuzzer target: the doppler-graph JSON reader. Every input must either be read into a graph
// that survives the writers and a JSON round trip, or be refused with an InputError; a crash, a
// sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_checks.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  Graph g;
  try {
    std::vector<std::string> warnings;
    g = parse_graph_json(fuzz::as_text(data, size), "fuzz.json", &warnings);
  } catch (const InputError&) {
    return 0;
  }
  fuzz::check_graph_round_trip(g);
  return 0;
}
