// The whole-model workload `llama` (docs/workloads.md): its FLOPs against hand formulas and the
// llama-block graph of the same sizes, its relation to llama-layer and to its own forward pass,
// the Llama-2 parameter counts of the named sizes, and its errors.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/util/error.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using Params = std::map<std::string, std::string>;

Graph make(const std::string& name, Params params, int devices, bool training = false) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.devices = devices;
  s.training = training;
  return workloads::generate_workload(s);
}

// Sum of the FLOPs of the nodes whose kernel is `op` (every node when empty).
double flops(const Graph& g, const std::string& op = "") {
  double f = 0;
  for (const Node& n : g.nodes())
    if (op.empty() || n.exec->op == op) f += n.flops;
  return f;
}

std::map<std::string, int> placed_by_kernel(const Graph& g) {
  std::map<std::string, int> m;
  for (const Node& n : g.nodes())
    if (n.kind != OpKind::input) ++m[n.exec->op];
  return m;
}

int placed(const Graph& g) {
  int n = 0;
  for (const Node& v : g.nodes()) n += v.kind != OpKind::input;
  return n;
}

std::int64_t num(const Graph& g, const std::string& key) {
  return std::stoll(g.meta().params.at(key));
}

std::string error_of(const std::string& name, Params params, bool training = false) {
  try {
    make(name, std::move(params), 4, training);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const Params kTiny = {{"seq", "12"},   {"dim", "32"},  {"heads", "4"}, {"ffn", "40"},
                      {"vocab", "50"}, {"batch", "2"}, {"layers", "3"}};

TEST(LlamaModel, FlopsAreTheBlocksPlusMaskPlusHead) {
  // Whole model = embedding (an input: 0) + N x (llama-block of the same sizes and blocking
  // + the causal-mask add, B H S^2) + final RMSNorm (sumsq 2, mul 1, mul 1 per element, rsqrt 3
  // per token) + logits of every token (2 B S D V, and (K - 1) B S V to add K partials).
  Params sevenb_two = {{"size", "7b"}, {"layers", "2"}, {"seq", "512"}};
  for (const auto& [params, devices] :
       std::vector<std::pair<Params, int>>{{kTiny, 4}, {kTiny, 3}, {sevenb_two, 8}}) {
    const Graph model = make("llama", params, devices);
    const double b = num(model, "batch"), s = num(model, "seq"), d = num(model, "dim"),
                 h = num(model, "heads"), v = num(model, "vocab"), n = num(model, "layers"),
                 k = num(model, "inner_blocks");
    Params block_params = {{"batch", model.meta().params.at("batch")},
                           {"seq", model.meta().params.at("seq")},
                           {"dim", model.meta().params.at("dim")},
                           {"heads", model.meta().params.at("heads")},
                           {"ffn", model.meta().params.at("ffn")}};
    const Graph block = make("llama-block", block_params, devices);
    const double want = n * (flops(block) + b * h * s * s) + (4 * b * s * d + 3 * b * s) +
                        2 * b * s * d * v + (k - 1) * b * s * v;
    EXPECT_EQ(flops(model), want) << devices;
    EXPECT_EQ(flops(model, "einsum"), n * flops(block, "einsum") + 2 * b * s * d * v);
  }
}

TEST(LlamaModel, OneLayerIsTheLayerWithLogitsForEveryToken) {
  // llama-layer = one block + mask + final norm + last-token select + logits of the last token.
  // The model with layers = 1 has the same ops but no select; its logits read the final norm
  // of every token through one relayout block (whole tokens, as the block's projections read
  // their normalised inputs); llama-layer's single-token select needs none.
  Params p = kTiny;
  p.erase("layers");
  p["batch"] = "1";
  for (int devices : {2, 4, 8}) {
    const Graph layer = make("llama-layer", p, devices);
    Params mp = p;
    mp["layers"] = "1";
    const Graph model = make("llama", mp, devices);
    auto want = placed_by_kernel(layer);
    const auto k = static_cast<int>(num(model, "inner_blocks"));
    want["select"] -= 1;
    if (want["select"] == 0) want.erase("select");
    want["assemble"] += 1;
    EXPECT_EQ(placed_by_kernel(model), want) << devices;
    EXPECT_EQ(placed(model), placed(layer));
    // Logits for S tokens instead of 1: (S - 1) x (2 D V + (K - 1) V) more FLOPs (batch 1).
    const double s = 12, d = 32, v = 50;
    EXPECT_EQ(flops(model) - flops(layer), (s - 1) * (2 * d * v + (k - 1) * v)) << devices;
  }
}

TEST(LlamaModel, PlacedOpsFollowThePartitioningRule) {
  // docs/workloads.md: model = N (block + 1 + H) + 4T + 1 + VK + agg(K) V with the block count
  // of llama-block (checked by test_structure.cpp).
  for (int devices : {2, 4, 8}) {
    Params p = kTiny;
    p["batch"] = "1";
    const Graph model = make("llama", p, devices);
    p.erase("layers");
    p.erase("vocab");
    const Graph block = make("llama-block", p, devices);
    const int t = devices, h = std::min(devices, 4), k = 2, v = devices;
    EXPECT_EQ(placed(model), 3 * (placed(block) + 1 + h) + 4 * t + 1 + v * k + v) << devices;
  }
}

TEST(LlamaModel, TrainingEinsumFlopsAreExactlyThreeTimesTheForwardsPlusGainGradients) {
  // Every forward einsum has two gradient einsums over its own iteration space (2x its FLOPs);
  // the only other einsums are the 2N + 1 RMSNorm gain gradients, 2 B S D FLOPs each.
  for (const auto& [params, devices] : std::vector<std::pair<Params, int>>{
           {kTiny, 4}, {kTiny, 3}, {{{"size", "7b"}, {"layers", "2"}, {"seq", "256"}}, 16}}) {
    const Graph fwd = make("llama", params, devices);
    const Graph train = make("llama", params, devices, true);
    const double b = num(fwd, "batch"), s = num(fwd, "seq"), d = num(fwd, "dim"),
                 n = num(fwd, "layers");
    EXPECT_EQ(flops(train, "einsum"), 3 * flops(fwd, "einsum") + (2 * n + 1) * 2 * b * s * d);
    // The forward graph is the training graph's first nodes, unchanged.
    ASSERT_GT(train.num_nodes(), fwd.num_nodes());
    for (NodeId i = 0; i < fwd.num_nodes(); ++i) {
      ASSERT_EQ(train.node(i).name, fwd.node(i).name);
      ASSERT_EQ(train.node(i).flops, fwd.node(i).flops);
    }
    // Every weight has its gradient.
    std::set<std::string> grads;
    for (const Node& v : train.nodes()) grads.insert(v.name.substr(0, v.name.find('[')));
    for (const char* w : {"grad.embedding", "grad.w_vocab", "grad.final_norm.g", "grad.layers.0.wq",
                          "grad.layers.1.w2"})
      EXPECT_TRUE(grads.count(w) || grads.count(std::string("agg:") + w)) << w;
  }
}

TEST(LlamaModel, NamedSizesHaveTheLlama2ParameterCounts) {
  // Published parameter counts of Llama-2 (7B, 13B, 70B). The graph's weights are its input
  // tensors but the embedding rows (an activation); adding the embedding table (vocab x dim)
  // gives the published count. 70B is modelled with full multi-head attention: its wk and wv
  // are dim x dim instead of dim x (8 KV heads x 128), 2 x 8192 x 7168 more per layer.
  const std::map<std::string, double> published = {
      {"7b", 6'738'415'616}, {"13b", 13'015'864'320}, {"70b", 68'976'648'192}};
  const std::map<std::string, double> gqa_excess = {
      {"7b", 0}, {"13b", 0}, {"70b", 80.0 * 2 * 8192 * (8192 - 1024)}};
  for (const auto& [size, count] : published) {
    const Graph g = make("llama", {{"size", size}, {"seq", "8"}}, 1);
    EXPECT_EQ(g.meta().params.at("dtype"), "f16");
    EXPECT_EQ(g.meta().params.at("size"), size);
    double weight_bytes = 0;
    for (const Node& n : g.nodes())
      if (n.kind == OpKind::input && n.name.rfind("embedding", 0) != 0) weight_bytes += n.out_bytes;
    const double embedding_table = num(g, "vocab") * num(g, "dim");
    EXPECT_EQ(weight_bytes / 2 + embedding_table - gqa_excess.at(size), count) << size;
  }
  const Graph g7 = make("llama", {{"size", "7b"}, {"seq", "8"}}, 1);
  EXPECT_EQ(num(g7, "layers"), 32);
  EXPECT_EQ(num(g7, "heads"), 32);
  EXPECT_EQ(num(g7, "ffn"), 11008);
}

TEST(LlamaModel, ExplicitParametersOverrideTheSizeAndDefaultsAre7b) {
  const Graph g = make("llama", {{"size", "13b"}, {"layers", "2"}, {"seq", "8"}, {"ffn", "64"}}, 2);
  EXPECT_EQ(num(g, "dim"), 5120);
  EXPECT_EQ(num(g, "heads"), 40);
  EXPECT_EQ(num(g, "ffn"), 64);
  EXPECT_EQ(num(g, "layers"), 2);
  const Graph d = make("llama", {{"seq", "8"}, {"layers", "1"}}, 2);
  EXPECT_EQ(num(d, "dim"), 4096);
  EXPECT_EQ(num(d, "vocab"), 32000);
  EXPECT_EQ(d.meta().params.count("size"), 0u);
}

TEST(LlamaModel, ErrorsAreOneLine) {
  for (const auto& [params, needle] : std::vector<std::pair<Params, std::string>>{
           {{{"size", "30b"}}, "valid: 7b, 13b, 70b"},
           {{{"size", "7B"}}, "unknown llama size '7B'"},
           {{{"layers", "0"}}, "layers"},
           {{{"size", "7b"}, {"heads", "33"}}, "heads"},
           {{{"vocab", "50"}, {"vocab_blocks", "51"}}, "vocab_blocks"},
           {{{"window", "3"}}, "unknown parameter 'window'"}}) {
    const std::string e = error_of("llama", params);
    EXPECT_NE(e.find(needle), std::string::npos) << e;
    EXPECT_EQ(e.find('\n'), std::string::npos) << e;
  }
}

}  // namespace
}  // namespace doppler
