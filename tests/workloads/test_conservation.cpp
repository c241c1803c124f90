// FLOP and byte conservation: for several partitionings, the blocks of every tensor op sum to
// the unblocked op's FLOPs (aggregation adds counted separately, (K - 1) per output element),
// the blocks of every result tensor sum to its bytes, and every block carries its op's
// reference cost C (multiply-adds of the whole op for einsums, output elements otherwise).
// Expected values are written here from the sizes, independently of the generators.
#include <map>
#include <set>

#include <gtest/gtest.h>

#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

struct OpTotals {
  double flops = 0, bytes = 0;
  int blocks = 0;
  std::set<double> reference_c;
};

// Totals per tensor op (node name without its block index).
std::map<std::string, OpTotals> totals(const Graph& g) {
  std::map<std::string, OpTotals> t;
  for (const Node& n : g.nodes()) {
    auto& o = t[n.name.substr(0, n.name.find('['))];
    o.flops += n.flops;
    o.bytes += n.out_bytes;
    ++o.blocks;
    o.reference_c.insert(n.compute_cost.value_or(-1));
  }
  return t;
}

Graph make(const std::string& name, std::map<std::string, std::string> params, int devices,
           const std::string& dtype) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.devices = devices;
  s.dtype = dtype;
  return workloads::generate_workload(s);
}

// Expectation for one tensor op: FLOPs of the whole op, elements of its result, reference C.
struct Expect {
  double flops, elements, c;
};

void check(const Graph& g, const std::map<std::string, Expect>& want, double dsize) {
  const auto t = totals(g);
  for (const auto& [name, e] : want) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(t.count(name));
    const OpTotals& o = t.at(name);
    EXPECT_DOUBLE_EQ(o.flops, e.flops);
    if (e.elements >= 0) {
      EXPECT_DOUBLE_EQ(o.bytes, e.elements * dsize);
    }
    ASSERT_EQ(o.reference_c.size(), 1u);
    EXPECT_DOUBLE_EQ(*o.reference_c.begin(), e.c);
  }
  // Every node belongs to some checked op, an input or a relayout: nothing is unaccounted for.
  for (const auto& [name, o] : t) {
    if (!want.count(name) && name.rfind("relayout:", 0) != 0) {
      EXPECT_EQ(o.flops, 0) << name;
    }
  }
}

TEST(Conservation, ChainMM) {
  for (const auto& [params, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{{{{"n", "10000"}}, 4},
                                                                       {{{"n", "1000"}}, 8},
                                                                       {{{"n", "101"},
                                                                         {"row_blocks", "3"},
                                                                         {"col_blocks", "5"},
                                                                         {"inner_blocks", "7"},
                                                                         {"de_inner_blocks", "2"}},
                                                                        1}}) {
    const Graph g = make("chainmm", params, devices, "f32");
    const double n = std::stod(params.at("n"));
    const double n2 = n * n, n3 = n2 * n;
    const double k = std::stod(g.meta().params.at("inner_blocks"));
    const double kx = std::stod(g.meta().params.at("de_inner_blocks"));
    // Partial tensors hold k copies of the output; aggregation then yields n^2 elements.
    check(g,
          {{"de", {2 * n3, kx * n2, n3}},
           {"agg:de", {(kx - 1) * n2, n2, n2}},
           {"c_de", {2 * n3, k * n2, n3}},
           {"agg:c_de", {(k - 1) * n2, n2, n2}},
           {"ab", {2 * n3, k * n2, n3}},
           {"agg:ab", {(k - 1) * n2, n2, n2}},
           {"y", {n2, n2, n2}}},
          4);
    // Inputs: no compute, transfer 4 x the whole tensor.
    for (const Node& v : g.nodes())
      if (v.kind == OpKind::input) {
        EXPECT_EQ(v.compute_cost, 0.0);
        EXPECT_EQ(v.transfer_cost, 4 * n2);
      }
  }
}

TEST(Conservation, Ffnn) {
  for (const auto& [params, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{
           {{}, 4},
           {{{"batch", "1000"}, {"dim", "30"}, {"hidden", "999"}}, 3},
           {{{"batch", "77"}, {"dim", "5"}, {"hidden", "31"}, {"hidden_blocks", "4"}}, 2}}) {
    const Graph g = make("ffnn", params, devices, "f16");
    const auto& m = g.meta().params;
    const double b = std::stod(m.at("batch")), d = std::stod(m.at("dim")),
                 h = std::stod(m.at("hidden")), kh = std::stod(m.at("hidden_blocks"));
    check(g,
          {{"hidden", {2 * b * d * h, b * h, b * d * h}},
           {"relu", {b * h, b * h, b * h}},
           {"out", {2 * b * h * d, kh * b * d, b * h * d}},
           {"agg:out", {(kh - 1) * b * d, b * d, b * d}},
           {"y.max", {b * d, b, b * d}},
           {"y.sub", {b * d, b * d, b * d}},
           {"y.exp", {b * d, b * d, b * d}},
           {"y.sum", {b * d, b, b * d}},
           {"y", {b * d, b * d, b * d}}},
          2);
  }
}

TEST(Conservation, LlamaLayer) {
  for (const auto& [params, devices] :
       std::vector<std::pair<std::map<std::string, std::string>, int>>{{{}, 4},
                                                                       {{}, 8},
                                                                       {{{"seq", "100"},
                                                                         {"dim", "96"},
                                                                         {"heads", "6"},
                                                                         {"ffn", "200"},
                                                                         {"vocab", "1000"},
                                                                         {"batch", "3"}},
                                                                        5}}) {
    const Graph g = make("llama-layer", params, devices, "f32");
    const auto& m = g.meta().params;
    const double b = std::stod(m.at("batch")), s = std::stod(m.at("seq")),
                 d = std::stod(m.at("dim")), h = std::stod(m.at("heads")),
                 f = std::stod(m.at("ffn")), v = std::stod(m.at("vocab")),
                 k = std::stod(m.at("inner_blocks")), kh = std::stod(m.at("head_blocks")),
                 kf = std::stod(m.at("ffn_blocks"));
    const double t = b * s;            // tokens
    const double att = b * h * s * s;  // attention scores
    std::map<std::string, Expect> want;
    for (const std::string norm : {"attn_norm", "ffn_norm", "final_norm"}) {
      want[norm + ".ss"] = {2 * t * d, t, t * d};  // sum of squares: 2 FLOPs per input element
      want[norm + ".rsqrt"] = {3 * t, t, t};
      want[norm + ".xr"] = {t * d, t * d, t * d};
      want[norm] = {t * d, t * d, t * d};
    }
    for (const std::string p : {"q", "k", "v"}) {
      want[p] = {2 * t * d * d, k * t * d, t * d * d};
      want["agg:" + p] = {(k - 1) * t * d, t * d, t * d};
    }
    want["q_rot"] = want["k_rot"] = {3 * t * d, t * d, t * d};
    want["scores"] = {2 * att * (d / h), att, att * (d / h)};
    want["scores_scaled"] = want["scores_masked"] = {att, att, att};
    want["causal_mask"] = {0, s * s, s * s};
    want["softmax.max"] = want["softmax.sum"] = {att, att / s, att};
    want["softmax.sub"] = want["softmax.exp"] = want["softmax"] = {att, att, att};
    want["attn"] = {2 * att * (d / h), t * d, att * (d / h)};
    want["attn_out"] = {2 * t * d * d, kh * t * d, t * d * d};
    want["agg:attn_out"] = {(kh - 1) * t * d, t * d, t * d};
    want["attn_residual"] = want["y"] = {t * d, t * d, t * d};
    for (const std::string p : {"ffn.h1", "ffn.h3"}) {
      want[p] = {2 * t * d * f, k * t * f, t * d * f};
      want["agg:" + p] = {(k - 1) * t * f, t * f, t * f};
    }
    want["ffn.silu"] = {4 * t * f, t * f, t * f};
    want["ffn.swiglu"] = {t * f, t * f, t * f};
    want["ffn.out"] = {2 * t * f * d, kf * t * d, t * f * d};
    want["agg:ffn.out"] = {(kf - 1) * t * d, t * d, t * d};
    want["last_token"] = {0, b * d, b * d};
    want["logits"] = {2 * b * d * v, k * b * v, b * d * v};
    want["agg:logits"] = {(k - 1) * b * v, b * v, b * v};
    check(g, want, 4);
  }
}

TEST(Conservation, TrainingWeightGradientsHaveTheForwardCost) {
  // Each weight gradient is one einsum with the forward's iteration space: same FLOPs.
  workloads::WorkloadSpec s;
  s.name = "llama-block";
  s.training = true;
  s.params = {{"seq", "64"}, {"dim", "64"}, {"heads", "4"}, {"ffn", "80"}};
  const Graph g = workloads::generate_workload(s);
  const auto t = totals(g);
  const double tok = 64, d = 64, f = 80;
  EXPECT_DOUBLE_EQ(t.at("grad.wq").flops, 2 * tok * d * d);
  EXPECT_DOUBLE_EQ(t.at("grad.w2").flops, 2 * tok * f * d);
  EXPECT_DOUBLE_EQ(t.at("grad.w1").flops, 2 * tok * d * f);
  EXPECT_DOUBLE_EQ(t.at("grad.attn_norm.g").flops, 2 * tok * d);
}

}  // namespace
}  // namespace doppler
