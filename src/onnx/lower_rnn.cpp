// Lowering of the ONNX recurrent ops, LSTM, GRU and RNN, unrolled over the sequence: the input
// projection is one einsum with a block per step (plus its bias), then every time step is the
// state's recurrent einsum and either fused kernels (lstm_cell and lstm_hidden, gru_cell: the
// default activations, no clip or peepholes, a GRU's linear_before_reset) or, per gate, an add,
// clip and activation kernels and the cell update. Steps of different layers and directions can
// overlap on different devices (docs/onnx.md gives the FLOPs, the same either way).
#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "lowerer.hpp"

namespace doppler::onnx_import {

namespace {

/// The kernel of an ONNX activation name and its attributes.
struct Activation {
  std::string kernel;
  workloads::Attrs attrs;
};

enum class Cell { rnn, gru, lstm };

/// The kernel of the activation `name`, its alpha and beta taken from activation_alpha and
/// activation_beta at `ai` and `bi` (consumed in order by the activations that take them).
Activation activation(const std::string& name, const std::vector<float>& alpha,
                      const std::vector<float>& beta, std::size_t& ai, std::size_t& bi) {
  const auto take = [](const std::vector<float>& v, std::size_t& i, double fallback) {
    return i < v.size() ? static_cast<double>(v[i++]) : fallback;
  };
  if (name == "Sigmoid") return {"sigmoid", {}};
  if (name == "Tanh") return {"tanh", {}};
  if (name == "Relu") return {"relu", {}};
  if (name == "Softplus") return {"softplus", {}};
  if (name == "LeakyRelu") return {"leaky_relu", {{"alpha", take(alpha, ai, 0.01)}}};
  if (name == "Elu") return {"elu", {{"alpha", take(alpha, ai, 1.0)}}};
  if (name == "HardSigmoid") {
    const double a = take(alpha, ai, 0.2);
    return {"hardsigmoid", {{"alpha", a}, {"beta", take(beta, bi, 0.5)}}};
  }
  throw std::runtime_error("recurrent activation '" + name +
                           "' is not supported (Sigmoid, Tanh, Relu, LeakyRelu, Elu, Softplus, "
                           "HardSigmoid are)");
}

}  // namespace

/// One recurrent node being lowered (a friend of Lowerer). Every per-step tensor has shape
/// [1, batch, hidden] and is one block (a step's ops are small: cutting them multiplies kernel
/// launches on the critical path); gate g of direction d reads W[d] rows g*hidden.. as a weight
/// of its own.
class RnnLowering {
public:
  RnnLowering(Lowerer& l, const onnx::NodeProto& n) : l_(l), n_(n) { parse(); }

  /// Defines the node's outputs Y, Y_h (and Y_c for an LSTM) that it names.
  void run() {
    std::vector<Ref> ys, hs, cs;
    for (int d = 0; d < dirs_; ++d) {
      const auto seq = direction(d);
      if (named(0))
        ys.push_back(&l_.reshaped(name(d, "y"), *concat(name(d, "y.seq"), seq.h, 0),
                                  {steps_, 1, batch_, hidden_}));
      hs.push_back(seq.h[static_cast<std::size_t>(reverse(d) ? 0 : steps_ - 1)]);
      cs.push_back(seq.c_last);
    }
    if (named(0)) define(0, concat(l_.out(n_, ".y"), ys, 1), {2, 0, 1, 3});
    if (named(1)) define(1, concat(l_.out(n_, ".h"), hs, 0), {1, 0, 2});
    if (named(2) && cell_ == Cell::lstm) define(2, concat(l_.out(n_, ".c"), cs, 0), {1, 0, 2});
  }

private:
  using Ref = const BlockedTensor*;
  struct Sequence {
    std::vector<Ref> h;    ///< the hidden state after each time step, in sequence order
    Ref c_last = nullptr;  ///< the LSTM cell state after the last step
  };

  void parse() {
    const std::string& op = n_.op_type();
    cell_ = op == "LSTM" ? Cell::lstm : op == "GRU" ? Cell::gru : Cell::rnn;
    gates_ = cell_ == Cell::lstm ? 4 : cell_ == Cell::gru ? 3 : 1;
    const auto* dir = find_attr(n_, "direction");
    const std::string direction = dir ? dir->s() : "forward";
    if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
      throw std::runtime_error(op + ": unknown direction '" + direction + "'");
    dirs_ = direction == "bidirectional" ? 2 : 1;
    reverse_only_ = direction == "reverse";
    batch_first_ = attr_int(n_, "layout", 0) != 0;
    lbr_ = attr_int(n_, "linear_before_reset", 0) != 0;
    if (attr_int(n_, "input_forget", 0) != 0)
      throw std::runtime_error("LSTM with input_forget=1 is not supported");
    if (const auto* c = find_attr(n_, "clip")) clip_ = c->f();
    if (clip_ && !(*clip_ > 0)) throw std::runtime_error(op + ": clip must be positive");
    parse_shapes();
    parse_activations();
    check_sequence_lens();
  }

  void parse_shapes() {
    const std::string& op = n_.op_type();
    const Shape x = l_.in(n_, 0).shape;
    if (x.size() != 3) throw std::runtime_error(op + ": X must have rank 3");
    steps_ = batch_first_ ? x[1] : x[0];
    batch_ = batch_first_ ? x[0] : x[1];
    inputs_ = x[2];
    const auto& w = l_.const_in(n_, 1, "W (the input weights)");
    const auto& r = l_.const_in(n_, 2, "R (the recurrent weights)");
    hidden_ = attr_int(n_, "hidden_size", r.shape.size() == 3 ? r.shape[2] : 0);
    const auto expect = [&](const Shape& got, const Shape& want, const char* what) {
      if (got != want)
        throw std::runtime_error(fmt::format("{}: {} has shape {}, expected {}", op, what,
                                             shape_text(got), shape_text(want)));
    };
    expect(w.shape, {dirs_, gates_ * hidden_, inputs_}, "W");
    expect(r.shape, {dirs_, gates_ * hidden_, hidden_}, "R");
    if (l_.has_in(n_, 3))
      expect(l_.const_in(n_, 3, "B (the biases)").shape, {dirs_, 2 * gates_ * hidden_}, "B");
    if (cell_ == Cell::lstm && l_.has_in(n_, 7))
      expect(l_.const_in(n_, 7, "P (the peepholes)").shape, {dirs_, 3 * hidden_}, "P");
    const Shape state =
        batch_first_ ? Shape{batch_, dirs_, hidden_} : Shape{dirs_, batch_, hidden_};
    if (l_.has_in(n_, 5)) expect(l_.in(n_, 5).shape, state, "initial_h");
    if (cell_ == Cell::lstm && l_.has_in(n_, 6)) expect(l_.in(n_, 6).shape, state, "initial_c");
    if (steps_ < 1 || batch_ < 1 || hidden_ < 1)
      throw std::runtime_error(op + ": empty sequence, batch or hidden state");
  }

  void parse_activations() {
    std::vector<std::string> names;
    if (const auto* a = find_attr(n_, "activations"))
      for (const auto& s : a->strings()) names.push_back(s);
    const std::vector<std::string> defaults =
        cell_ == Cell::lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
        : cell_ == Cell::gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                             : std::vector<std::string>{"Tanh"};
    const auto per_dir = static_cast<int>(defaults.size());
    if (names.empty())
      for (int d = 0; d < dirs_; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
    if (static_cast<int>(names.size()) != per_dir * dirs_)
      throw std::runtime_error(fmt::format("{}: {} activations given, {} expected", n_.op_type(),
                                           names.size(), per_dir * dirs_));
    std::vector<float> alpha, beta;
    if (const auto* a = find_attr(n_, "activation_alpha"))
      alpha.assign(a->floats().begin(), a->floats().end());
    if (const auto* b = find_attr(n_, "activation_beta"))
      beta.assign(b->floats().begin(), b->floats().end());
    std::size_t ai = 0, bi = 0;
    for (const auto& s : names) acts_.push_back(activation(s, alpha, beta, ai, bi));
    per_dir_acts_ = per_dir;
  }

  // sequence_lens (packed sequences) is accepted only when every length is the whole sequence.
  void check_sequence_lens() const {
    if (!l_.has_in(n_, 4)) return;
    const auto& v = l_.in(n_, 4);
    bool full = v.constant.has_value();
    if (full)
      for (double len : v.constant->data) full = full && len == static_cast<double>(steps_);
    if (!full)
      throw std::runtime_error(n_.op_type() +
                               ": sequence_lens shorter than the sequence (packed sequences) or "
                               "computed is not supported");
  }

  bool reverse(int d) const { return reverse_only_ || d == 1; }

  std::string name(int d, const std::string& what) const {
    return l_.out(n_, fmt::format(".d{}.{}", d, what));
  }

  // Rows [g * hidden, (g + count) * hidden) of input `i`'s direction d (W or R: gate g, or
  // `count` gates side by side), a weight of its own.
  Ref gate_weight(std::size_t i, int d, int g, const char* what, int count = 1) {
    const auto& t = *l_.in(n_, i).constant;
    const std::int64_t cols = t.shape[2], rows = count * hidden_;
    HostTensor s{{rows, cols}, {}, false};
    const auto from = ((d * gates_ + g) * hidden_) * cols;
    s.data.assign(t.data.begin() + from, t.data.begin() + from + rows * cols);
    return &l_.load(name(d, count == 1 ? fmt::format("{}{}", what, g) : what), s);
  }

  // Elements [k * hidden, (k + 1) * hidden) of direction d's biases (k < 2 * gates: Wb then Rb),
  // plus those of `k2` when it is given.
  HostTensor bias(int d, int k, int k2 = -1) const {
    const auto& b = *l_.in(n_, 3).constant;
    HostTensor s{{hidden_}, std::vector<double>(static_cast<std::size_t>(hidden_), 0.0), false};
    for (std::int64_t j = 0; j < hidden_; ++j) {
      const auto at = [&](int kk) {
        return b.data[static_cast<std::size_t>((d * 2 * gates_ + kk) * hidden_ + j)];
      };
      s.data[static_cast<std::size_t>(j)] = at(k) + (k2 >= 0 ? at(k2) : 0.0);
    }
    return s;
  }

  // The input projection of `count` gates from g, side by side, for the whole sequence: [steps,
  // batch, count * hidden], with each gate's bias Wb + Rb (only Wb for a GRU's hidden gate with
  // linear_before_reset, whose Rb is added inside). One block per step: step t's projection
  // waits only for row t of X, so a layer's steps can start while the layer below is still
  // running (a wavefront across layers and devices).
  Ref projection(int d, int g, int count = 1) {
    const std::string x_labels = batch_first_ ? "bsi" : "sbi";
    const std::string id = count == 1 ? std::to_string(g) : "";
    const workloads::LabelCuts lc{{'s', workloads::even_grid({steps_}, {steps_})[0]}};
    Ref p = &l_.p_.einsum(name(d, "x" + id), x_labels + ",hi->sbh",
                          {&l_.blocked(n_, 0), gate_weight(1, d, g, "w", count)}, lc);
    if (!l_.has_in(n_, 3)) return p;
    HostTensor b{{count * hidden_}, {}, false};
    for (int k = g; k < g + count; ++k) {
      const bool split_bias = cell_ == Cell::gru && lbr_ && k == 2;
      const auto part = bias(d, k, split_bias ? -1 : gates_ + k);
      b.data.insert(b.data.end(), part.data.begin(), part.data.end());
    }
    return &l_.map(name(d, "x" + id + "b"), "add", {p, &l_.load(name(d, "b" + id), b)});
  }

  // The initial state `i` (5: initial_h, 6: initial_c) of direction d as [1, batch, hidden];
  // zeros when the model gives none.
  Ref initial(std::size_t i, int d) {
    const Shape one{1, batch_, hidden_};
    const std::string nm = name(d, i == 5 ? "h0" : "c0");
    if (!l_.has_in(n_, i))
      return &l_.p_.fill(nm, one, workloads::even_grid(one, {1, 1, 1}), {{"value", 0.0}});
    const auto& s = l_.blocked(n_, i);
    if (!batch_first_) return &l_.select(nm, s, {d, 0, 0}, one);
    return &l_.reshaped(nm, l_.select(nm + ".sel", s, {0, d, 0}, {batch_, 1, hidden_}), one);
  }

  // The clip (when the model sets one) and activation `k` of direction d applied to `x`.
  Ref activate(int d, int k, Ref x, const std::string& nm) {
    if (clip_) x = &l_.map(nm + ".clip", "clip", {x}, {{"min", -*clip_}, {"max", *clip_}});
    const Activation& a = acts_[static_cast<std::size_t>(d * per_dir_acts_ + k)];
    return &l_.map(nm, a.kernel, {x}, a.attrs);
  }

  Ref recurrent(int g, Ref h, const std::string& nm) {
    return &l_.p_.einsum(nm, "sbk,hk->sbh", {h, r_[static_cast<std::size_t>(g)]}, {});
  }

  // Gate g's pre-activation at step t: its input projection's row t plus h R_g^T.
  Ref gate_input(int g, std::int64_t t, Ref h, const std::string& step) {
    const std::string nm = fmt::format("{}.g{}", step, g);
    Ref x =
        &l_.select(nm + ".x", *x_[static_cast<std::size_t>(g)], {t, 0, 0}, {1, batch_, hidden_});
    return &l_.map(nm, "add", {x, recurrent(g, h, nm + ".r")});
  }

  Ref mul(const std::string& nm, Ref a, Ref b) { return &l_.map(nm, "mul", {a, b}); }
  Ref add(const std::string& nm, Ref a, Ref b) { return &l_.map(nm, "add", {a, b}); }

  // LSTM (gates i, o, f, c): c' = f c + i g(c~), h' = o h(c'); peepholes add P_i c and P_f c to
  // i and f, P_o c' to o.
  std::pair<Ref, Ref> lstm_step(int d, std::int64_t t, Ref h, Ref c, const std::string& s) {
    auto pre = [&](int g) { return gate_input(g, t, h, s); };
    Ref pi = pre(0), pf = pre(2);
    if (!peep_.empty()) {
      pi = add(s + ".pi", pi, mul(s + ".pic", peep_[0], c));
      pf = add(s + ".pf", pf, mul(s + ".pfc", peep_[2], c));
    }
    Ref i = activate(d, 0, pi, s + ".i"), f = activate(d, 0, pf, s + ".f");
    Ref g = activate(d, 1, pre(3), s + ".cand");
    Ref c2 = add(s + ".c", mul(s + ".fc", f, c), mul(s + ".ig", i, g));
    Ref po = pre(1);
    if (!peep_.empty()) po = add(s + ".po", po, mul(s + ".poc", peep_[1], c2));
    Ref o = activate(d, 0, po, s + ".o");
    return {mul(s + ".h", o, activate(d, 2, c2, s + ".hc")), c2};
  }

  // GRU (gates z, r, h): h~ = g(x_h + (r h) R_h^T + Rb_h), or with linear_before_reset
  // g(x_h + r (h R_h^T + Rb_h)); h' = (1 - z) h~ + z h, computed as h~ + z (h - h~).
  Ref gru_step(int d, std::int64_t t, Ref h, const std::string& s) {
    Ref z = activate(d, 0, gate_input(0, t, h, s), s + ".z");
    Ref r = activate(d, 0, gate_input(1, t, h, s), s + ".r");
    Ref hh;
    if (lbr_) {
      hh = recurrent(2, h, s + ".g2.r");
      if (rbh_) hh = add(s + ".g2.rb", hh, rbh_);
      hh = mul(s + ".g2.reset", r, hh);
    } else {
      hh = recurrent(2, mul(s + ".g2.reset", r, h), s + ".g2.r");
    }
    Ref x = &l_.select(s + ".g2.x", *x_[2], {t, 0, 0}, {1, batch_, hidden_});
    Ref cand = activate(d, 1, add(s + ".g2", x, hh), s + ".cand");
    return add(s + ".h", cand, mul(s + ".zd", z, &l_.map(s + ".d", "sub", {h, cand})));
  }

  // Whether a step runs as fused kernels (docs/exec.md: lstm_cell and lstm_hidden, gru_cell):
  // the default activations, no clip, no peepholes, a GRU's linear_before_reset.
  bool fused() const {
    if (clip_ || cell_ == Cell::rnn || (cell_ == Cell::gru && !lbr_)) return false;
    if (cell_ == Cell::lstm && l_.has_in(n_, 7)) return false;
    for (std::size_t k = 0; k < acts_.size(); ++k) {
      const auto j = k % static_cast<std::size_t>(per_dir_acts_);
      if (acts_[k].kernel != (j == 0 ? "sigmoid" : "tanh")) return false;
    }
    return true;
  }

  // A fused kernel's output [1, batch, hidden], one block.
  Ref fused_cell(const std::string& nm, const char* op, const std::vector<Ref>& operands,
                 double flops_per_element) {
    const Shape one{1, batch_, hidden_};
    return &l_.p_.cell(nm, op, operands, one, workloads::even_grid(one, {1, 1, 1}),
                       flops_per_element);
  }

  // One direction as fused steps: the x row and h R^T for every gate at once, then lstm_cell and
  // lstm_hidden, or gru_cell.
  Sequence fused_direction(int d) {
    Ref xw = projection(d, 0, gates_), rw = gate_weight(2, d, 0, "r", gates_);
    Ref rbn = nullptr;
    if (cell_ == Cell::gru && l_.has_in(n_, 3)) {
      HostTensor b = bias(d, gates_ + 2);
      b.shape = {1, 1, hidden_};
      rbn = &l_.load(name(d, "rb2"), b);
    }
    const std::int64_t width = gates_ * hidden_;
    return unroll(d, [&](std::int64_t t, const std::string& s, Ref h, Ref c) {
      Ref x = &l_.select(s + ".x", *xw, {t, 0, 0}, {1, batch_, width});
      Ref hr = &l_.p_.einsum(s + ".r", "sbk,gk->sbg", {h, rw}, {});
      if (cell_ == Cell::lstm) {
        Ref pre = add(s + ".gates", x, hr);
        Ref c2 = fused_cell(s + ".c", "lstm_cell", {pre, c}, 12);
        return std::pair<Ref, Ref>{fused_cell(s + ".h", "lstm_hidden", {pre, c2}, 6), c2};
      }
      std::vector<Ref> in = {x, hr, h};
      if (rbn) in.push_back(rbn);
      return std::pair<Ref, Ref>{fused_cell(s + ".h", "gru_cell", in, rbn ? 17 : 16), c};
    });
  }

  // The steps of direction d in its order (backwards for a reverse one): step(t, its name, h, c)
  // gives the state (h, c) after step t from the state before it.
  template <class Step>
  Sequence unroll(int d, Step step) {
    Sequence seq;
    seq.h.assign(static_cast<std::size_t>(steps_), nullptr);
    Ref h = initial(5, d);
    Ref c = cell_ == Cell::lstm ? initial(6, d) : nullptr;
    for (std::int64_t k = 0; k < steps_; ++k) {
      const std::int64_t t = reverse(d) ? steps_ - 1 - k : k;
      std::tie(h, c) = step(t, name(d, fmt::format("t{}", t)), h, c);
      seq.h[static_cast<std::size_t>(t)] = h;
    }
    seq.c_last = c;
    return seq;
  }

  // One direction over the whole sequence (backwards for a reverse one).
  Sequence direction(int d) {
    if (fused()) return fused_direction(d);
    x_.clear();
    r_.clear();
    peep_.clear();
    rbh_ = nullptr;
    for (int g = 0; g < gates_; ++g) {
      x_.push_back(projection(d, g));
      r_.push_back(gate_weight(2, d, g, "r"));
    }
    if (cell_ == Cell::lstm && l_.has_in(n_, 7))
      for (int k = 0; k < 3; ++k)
        peep_.push_back(&l_.load(name(d, fmt::format("p{}", k)), peephole(d, k)));
    if (cell_ == Cell::gru && lbr_ && l_.has_in(n_, 3))
      rbh_ = &l_.load(name(d, "rb2"), bias(d, gates_ + 2));
    return unroll(d, [&](std::int64_t t, const std::string& s, Ref h, Ref c) {
      if (cell_ == Cell::lstm) return lstm_step(d, t, h, c, s);
      if (cell_ == Cell::gru) return std::pair<Ref, Ref>{gru_step(d, t, h, s), c};
      return std::pair<Ref, Ref>{activate(d, 0, gate_input(0, t, h, s), s + ".h"), c};
    });
  }

  HostTensor peephole(int d, int k) const {
    const auto& p = *l_.in(n_, 7).constant;
    HostTensor s{{hidden_}, {}, false};
    const auto from = p.data.begin() + (d * 3 + k) * hidden_;
    s.data.assign(from, from + hidden_);
    return s;
  }

  Ref concat(const std::string& nm, const std::vector<Ref>& parts, int axis) {
    return parts.size() == 1 ? parts[0] : &l_.p_.concat(nm, parts, axis);
  }

  bool named(int k) const { return k < n_.output_size() && !n_.output(k).empty(); }

  // Defines output k from its [.., batch, hidden] sequence-first form; a batch-first layout
  // permutes it by `perm`.
  void define(int k, Ref t, const std::vector<int>& perm) {
    const std::string& nm = n_.output(k);
    l_.define(nm, batch_first_ ? l_.p_.transpose(nm, *t, perm) : *t);
  }

  Lowerer& l_;
  const onnx::NodeProto& n_;
  Cell cell_ = Cell::lstm;
  int gates_ = 4, dirs_ = 1, per_dir_acts_ = 1;
  bool reverse_only_ = false, batch_first_ = false, lbr_ = false;
  std::optional<double> clip_;
  std::int64_t steps_ = 0, batch_ = 0, inputs_ = 0, hidden_ = 0;
  std::vector<Activation> acts_;
  std::vector<Ref> x_, r_, peep_;  ///< per gate: input projections, recurrent weights; peepholes
  Ref rbh_ = nullptr;              ///< a GRU's Rb_h with linear_before_reset
};

void Lowerer::recurrent(const onnx::NodeProto& n) {
  RnnLowering(*this, n).run();
}

}  // namespace doppler::onnx_import
