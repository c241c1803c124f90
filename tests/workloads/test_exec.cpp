// Executable descriptions are complete: small instances of every workload, evaluated block by
// block with the test's own kernel implementation (block_eval.cpp, written from docs/exec.md),
// equal the unblocked computation written in plain loops (reference_models.cpp).
#include <set>

#include <gtest/gtest.h>

#include "block_eval.hpp"
#include "reference_models.hpp"

#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using test::Dense;

std::string tensor_of(const std::string& node_name) {
  return node_name.substr(0, node_name.find('['));
}

// Every input tensor of `g`, assembled from its evaluated blocks.
test::Tensors inputs_of(const Graph& g, const std::vector<Dense>& vals) {
  std::set<std::string> names;
  for (const Node& n : g.nodes())
    if (n.kind == OpKind::input) names.insert(tensor_of(n.name));
  test::Tensors t;
  for (const auto& name : names) t[name] = test::assemble_tensor(g, vals, name);
  return t;
}

Graph make(const std::string& name, std::map<std::string, std::string> params, int devices) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.dtype = "f32";
  s.devices = devices;
  return workloads::generate_workload(s);
}

void expect_every_node_executable(const Graph& g) {
  for (NodeId v = 0; v < g.num_nodes(); ++v) ASSERT_TRUE(g.node(v).exec) << g.label(v);
}

TEST(Exec, ChainMMMatchesUnblocked) {
  for (const auto& [params, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{{{{"n", "64"}}, 4},
                                                                       {{{"n", "30"},
                                                                         {"row_blocks", "3"},
                                                                         {"col_blocks", "4"},
                                                                         {"inner_blocks", "3"},
                                                                         {"de_inner_blocks", "2"}},
                                                                        4},
                                                                       {{{"n", "17"}}, 3}}) {
    const Graph g = make("chainmm", params, devices);
    expect_every_node_executable(g);
    const auto vals = test::evaluate_blocks(g, true);
    const Dense want = test::reference_chainmm(inputs_of(g, vals));
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "y"), want), 1e-5)
        << params.at("n");
  }
}

TEST(Exec, FfnnMatchesUnblocked) {
  for (const auto& params : std::vector<std::map<std::string, std::string>>{
           {{"batch", "64"}, {"dim", "16"}, {"hidden", "64"}},
           {{"batch", "30"},
            {"dim", "7"},
            {"hidden", "50"},
            {"batch_blocks", "4"},
            {"hidden_blocks", "3"}}}) {
    const Graph g = make("ffnn", params, 4);
    expect_every_node_executable(g);
    const auto vals = test::evaluate_blocks(g, true);
    const Dense want = test::reference_ffnn(inputs_of(g, vals));
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "y"), want), 1e-5);
  }
}

const std::map<std::string, std::string> kSmallLlama = {
    {"dim", "64"}, {"heads", "4"}, {"ffn", "96"}, {"seq", "32"}};

TEST(Exec, LlamaBlockMatchesUnblocked) {
  auto odd = kSmallLlama;
  odd["batch"] = "2";
  odd["seq"] = "9";
  for (const auto& [params, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{
           {kSmallLlama, 4}, {kSmallLlama, 3}, {odd, 4}}) {
    const Graph g = make("llama-block", params, devices);
    expect_every_node_executable(g);
    const auto vals = test::evaluate_blocks(g, true);
    const Dense want = test::reference_llama_block(inputs_of(g, vals), false);
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "y"), want), 1e-5) << devices;
  }
}

TEST(Exec, LlamaLayerMatchesUnblocked) {
  auto params = kSmallLlama;
  params["vocab"] = "100";
  auto batched = params;
  batched["batch"] = "2";
  for (const auto& [p, devices] : std::vector<std::pair<std::map<std::string, std::string>, int>>{
           {params, 4}, {batched, 2}, {params, 5}}) {
    const Graph g = make("llama-layer", p, devices);
    expect_every_node_executable(g);
    const auto vals = test::evaluate_blocks(g, true);
    const Dense want = test::reference_llama_layer(inputs_of(g, vals));
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "logits"), want), 1e-5)
        << devices;
  }
}

TEST(Exec, LlamaModelMatchesUnblocked) {
  auto params = kSmallLlama;
  params["vocab"] = "100";
  params["layers"] = "2";
  auto batched = params;
  batched["batch"] = "2";
  batched["seq"] = "9";
  for (const auto& [p, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{{params, 4}, {batched, 3}}) {
    const Graph g = make("llama", p, devices);
    expect_every_node_executable(g);
    const auto vals = test::evaluate_blocks(g, true);
    const Dense want = test::reference_llama_model(inputs_of(g, vals), 2);
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "logits"), want), 1e-5)
        << devices;
  }
}

TEST(Exec, DtypeChangesBytesOnly) {
  workloads::WorkloadSpec s;
  s.name = "llama-block";
  s.params = kSmallLlama;
  s.dtype = "f32";
  const Graph a = workloads::generate_workload(s);
  s.dtype = "f16";
  const Graph b = workloads::generate_workload(s);
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (NodeId v = 0; v < a.num_nodes(); ++v) {
    EXPECT_EQ(a.node(v).exec, b.node(v).exec);
    EXPECT_EQ(a.node(v).flops, b.node(v).flops);
    EXPECT_EQ(a.node(v).out_bytes, 2 * b.node(v).out_bytes);
  }
  for (EdgeId e = 0; e < a.num_edges(); ++e) EXPECT_EQ(a.edge_bytes(e), 2 * b.edge_bytes(e));
}

}  // namespace
}  // namespace doppler
