// libFuzzer target: the ONNX importer (protobuf parsing, checks, shape inference, folding and
// lowering). Every input must either import into a graph that survives the writers and a JSON
// round trip (constants included), or be refused with an InputError; a crash, a sanitizer
// report or any other exception is a bug.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_checks.hpp"

#include "doppler/onnx/import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace doppler;
  onnx_import::ImportOptions o;
  o.devices = 1 + static_cast<int>(size % 4);
  onnx_import::ImportResult r;
  try {
    r = onnx_import::import_onnx_bytes(std::string(fuzz::as_text(data, size)), "fuzz.onnx", o);
  } catch (const InputError&) {
    return 0;
  }
  if (r.report.blocks != r.graph.num_nodes()) fuzz::violated("report and graph disagree on blocks");
  fuzz::check_graph_round_trip(r.graph);
  return 0;
}
