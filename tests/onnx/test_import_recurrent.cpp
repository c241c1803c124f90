// ONNX import of the recurrent ops, LSTM, GRU and RNN, on small hand-built models: values (block
// evaluator of docs/exec.md) against plain loops written from ONNX's equations (gate orders iofc
// and zrh, peepholes, clip, linear_before_reset, reverse and bidirectional directions, layout 1,
// activations with alpha and beta) on 1-4 devices, FLOPs by docs/onnx.md's formula, and one-line
// errors for what is not supported.
#include <algorithm>
#include <cmath>
#include <optional>

#include <gtest/gtest.h>

#include "onnx/import_eval.hpp"
#include "onnx/model_builder.hpp"

namespace doppler {
namespace {

using test::Dense;
using test::import_and_eval;
using test::import_error;
using test::max_abs_diff;
using test::ModelBuilder;

constexpr std::int64_t kS = 4, kB = 3, kI = 5, kH = 4;

/// An activation with its parameters (alpha, beta: those of ONNX's defaults when unused).
struct Act {
  std::string name;
  double alpha = 0, beta = 0;
};

double apply(const Act& a, double x) {
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return std::max(x, 0.0);
  if (a.name == "LeakyRelu") return x >= 0 ? x : a.alpha * x;
  if (a.name == "HardSigmoid") return std::clamp(a.alpha * x + a.beta, 0.0, 1.0);
  throw std::logic_error("no activation " + a.name);
}

/// One recurrent layer of kS steps, batch kB, input kI, hidden kH.
struct Case {
  std::string label, op;
  std::string direction = "forward";
  bool batch_first = false, bias = true, initial = true, peepholes = false, lbr = false;
  std::optional<float> clip;
  std::vector<Act> acts;  ///< per direction; empty: ONNX's defaults (not written to the model)

  int gates() const { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }
  std::int64_t dirs() const { return direction == "bidirectional" ? 2 : 1; }
  std::vector<Act> activations() const {
    if (!acts.empty()) return acts;
    const std::vector<Act> one = op == "LSTM"  ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}, {"Tanh"}}
                                 : op == "GRU" ? std::vector<Act>{{"Sigmoid"}, {"Tanh"}}
                                               : std::vector<Act>{{"Tanh"}};
    std::vector<Act> all = one;
    if (dirs() == 2) all.insert(all.end(), one.begin(), one.end());
    return all;
  }
  std::vector<std::int64_t> state_shape() const {
    return batch_first ? std::vector<std::int64_t>{kB, dirs(), kH}
                       : std::vector<std::int64_t>{dirs(), kB, kH};
  }
};

struct Weights {
  std::vector<float> w, r, b, p;
  explicit Weights(const Case& c)
      : w(test::iota_values(static_cast<std::size_t>(c.dirs() * c.gates() * kH * kI), 0.1f, -0.5f)),
        r(test::iota_values(static_cast<std::size_t>(c.dirs() * c.gates() * kH * kH), 0.08f,
                            -0.4f)),
        b(test::iota_values(static_cast<std::size_t>(c.dirs() * 2 * c.gates() * kH), 0.05f, -0.2f)),
        p(test::iota_values(static_cast<std::size_t>(c.dirs() * 3 * kH), 0.1f, -0.45f)) {}
};

ModelBuilder model(const Case& c, const Weights& wt) {
  const std::int64_t g = c.gates(), d = c.dirs();
  ModelBuilder m(14);
  m.input("x",
          c.batch_first ? std::vector<test::Dim>{kB, kS, kI} : std::vector<test::Dim>{kS, kB, kI});
  m.weight("W", {d, g * kH, kI}, wt.w).weight("R", {d, g * kH, kH}, wt.r);
  std::vector<std::string> in = {"x", "W", "R", c.bias ? "B" : "", "", "", ""};
  if (c.bias) m.weight("B", {d, 2 * g * kH}, wt.b);
  const auto state = c.state_shape();
  if (c.initial) {
    m.input("h0", {state[0], state[1], state[2]});
    in[5] = "h0";
    if (c.op == "LSTM") m.input("c0", {state[0], state[1], state[2]}), in[6] = "c0";
  }
  if (c.peepholes) m.weight("P", {d, 3 * kH}, wt.p), in.push_back("P");
  while (!in.empty() && in.back().empty()) in.pop_back();
  std::vector<std::string> out = {"y", "yh"};
  if (c.op == "LSTM") out.push_back("yc");
  m.output("y", {"a", "b", "c", "d"}).output("yh", {"a", "b", "c"});
  if (c.op == "LSTM") m.output("yc", {"a", "b", "c"});
  std::vector<std::pair<std::string, std::int64_t>> ints = {{"hidden_size", kH},
                                                            {"layout", c.batch_first ? 1 : 0}};
  if (c.lbr) ints.push_back({"linear_before_reset", 1});
  std::vector<std::pair<std::string, float>> fl;
  if (c.clip) fl.push_back({"clip", *c.clip});
  m.node(c.op, in, out, ints, {}, fl);
  m.attr("direction", c.direction);
  if (!c.acts.empty()) {
    std::vector<std::string> names;
    std::vector<float> alpha, beta;
    for (const Act& a : c.acts) {
      names.push_back(a.name);
      if (a.name == "LeakyRelu" || a.name == "HardSigmoid")
        alpha.push_back(static_cast<float>(a.alpha));
      if (a.name == "HardSigmoid") beta.push_back(static_cast<float>(a.beta));
    }
    m.attr("activations", names);
    if (!alpha.empty()) m.floats("activation_alpha", alpha);
    if (!beta.empty()) m.floats("activation_beta", beta);
  }
  return m;
}

struct Outputs {
  Dense y, yh, yc;  ///< sequence-first: [S, dirs, B, H], [dirs, B, H], [dirs, B, H]
};

// ONNX's equations, one scalar at a time.
Outputs reference(const Case& c, const Weights& wt, const Dense& x, const Dense* h0,
                  const Dense* c0) {
  const std::int64_t g = c.gates(), dirs = c.dirs();
  const auto acts = c.activations();
  const auto per = static_cast<std::int64_t>(acts.size()) / dirs;
  Outputs o{Dense({kS, dirs, kB, kH}), Dense({dirs, kB, kH}), Dense({dirs, kB, kH})};
  const auto xv = [&](std::int64_t t, std::int64_t b, std::int64_t i) {
    return c.batch_first ? x[{b, t, i}] : x[{t, b, i}];
  };
  const auto sv = [&](const Dense* s, std::int64_t d, std::int64_t b, std::int64_t j) {
    return !s ? 0.0 : c.batch_first ? (*s)[{b, d, j}] : (*s)[{d, b, j}];
  };
  const auto clip = [&](double v) {
    return c.clip ? std::clamp(v, -*c.clip * 1.0, *c.clip * 1.0) : v;
  };
  for (std::int64_t d = 0; d < dirs; ++d) {
    const auto act = [&](int k, double v) {
      return apply(acts[static_cast<std::size_t>(d * per + k)], clip(v));
    };
    std::vector<double> h(kB * kH), cell(kB * kH);
    for (std::int64_t b = 0; b < kB; ++b)
      for (std::int64_t j = 0; j < kH; ++j) {
        h[static_cast<std::size_t>(b * kH + j)] = sv(h0, d, b, j);
        cell[static_cast<std::size_t>(b * kH + j)] = sv(c0, d, b, j);
      }
    const bool rev = c.direction == "reverse" || d == 1;
    for (std::int64_t k = 0; k < kS; ++k) {
      const std::int64_t t = rev ? kS - 1 - k : k;
      // Xt W_q^T + Wb_q and s R_q^T + Rb_q for gate q, batch row b, unit j, of a state s.
      const auto xg = [&](std::int64_t q, std::int64_t b, std::int64_t j) {
        double v = c.bias ? wt.b[static_cast<std::size_t>((d * 2 * g + q) * kH + j)] : 0.0;
        for (std::int64_t i = 0; i < kI; ++i)
          v += xv(t, b, i) * wt.w[static_cast<std::size_t>(((d * g + q) * kH + j) * kI + i)];
        return v;
      };
      const auto rg = [&](std::int64_t q, std::int64_t b, std::int64_t j,
                          const std::vector<double>& s) {
        double v = c.bias ? wt.b[static_cast<std::size_t>((d * 2 * g + g + q) * kH + j)] : 0.0;
        for (std::int64_t m = 0; m < kH; ++m)
          v += s[static_cast<std::size_t>(b * kH + m)] *
               wt.r[static_cast<std::size_t>(((d * g + q) * kH + j) * kH + m)];
        return v;
      };
      const auto pv = [&](std::int64_t q, std::int64_t j) {
        return c.peepholes ? wt.p[static_cast<std::size_t>((d * 3 + q) * kH + j)] : 0.0;
      };
      std::vector<double> nh(h.size()), nc(cell.size()), reset_h(h.size());
      if (c.op == "GRU")
        for (std::int64_t b = 0; b < kB; ++b)
          for (std::int64_t j = 0; j < kH; ++j)
            reset_h[static_cast<std::size_t>(b * kH + j)] =
                act(0, xg(1, b, j) + rg(1, b, j, h)) * h[static_cast<std::size_t>(b * kH + j)];
      for (std::int64_t b = 0; b < kB; ++b)
        for (std::int64_t j = 0; j < kH; ++j) {
          const auto at = static_cast<std::size_t>(b * kH + j);
          if (c.op == "LSTM") {
            const double i = act(0, xg(0, b, j) + rg(0, b, j, h) + pv(0, j) * cell[at]);
            const double f = act(0, xg(2, b, j) + rg(2, b, j, h) + pv(2, j) * cell[at]);
            const double cand = act(1, xg(3, b, j) + rg(3, b, j, h));
            nc[at] = f * cell[at] + i * cand;
            const double og = act(0, xg(1, b, j) + rg(1, b, j, h) + pv(1, j) * nc[at]);
            nh[at] = og * act(2, nc[at]);
          } else if (c.op == "GRU") {
            const double z = act(0, xg(0, b, j) + rg(0, b, j, h));
            const double r = act(0, xg(1, b, j) + rg(1, b, j, h));
            const double cand =
                act(1, xg(2, b, j) + (c.lbr ? r * rg(2, b, j, h) : rg(2, b, j, reset_h)));
            nh[at] = (1 - z) * cand + z * h[at];
          } else {
            nh[at] = act(0, xg(0, b, j) + rg(0, b, j, h));
          }
          o.y[{t, d, b, j}] = nh[at];
        }
      h = nh;
      cell = nc;
    }
    for (std::int64_t b = 0; b < kB; ++b)
      for (std::int64_t j = 0; j < kH; ++j) {
        o.yh[{d, b, j}] = h[static_cast<std::size_t>(b * kH + j)];
        o.yc[{d, b, j}] = cell[static_cast<std::size_t>(b * kH + j)];
      }
  }
  return o;
}

// `a` sequence-first ([S, dirs, B, H] or [dirs, B, H]) in the case's layout.
Dense laid_out(const Case& c, const Dense& a) {
  if (!c.batch_first) return a;
  if (a.shape.size() == 3) {
    Dense t({a.shape[1], a.shape[0], a.shape[2]});
    for (std::int64_t d = 0; d < a.shape[0]; ++d)
      for (std::int64_t b = 0; b < a.shape[1]; ++b)
        for (std::int64_t j = 0; j < a.shape[2]; ++j) t[{b, d, j}] = a[{d, b, j}];
    return t;
  }
  Dense t({a.shape[2], a.shape[0], a.shape[1], a.shape[3]});
  for (std::int64_t s = 0; s < a.shape[0]; ++s)
    for (std::int64_t d = 0; d < a.shape[1]; ++d)
      for (std::int64_t b = 0; b < a.shape[2]; ++b)
        for (std::int64_t j = 0; j < a.shape[3]; ++j) t[{b, s, d, j}] = a[{s, d, b, j}];
  return t;
}

// docs/onnx.md's FLOPs: per direction, input projections (+ biases), then per step the
// recurrent products and adds, the activations (sigmoid 4, tanh, relu 1, leaky 2, hard sigmoid
// 4 per element), the cell update, peepholes and clips.
double flops(const Case& c) {
  const auto acts = c.activations();
  const auto per = acts.size() / static_cast<std::size_t>(c.dirs());
  const double e = kB * kH, g = c.gates();
  const auto a = [&](std::size_t d, std::size_t k) {
    const std::string& n = acts[d * per + k].name;
    return e * (n == "Sigmoid" || n == "HardSigmoid" ? 4 : n == "LeakyRelu" ? 2 : 1);
  };
  const double clip = c.clip ? 2 * e : 0;
  double total = 0;
  for (std::size_t d = 0; d < static_cast<std::size_t>(c.dirs()); ++d) {
    total += g * 2 * kS * kB * kH * kI + (c.bias ? g * kS * e : 0);
    double step = g * (2 * e * kH + e);
    if (c.op == "LSTM")
      step += 3 * a(d, 0) + a(d, 1) + a(d, 2) + 4 * e + (c.peepholes ? 6 * e : 0) + 5 * clip;
    else if (c.op == "GRU")
      step += 2 * a(d, 0) + a(d, 1) + 4 * e + (c.lbr && c.bias ? e : 0) + 3 * clip;
    else
      step += a(d, 0) + clip;
    total += kS * step;
  }
  return total;
}

void check(const Case& c) {
  SCOPED_TRACE(c.label);
  const Weights wt(c);
  const ModelBuilder m = model(c, wt);
  // Wb + Rb is summed at import into one f32 weight: its rounding (about 1e-8 here) bounds the
  // difference.
  constexpr double kTol = 1e-7;
  for (int p : {1, 2, 3, 4}) {
    const auto r = import_and_eval(m, p);
    Dense h0, c0;
    if (c.initial) h0 = r.tensor("h0");
    if (c.initial && c.op == "LSTM") c0 = r.tensor("c0");
    const Outputs want = reference(c, wt, r.tensor("x"), c.initial ? &h0 : nullptr,
                                   c.initial && c.op == "LSTM" ? &c0 : nullptr);
    EXPECT_LT(max_abs_diff(r.tensor("y"), laid_out(c, want.y)), kTol) << "P=" << p;
    EXPECT_LT(max_abs_diff(r.tensor("yh"), laid_out(c, want.yh)), kTol) << "P=" << p;
    if (c.op == "LSTM") {
      EXPECT_LT(max_abs_diff(r.tensor("yc"), laid_out(c, want.yc)), kTol) << "P=" << p;
    }
    EXPECT_DOUBLE_EQ(r.res.report.total_flops, flops(c)) << "P=" << p;
    EXPECT_DOUBLE_EQ(r.res.report.einsum_flops,
                     c.dirs() * c.gates() * 2.0 * kS * kB * kH * (kI + kH))
        << "P=" << p;
  }
}

TEST(RecurrentImport, LstmMatchesTheOnnxEquations) {
  check({"forward, bias, initial states, peepholes, clip",
         "LSTM",
         "forward",
         false,
         true,
         true,
         true,
         false,
         0.7f,
         {}});
  check({"bidirectional, batch first, no bias, zero states",
         "LSTM",
         "bidirectional",
         true,
         false,
         false,
         false,
         false,
         std::nullopt,
         {}});
  check({"reverse, hard sigmoid, leaky relu, relu",
         "LSTM",
         "reverse",
         false,
         true,
         true,
         false,
         false,
         std::nullopt,
         {{"HardSigmoid", 0.3, 0.4}, {"LeakyRelu", 0.2}, {"Relu"}}});
}

TEST(RecurrentImport, GruMatchesTheOnnxEquations) {
  check({"reset before the product, initial state, clip",
         "GRU",
         "forward",
         false,
         true,
         true,
         false,
         false,
         0.9f,
         {}});
  check({"linear before reset, bidirectional, batch first",
         "GRU",
         "bidirectional",
         true,
         true,
         true,
         false,
         true,
         std::nullopt,
         {}});
  check({"linear before reset without a bias, reverse",
         "GRU",
         "reverse",
         false,
         false,
         false,
         false,
         true,
         std::nullopt,
         {}});
}

TEST(RecurrentImport, RnnMatchesTheOnnxEquations) {
  check(
      {"tanh, initial state", "RNN", "forward", false, true, true, false, false, std::nullopt, {}});
  check({"relu and leaky relu, bidirectional, clip",
         "RNN",
         "bidirectional",
         true,
         true,
         false,
         false,
         false,
         1.5f,
         {{"Relu"}, {"LeakyRelu", 0.1}}});
}

// Gives the model's node the constant sequence_lens `lens` (int32, as ONNX requires).
void lengths(ModelBuilder& m, const std::vector<std::int32_t>& lens) {
  auto* t = m.proto().mutable_graph()->add_initializer();
  t->set_name("lens");
  t->set_data_type(onnx::TensorProto::INT32);
  t->add_dims(static_cast<std::int64_t>(lens.size()));
  for (auto v : lens) t->add_int32_data(v);
  m.proto().mutable_graph()->mutable_node(0)->set_input(4, "lens");
}

TEST(RecurrentImport, UnsupportedUsesAreOneLineErrors) {
  Case base;
  base.op = "LSTM";
  const Weights wt(base);
  const auto error = [&](auto edit) {
    ModelBuilder m = model(base, wt);
    edit(m);
    return import_error(m);
  };
  const auto node = [](ModelBuilder& m) { return m.proto().mutable_graph()->mutable_node(0); };
  EXPECT_EQ(error([&](ModelBuilder& m) {
              auto* a = node(m)->add_attribute();
              a->set_name("input_forget");
              a->set_type(onnx::AttributeProto::INT);
              a->set_i(1);
            }),
            "bad.onnx: LSTM with input_forget=1 is not supported (node LSTM_1 (LSTM))");
  EXPECT_EQ(error([&](ModelBuilder& m) {
              m.attr("activations", std::vector<std::string>{"Sigmoid", "Softsign", "Tanh"});
            }),
            "bad.onnx: recurrent activation 'Softsign' is not supported (Sigmoid, Tanh, Relu, "
            "LeakyRelu, Elu, Softplus, HardSigmoid are) (node LSTM_1 (LSTM))");
  EXPECT_EQ(
      error([&](ModelBuilder& m) { m.attr("activations", std::vector<std::string>{"Sigmoid"}); }),
      "bad.onnx: LSTM: 1 activations given, 3 expected (node LSTM_1 (LSTM))");
  EXPECT_EQ(error([&](ModelBuilder& m) {
              for (auto& a : *node(m)->mutable_attribute())
                if (a.name() == "direction") a.set_s("sideways");
            }),
            "bad.onnx: LSTM: unknown direction 'sideways' (node LSTM_1 (LSTM))");
  EXPECT_EQ(error([&](ModelBuilder& m) {
              lengths(m, {kS, kS - 1, kS});
            }),
            "bad.onnx: LSTM: sequence_lens shorter than the sequence (packed sequences) or "
            "computed is not supported (node LSTM_1 (LSTM))");
  EXPECT_EQ(error([&](ModelBuilder& m) {  // a computed weight
              m.input("w2", {1, 4 * kH, kI});
              node(m)->set_input(1, "w2");
            }),
            "bad.onnx: W (the input weights) must be a constant (node LSTM_1 (LSTM))");
  EXPECT_EQ(error([&](ModelBuilder& m) {
              for (auto& a : *node(m)->mutable_attribute())
                if (a.name() == "hidden_size") a.set_i(kH + 1);
            }),
            "bad.onnx: LSTM: W has shape 1x16x5, expected 1x20x5 (node LSTM_1 (LSTM))");
  // Full-length sequence_lens are accepted.
  ModelBuilder full = model(base, wt);
  lengths(full, {kS, kS, kS});
  EXPECT_EQ(import_error(full), "no error");
}

}  // namespace
}  // namespace doppler
