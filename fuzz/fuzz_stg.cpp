// libFuzzer target: the Standard Task Graph (.stg) reader. Every input must either be read into
// a graph that survives the writers and a JSON round trip, or be refused with an InputError; a
// crash, a sanitizer report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_checks.hpp"

#include "doppler/graph/io/stg.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  Graph g;
  try {
    std::vector<std::string> warnings;
    g = parse_stg(fuzz::as_text(data, size), "fuzz.stg", &warnings);
  } catch (const InputError&) {
    return 0;
  }
  if (g.num_nodes() < 2 || g.node(0).name != "T0") fuzz::violated("STG dummy tasks missing");
  fuzz::check_graph_round_trip(g);
  return 0;
}
