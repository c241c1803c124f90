// fuzz_make_seeds REFERENCE_GRAPH_DIR OUT_DIR: seeds for the JSON graph and assignment fuzzers,
// made at run time from the reference text graphs (which are not copied into the repository):
// OUT_DIR/graph_json/<stem>.json and OUT_DIR/assignment/<stem>-{object,array}.json.
#include <cstdio>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "doppler/graph/io/assignment_json.hpp"
#include "doppler/graph/io/graph_json.hpp"
#include "doppler/graph/io/reference_text.hpp"
#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  if (argc != 3) {
    std::fprintf(stderr, "usage: fuzz_make_seeds REFERENCE_GRAPH_DIR OUT_DIR\n");
    return 2;
  }
  const fs::path in = argv[1], out = argv[2];
  fs::create_directories(out / "graph_json");
  fs::create_directories(out / "assignment");
  int made = 0;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(in, ec)) {
    if (entry.path().extension() != ".txt") continue;
    try {
      const std::string stem = entry.path().stem().string();
      const doppler::Graph g =
          doppler::parse_reference_text(doppler::read_file(entry.path()), entry.path().string());
      doppler::write_file_atomic(out / "graph_json" / (stem + ".json"),
                                 doppler::format_graph_json(g));
      doppler::Assignment a;
      a.devices = 4;
      a.method = "round-robin";
      for (doppler::NodeId v = 0; v < g.num_nodes(); ++v) a.device_of.push_back(v % 4);
      a.order = g.topo_order();
      doppler::write_file_atomic(out / "assignment" / (stem + "-object.json"),
                                 doppler::format_assignment_json(a));
      doppler::write_file_atomic(out / "assignment" / (stem + "-array.json"),
                                 nlohmann::json(a.device_of).dump() + "\n");
      made += 3;
    } catch (const doppler::InputError& e) {
      std::fprintf(stderr, "fuzz_make_seeds: skipping %s\n", e.what());
    }
  }
  std::printf("fuzz_make_seeds: %d seeds from %s in %s\n", made, in.c_str(), out.c_str());
  return 0;
}
