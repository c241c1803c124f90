#include "node_errors.hpp"

#include <algorithm>
#include <cmath>

#include "doppler/workloads/workload.hpp"

namespace doppler::test {

double relative_error(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    den += std::isfinite(want[i]) ? double{want[i]} * want[i] : 0.0;
    if (got[i] == want[i]) continue;
    num += (double{got[i]} - want[i]) * (double{got[i]} - want[i]);
  }
  return num == 0 ? 0.0 : std::sqrt(num) / std::max(std::sqrt(den), 1e-300);
}

WorstNode worst_node(const Graph& g, const std::vector<std::vector<float>>& got,
                     const std::vector<std::vector<float>>& want) {
  WorstNode worst;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto i = static_cast<std::size_t>(v);
    if (const double e = relative_error(got[i], want[i]); e > worst.error)
      worst = {e, g.node(v).name};
  }
  return worst;
}

SmallWorkload wide_llama_layer() {
  workloads::WorkloadSpec s;
  s.name = "llama-layer";
  s.params = {{"dim", "256"}, {"heads", "4"}, {"ffn", "512"}, {"seq", "128"}, {"vocab", "1000"}};
  s.dtype = "f32";
  s.devices = 2;
  return {"llama-layer-256", workloads::generate_workload(s)};
}

}  // namespace doppler::test
