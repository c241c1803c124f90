// --training: the blocked backward pass, evaluated block by block, equals the gradient of the
// loss <dy, y(params)> obtained by central finite differences of the unblocked double-precision
// forward pass (reference_models.cpp), for every weight and for the input activations.
#include <cmath>
#include <functional>
#include <set>

#include <gtest/gtest.h>

#include "block_eval.hpp"
#include "reference_models.hpp"

#include "doppler/util/error.hpp"
#include "doppler/workloads/workload.hpp"

namespace doppler {
namespace {

using test::Dense;

test::Tensors inputs_of(const Graph& g, const std::vector<Dense>& vals) {
  std::set<std::string> names;
  for (const Node& n : g.nodes())
    if (n.kind == OpKind::input) names.insert(n.name.substr(0, n.name.find('[')));
  test::Tensors t;
  for (const auto& name : names) t[name] = test::assemble_tensor(g, vals, name);
  return t;
}

Graph make_training(const std::string& name, std::map<std::string, std::string> params,
                    int devices) {
  workloads::WorkloadSpec s;
  s.name = name;
  s.params = std::move(params);
  s.dtype = "f32";
  s.devices = devices;
  s.training = true;
  return workloads::generate_workload(s);
}

// Compares grad.<name> with finite differences of loss() at a few entries of inputs[name].
void check_gradient(const Graph& g, const std::vector<Dense>& vals, test::Tensors& in,
                    const std::string& name, const std::function<double()>& loss) {
  SCOPED_TRACE(name);
  const Dense grad = test::assemble_tensor(g, vals, "grad." + name);
  Dense& w = in.at(name);
  ASSERT_EQ(grad.shape, w.shape);
  double scale = 0;
  for (double x : grad.data) scale = std::max(scale, std::abs(x));
  ASSERT_GT(scale, 0);  // a gradient that is identically zero would prove nothing
  const double h = 1e-4;
  const auto n = static_cast<std::size_t>(w.numel());
  for (std::size_t k = 0; k < 6; ++k) {
    const std::size_t i = (k * 7919 + 13 * k * k + 5) % n;
    const double keep = w.data[i];
    w.data[i] = keep + h;
    const double up = loss();
    w.data[i] = keep - h;
    const double down = loss();
    w.data[i] = keep;
    EXPECT_NEAR(grad.data[i], (up - down) / (2 * h), 1e-6 * (1 + scale)) << "entry " << i;
  }
}

TEST(Training, FfnnGradientsMatchFiniteDifferences) {
  for (int devices : {4, 3}) {
    const Graph g =
        make_training("ffnn", {{"batch", "24"}, {"dim", "6"}, {"hidden", "20"}}, devices);
    const auto vals = test::evaluate_blocks(g, false);
    test::Tensors in = inputs_of(g, vals);
    ASSERT_TRUE(in.count("dy"));
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "y"), test::reference_ffnn(in)),
              1e-12);
    const auto loss = [&] { return test::dot(in.at("dy"), test::reference_ffnn(in)); };
    for (const char* w : {"x", "w1", "w2"}) check_gradient(g, vals, in, w, loss);
  }
}

TEST(Training, LlamaBlockGradientsMatchFiniteDifferences) {
  const std::map<std::string, std::string> small = {
      {"dim", "32"}, {"heads", "2"}, {"ffn", "48"}, {"seq", "8"}, {"batch", "2"}};
  for (int devices : {4, 3}) {
    const Graph g = make_training("llama-block", small, devices);
    const auto vals = test::evaluate_blocks(g, false);
    test::Tensors in = inputs_of(g, vals);
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "y"),
                                   test::reference_llama_block(in, false)),
              1e-12);
    const auto loss = [&] {
      return test::dot(in.at("dy"), test::reference_llama_block(in, false));
    };
    for (const char* w :
         {"x", "attn_norm.g", "wq", "wk", "wv", "wo", "ffn_norm.g", "w1", "w2", "w3"})
      check_gradient(g, vals, in, w, loss);
  }
}

TEST(Training, LlamaModelGradientsMatchFiniteDifferences) {
  // Two blocks, so that a gradient crosses a block boundary (grad.layers.1.x -> layer 0).
  const std::map<std::string, std::string> small = {{"dim", "16"},  {"heads", "2"}, {"ffn", "24"},
                                                    {"seq", "6"},   {"batch", "2"}, {"vocab", "20"},
                                                    {"layers", "2"}};
  for (int devices : {4, 3}) {
    const Graph g = make_training("llama", small, devices);
    const auto vals = test::evaluate_blocks(g, false);
    test::Tensors in = inputs_of(g, vals);
    ASSERT_TRUE(in.count("dlogits"));
    EXPECT_LT(test::relative_error(test::assemble_tensor(g, vals, "logits"),
                                   test::reference_llama_model(in, 2)),
              1e-12);
    const auto loss = [&] {
      return test::dot(in.at("dlogits"), test::reference_llama_model(in, 2));
    };
    for (const char* w :
         {"embedding", "layers.0.attn_norm.g", "layers.0.wq", "layers.0.wk", "layers.0.wv",
          "layers.0.wo", "layers.0.ffn_norm.g", "layers.0.w1", "layers.0.w2", "layers.0.w3",
          "layers.1.wq", "layers.1.w3", "layers.1.ffn_norm.g", "final_norm.g", "w_vocab"})
      check_gradient(g, vals, in, w, loss);
  }
}

TEST(Training, OnlyFfnnAndTheLlamasBlockAndModelHaveATrainingVariant) {
  for (const char* name : {"chainmm", "llama-layer", "random-dag"}) {
    workloads::WorkloadSpec s;
    s.name = name;
    s.training = true;
    EXPECT_THROW(workloads::generate_workload(s), InputError) << name;
  }
}

}  // namespace
}  // namespace doppler
