// doppler demo: the main job on the embedded default workload.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "commands.hpp"
#include "common.hpp"

#include "doppler/graph/analysis.hpp"
#include "doppler/graph/graph_builder.hpp"

namespace doppler::cli {

namespace {

// A 2x2x2-blocked matmul C = A B: 8 partial products and 4 aggregations (reference units).
Graph embedded_workload() {
  GraphBuilder b;
  std::vector<NodeId> partial;
  for (int i = 0; i < 8; ++i) {
    Node n;
    n.name = fmt::format("matmul[{},{},{}]", i / 4, (i / 2) % 2, i % 2);
    n.kind = OpKind::einsum;
    n.compute_cost = 8;
    n.transfer_cost = 4;
    partial.push_back(b.add_node(n));
  }
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.name = fmt::format("aggregate[{},{}]", i / 2, i % 2);
    n.kind = OpKind::aggregate;
    n.compute_cost = 1;
    n.transfer_cost = 4;
    const NodeId v = b.add_node(n);
    b.add_edge(partial[static_cast<std::size_t>(2 * i)], v);
    b.add_edge(partial[static_cast<std::size_t>(2 * i + 1)], v);
  }
  b.set_meta({"blocked-matmul-2x2x2", "embedded", {}});
  return b.build();
}

void run_demo() {
  const Graph g = embedded_workload();
  const CostModel cost = CostModel::reference(g);
  const GraphAnalysis an(g, cost);
  std::cout << fmt::format("workload {}: {} ops, {} edges\n", g.meta().name, g.num_nodes(),
                           g.num_edges());
  for (int p : {1, 2, 4, 8})
    std::cout << fmt::format("  lower bound on {} device(s): {}\n", p, an.lower_bound(p));
}

}  // namespace

void add_demo(CLI::App& app) {
  auto* cmd = app.add_subcommand("demo", "Run the main job on the embedded default workload");
  cmd->callback([] { run_demo(); });
}

}  // namespace doppler::cli
