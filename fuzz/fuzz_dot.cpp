// libFuzzer target: the DOT task graph reader (cgraph underneath). Every input must either be
// read into a graph that survives the writers, a JSON round trip and a DOT round trip (same
// structure and costs), or be refused with an InputError; a crash, a sanitizer report or any
// other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_checks.hpp"

#include "doppler/graph/io/dot_reader.hpp"

namespace {

// format_dot() of a graph with reference costs must read back as the same DAG and costs.
void check_dot_round_trip(const doppler::Graph& g) {
  using namespace doppler;
  if (!g.has_reference_costs()) return;
  const std::string text = format_dot(g);
  Graph back;
  try {
    back = parse_dot_graph(text, "round-trip.dot");
  } catch (const InputError& e) {
    fuzz::violated("a written DOT graph does not parse back", std::string(e.what()) + "\n" + text);
  }
  bool same = back.num_nodes() == g.num_nodes() && back.num_edges() == g.num_edges();
  for (NodeId v = 0; same && v < g.num_nodes(); ++v)
    same = back.node(v).compute_cost == g.node(v).compute_cost;
  for (EdgeId e = 0; same && e < g.num_edges(); ++e)
    same = back.edge(e).src == g.edge(e).src && back.edge(e).dst == g.edge(e).dst &&
           back.edge_transfer_cost(e) == g.edge_transfer_cost(e);
  if (!same) fuzz::violated("the DOT round trip changed the graph", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  DotTaskGraph t;
  try {
    std::vector<std::string> warnings;
    t = parse_dot_task_graph(fuzz::as_text(data, size), "fuzz.dot", &warnings);
  } catch (const InputError&) {
    return 0;
  }
  if (t.schedule) t.schedule->validate(t.graph);  // an InputError here is a bug: not caught
  fuzz::check_graph_round_trip(t.graph);
  check_dot_round_trip(t.graph);
  return 0;
}
