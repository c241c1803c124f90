// Compiling a graph's exec descriptions (docs/exec.md) into kernel plans.
#include "plan.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include "doppler/util/error.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler::engine_detail {

dev::Window device_window(const WindowPlan& w, std::int64_t sn, std::int64_t sc, std::int64_t sy) {
  dev::Window g;
  g.nb = w.nb, g.cw = w.cw, g.rows = w.rows, g.in_h = w.in_h, g.in_w = w.in_w;
  g.row0 = w.row0, g.c0 = w.c0, g.cb = w.cb, g.oh = w.oh, g.ow = w.ow, g.o0 = w.o0, g.y0 = w.y0;
  g.kh = w.kh, g.kw = w.kw, g.sh = w.sh, g.sw = w.sw, g.ph = w.ph, g.pw = w.pw;
  g.dh = w.dh, g.dw = w.dw, g.icg = w.icg, g.out_per_group = w.out_per_group;
  g.include_pad = w.include_pad, g.sn = sn, g.sc = sc, g.sy = sy;
  return g;
}

dev::Shape device_shape(const Dims& d) {
  dev::Shape s;
  s.rank = static_cast<int>(d.size());
  std::copy(d.begin(), d.end(), s.ext);
  s.narrow = numel_of(d) < (std::int64_t{1} << 31);
  return s;
}

namespace {

[[noreturn]] void bad(const Graph& g, NodeId v, const std::string& why) {
  throw InputError("node " + std::to_string(v) + " (" + g.label(v) + "): " + why);
}

const std::map<std::string, Fn>& fn_names() {
  static const std::map<std::string, Fn> m = {{"relu", Fn::relu},
                                              {"exp", Fn::exp},
                                              {"silu", Fn::silu},
                                              {"scale", Fn::scale},
                                              {"rsqrt", Fn::rsqrt},
                                              {"sqrt", Fn::sqrt},
                                              {"sigmoid", Fn::sigmoid},
                                              {"tanh", Fn::tanh},
                                              {"erf", Fn::erf},
                                              {"gelu", Fn::gelu},
                                              {"neg", Fn::neg},
                                              {"pow", Fn::pow},
                                              {"identity", Fn::identity},
                                              {"clip", Fn::clip},
                                              {"hardsigmoid", Fn::hardsigmoid},
                                              {"hardswish", Fn::hardswish},
                                              {"leaky_relu", Fn::leaky_relu},
                                              {"elu", Fn::elu},
                                              {"softplus", Fn::softplus},
                                              {"abs", Fn::abs},
                                              {"log", Fn::log},
                                              {"add", Fn::add},
                                              {"sub", Fn::sub},
                                              {"mul", Fn::mul},
                                              {"div", Fn::div},
                                              {"relu_grad", Fn::relu_grad},
                                              {"silu_grad", Fn::silu_grad},
                                              {"rsqrt_grad", Fn::rsqrt_grad},
                                              {"sumsq_grad", Fn::sumsq_grad},
                                              {"less", Fn::less},
                                              {"greater", Fn::greater},
                                              {"equal", Fn::equal},
                                              {"less_equal", Fn::less_equal},
                                              {"greater_equal", Fn::greater_equal},
                                              {"and", Fn::logical_and},
                                              {"or", Fn::logical_or},
                                              {"xor", Fn::logical_xor},
                                              {"not", Fn::logical_not},
                                              {"reciprocal", Fn::reciprocal},
                                              {"floor", Fn::floor},
                                              {"ceil", Fn::ceil},
                                              {"round", Fn::round},
                                              {"sign", Fn::sign},
                                              {"sin", Fn::sin},
                                              {"cos", Fn::cos},
                                              {"maximum", Fn::maximum},
                                              {"minimum", Fn::minimum},
                                              {"power", Fn::power},
                                              {"prelu", Fn::prelu},
                                              {"tan", Fn::tan},
                                              {"asin", Fn::asin},
                                              {"acos", Fn::acos},
                                              {"atan", Fn::atan},
                                              {"sinh", Fn::sinh},
                                              {"cosh", Fn::cosh},
                                              {"selu", Fn::selu},
                                              {"celu", Fn::celu},
                                              {"isnan", Fn::isnan},
                                              {"isinf", Fn::isinf},
                                              {"mod", Fn::mod},
                                              {"fmod", Fn::fmod},
                                              {"sum", Fn::sum},
                                              {"max", Fn::max},
                                              {"reduce_sum", Fn::sum},
                                              {"reduce_max", Fn::max},
                                              {"reduce_sumsq", Fn::sumsq},
                                              {"reduce_argmax", Fn::argmax}};
  return m;
}

// The operand `in` of node v as a view of its producer's block.
View make_view(const Graph& g, NodeId v, const ExecInput& in) {
  if (in.src < 0 || in.src >= g.num_nodes() || !g.node(in.src).exec)
    bad(g, v, "operand " + std::to_string(in.src) + " has no exec description");
  if (g.find_edge(in.src, v) < 0)
    bad(g, v, "operand " + std::to_string(in.src) + " is no predecessor");
  const Dims& ps = g.node(in.src).exec->shape;
  View view;
  view.src = in.src;
  view.strides = contiguous_strides(ps);
  if (in.offset.empty() && in.shape.empty()) {
    view.shape = ps;
    return view;
  }
  if (in.offset.size() != ps.size() || in.shape.size() != ps.size())
    bad(g, v, "region rank differs from the producer's");
  for (std::size_t d = 0; d < ps.size(); ++d) {
    if (in.offset[d] < 0 || in.shape[d] < 1 || in.offset[d] + in.shape[d] > ps[d])
      bad(g, v, "region outside the producer's block");
    view.offset += in.offset[d] * view.strides[d];
  }
  view.shape = in.shape;
  return view;
}

// constant (input, fill): the block's values, row by row along its last dimension; an input's
// hash chain over a row's leading coordinates is computed once per row.
void plan_constant(const ExecDesc& e, KernelPlan& k) {
  k.op = KernelOp::constant;
  k.values.resize(static_cast<std::size_t>(k.numel));
  const std::size_t n = e.shape.size();
  const bool input = e.op == "input";
  const auto seed = static_cast<std::uint64_t>(e.attr("seed", 0));
  const double offset = e.attr("offset", 0), scale = e.attr("scale", 1), value = e.attr("value", 0);
  const bool causal = e.attr("causal", 0) != 0, lower = e.attr("lower", 0) != 0;
  const double diagonal = e.attr("diagonal", 1);
  // causal: value on the kept side of diagonal `diagonal` of the last two coordinates.
  const auto kept = [&](std::int64_t row, std::int64_t col) {
    const auto off = static_cast<double>(col - row);
    return lower ? off <= diagonal : off >= diagonal;
  };
  if (n == 0) {  // a scalar: one row of one element, no coordinates
    const double x =
        input ? offset + scale * workloads::input_unit_value(seed, {}) : (causal ? 0.0 : value);
    k.values.assign(k.values.size(), static_cast<float>(x));
    return;
  }
  const std::int64_t row = e.shape[n - 1], first = e.origin[n - 1];
  Dims idx(n - 1, 0), lead(n - 1, 0);
  for (std::int64_t r = 0; row > 0 && r < k.numel; r += row) {
    for (std::size_t d = 0; d + 1 < n; ++d) lead[d] = e.origin[d] + idx[d];
    float* out = k.values.data() + r;
    if (input) {
      const std::uint64_t h = workloads::input_row_hash(seed, lead);
      for (std::int64_t j = 0; j < row; ++j)
        out[j] = static_cast<float>(offset + scale * workloads::input_unit_at(h, first + j));
    } else {
      for (std::int64_t j = 0; j < row; ++j)
        out[j] =
            static_cast<float>(!causal || (n >= 2 && kept(lead[n - 2], first + j)) ? value : 0.0);
    }
    for (std::size_t d = n - 1; d-- > 0;) {
      if (++idx[d] < e.shape[d]) break;
      idx[d] = 0;
    }
  }
}

// load: the block's values cut out of constant `tensor` of the graph at the block's origin.
void plan_load(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  const double t = e.attr("tensor", -1);
  const auto& constants = g.constants();
  if (!(t >= 0) || t != std::floor(t) || t >= static_cast<double>(constants.size()))
    bad(g, v,
        "load: attribute 'tensor' must index the graph's " + std::to_string(constants.size()) +
            " constant tensor(s)");
  const ConstantTensor& c = constants[static_cast<std::size_t>(t)];
  const std::size_t n = e.shape.size();
  const std::string which =
      "load: constant " + std::to_string(static_cast<std::size_t>(t)) + " ('" + c.name + "')";
  if (c.shape.size() != n)
    bad(g, v,
        which + " has rank " + std::to_string(c.shape.size()) + ", the block " + std::to_string(n));
  for (std::size_t d = 0; d < n; ++d)
    if (e.origin[d] < 0 || e.origin[d] > c.shape[d] - e.shape[d])
      bad(g, v, which + ": block outside the constant along dimension " + std::to_string(d));
  k.op = KernelOp::constant;
  k.values.resize(static_cast<std::size_t>(k.numel));
  const Dims cs = contiguous_strides(c.shape), os = contiguous_strides(e.shape);
  std::int64_t first = 0;
  for (std::size_t d = 0; d < n; ++d) first += e.origin[d] * cs[d];
  copy_strided(c.values.data() + first, cs, k.values.data(), os, e.shape);
}

// transpose: `spec` ("abc->cab") as the operand dimension of each output dimension.
std::vector<std::size_t> transpose_perm(const Graph& g, NodeId v, const std::string& spec,
                                        std::size_t in_rank, std::size_t out_rank) {
  const auto arrow = spec.find("->");
  if (arrow == std::string::npos) bad(g, v, "transpose spec '" + spec + "' has no '->'");
  const std::string in = spec.substr(0, arrow), out = spec.substr(arrow + 2);
  if (in.size() != in_rank || out.size() != out_rank || in.size() != out.size())
    bad(g, v, "transpose spec '" + spec + "' does not match the operand and output ranks");
  std::vector<std::size_t> perm;
  for (char c : out) {
    const auto p = in.find(c);
    if (c < 'a' || c > 'z' || p == std::string::npos || out.find(c) != out.rfind(c) ||
        in.find(c) != in.rfind(c))
      bad(g, v, "transpose spec '" + spec + "' is not a permutation of lower-case labels");
    perm.push_back(p);
  }
  return perm;
}

// gather: the output is the indices' shape followed by a table row's (the table's dimensions
// after the first).
void plan_gather(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  if (k.in.size() != 2 || k.in[0].shape.empty())
    bad(g, v, "gather: expected a table of rank >= 1 and an index operand");
  Dims want = k.in[1].shape;
  want.insert(want.end(), k.in[0].shape.begin() + 1, k.in[0].shape.end());
  if (want != e.shape)
    bad(g, v, "gather: the output shape is not the indices' followed by a table row's");
  k.op = KernelOp::gather;
}

// gather_along: the output is the indices' shape, whose leading dimensions are the table's
// (an element of each last-axis table row per index).
void plan_gather_along(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  if (k.in.size() != 2 || k.in[0].shape.empty() || k.in[1].shape != e.shape ||
      k.in[0].shape.size() != e.shape.size() ||
      !std::equal(e.shape.begin(), e.shape.end() - 1, k.in[0].shape.begin()))
    bad(g, v,
        "gather_along: expected a table and indices of its leading extents, the output's "
        "shape");
  k.op = KernelOp::gather;
  k.p1 = 1;
}

// stride: every |step|-th element along `axis` of the operand's region, whose extent there is
// (out - 1) |step| + 1 (docs/exec.md); a negative step reads from the region's far end.
void plan_stride(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  const double axis = e.attr("axis", -1), step = e.attr("step", 0);
  const auto rank = static_cast<double>(e.shape.size());
  if (!(axis >= 0 && axis < rank && axis == std::floor(axis)) || step == 0 ||
      step != std::floor(step) || std::abs(step) > 0x1p31)
    bad(g, v, "stride: attribute axis must name a dimension and step be a nonzero integer");
  const auto ax = static_cast<std::size_t>(axis);
  const auto st = static_cast<std::int64_t>(step), mag = st < 0 ? -st : st;
  Dims want = e.shape;
  want[ax] = (want[ax] - 1) * mag + 1;
  if (k.in.size() != 1 || k.in[0].shape != want)
    bad(g, v, "stride: the operand's region is not the output's, (out - 1) |step| + 1 along axis");
  k.op = KernelOp::copy;
  k.copy_shape = e.shape;
  k.copy_dst = contiguous_strides(e.shape);
  k.copy_src = k.in[0].strides;
  k.copy_src[ax] *= st;
  if (st < 0) k.copy_start = (want[ax] - 1) * k.in[0].strides[ax];
}

void plan_rotary(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  const std::size_t n = e.shape.size();
  const double pa_attr = e.attr("pos_axis", -1);
  if (n == 0 || pa_attr < 0 || pa_attr >= static_cast<double>(n)) bad(g, v, "rotary: bad pos_axis");
  const auto pa = static_cast<std::size_t>(pa_attr);
  if (e.origin[n - 1] % 2 != 0 || e.shape[n - 1] % 2 != 0) bad(g, v, "rotary block splits a pair");
  if (k.in.size() != 1 || k.in[0].shape != e.shape) bad(g, v, "rotary operand shape");
  const double theta = e.attr("theta", 0), hd = e.attr("head_dim", 0);
  const double sign = e.attr("inverse", 0) != 0 ? -1 : 1;
  k.op = KernelOp::rotary;
  k.values.resize(static_cast<std::size_t>(k.numel));
  std::vector<double> freq(static_cast<std::size_t>(e.shape[n - 1] / 2));  // per pair of the row
  for (std::size_t j = 0; j < freq.size(); ++j)
    freq[j] = std::pow(theta, -2 * static_cast<double>(e.origin[n - 1] / 2 + j) / hd);
  Dims idx(n, 0);
  for (std::int64_t i = 0; i < k.numel; i += 2) {
    const double pos = static_cast<double>(e.origin[pa] + idx[pa]);
    const double ang = sign * pos * freq[static_cast<std::size_t>(idx[n - 1] / 2)];
    k.values[static_cast<std::size_t>(i)] = static_cast<float>(std::cos(ang));
    k.values[static_cast<std::size_t>(i + 1)] = static_cast<float>(std::sin(ang));
    for (int step = 0; step < 2; ++step)
      for (std::size_t d = n; d-- > 0;) {
        if (++idx[d] < e.shape[d]) break;
        idx[d] = 0;
      }
  }
}

// binary, where and expand kernels: each operand's strides over the output (0 where it
// broadcasts).
void plan_broadcast(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k, std::size_t n) {
  if (k.in.size() != n) bad(g, v, e.op + " needs " + std::to_string(n) + " operands");
  const std::size_t r = e.shape.size();
  for (const View& o : k.in) {
    if (o.shape.size() > r) bad(g, v, "operand rank above the output's");
    Dims s(r, 0);
    const std::size_t off = r - o.shape.size();
    for (std::size_t d = 0; d < o.shape.size(); ++d) {
      const auto od = e.shape[off + d];
      if (o.shape[d] != od && o.shape[d] != 1) bad(g, v, "operand does not broadcast");
      s[off + d] = o.shape[d] == 1 && od != 1 ? 0 : o.strides[d];
    }
    k.bcast.push_back(std::move(s));
  }
  k.op = n == 3 ? KernelOp::where : KernelOp::binary;
}

// clip and hardsigmoid: their two attributes in p0, p1 (leaky_relu and elu: alpha in p0); FLOPs as
// documented (the new unary kernels count their own, whatever the node charges).
void plan_unary_attrs(const ExecDesc& e, KernelPlan& k) {
  const auto n = static_cast<double>(k.numel);
  if (e.op == "clip") {
    k.p0 = static_cast<float>(e.attr("min", -3.4e38));
    k.p1 = static_cast<float>(e.attr("max", 3.4e38));
    k.flops = 2 * n;
  } else if (e.op == "hardsigmoid") {
    k.p0 = static_cast<float>(e.attr("alpha", 0.2));
    k.p1 = static_cast<float>(e.attr("beta", 0.5));
    k.flops = 4 * n;
  } else if (e.op == "hardswish") {
    k.flops = 5 * n;
  } else if (e.op == "leaky_relu" || e.op == "elu") {
    k.p0 = static_cast<float>(e.attr("alpha", e.op == "elu" ? 1.0 : 0.01));
    k.flops = (e.op == "elu" ? 4 : 2) * n;
  } else if (e.op == "selu" || e.op == "celu") {
    k.p0 = static_cast<float>(e.attr("alpha", e.op == "selu" ? 1.67326319217681884765625 : 1.0));
    k.p1 = static_cast<float>(e.attr("gamma", 1.05070102214813232421875));
  } else if (e.op == "isinf") {
    k.p0 = static_cast<float>(e.attr("positive", 1));
    k.p1 = static_cast<float>(e.attr("negative", 1));
  } else if (e.op == "softplus") {
    k.flops = 3 * n;
  } else if (e.op == "abs" || e.op == "log") {
    k.flops = n;
  }
}

// lstm_cell, lstm_hidden, gru_cell: each operand a contiguous block whose rows hold `width`
// units (the gates side by side), one row per output row of h units, or one row for them all.
void plan_cell(const Graph& g, NodeId v, const ExecDesc& e, KernelPlan& k) {
  const bool gru = e.op == "gru_cell";
  const std::size_t n = k.in.size();
  if (gru ? n != 3 && n != 4 : n != 2) bad(g, v, e.op + ": wrong number of operands");
  if (e.shape.empty() || e.shape.back() < 1) bad(g, v, e.op + ": no units");
  const std::int64_t h = e.shape.back(), rows = k.numel / h;
  const std::int64_t gates = gru ? 3 : 4;
  const std::int64_t width[] = {gates * h, gru ? gates * h : h, h, h};
  for (std::size_t i = 0; i < n; ++i) {
    const View& o = k.in[i];
    const std::int64_t count = numel_of(o.shape);
    const Dims want = contiguous_strides(o.shape);
    for (std::size_t d = 0; d < o.shape.size(); ++d)
      if (o.shape[d] > 1 && o.strides[d] != want[d])
        bad(g, v, e.op + ": operand " + std::to_string(i) + " is not contiguous");
    if (o.shape.empty() || o.shape.back() != width[i] ||
        (count != rows * width[i] && count != width[i]))
      bad(g, v,
          e.op + ": operand " + std::to_string(i) + " does not hold " + std::to_string(width[i]) +
              " units per output row");
    k.cell.rows[i] = count == width[i] ? 0 : width[i];
  }
  k.cell.cell = gru ? dev::Cell::gru : e.op == "lstm_cell" ? dev::Cell::lstm_c : dev::Cell::lstm_h;
  k.cell.h = h;
  k.cell.n = k.numel;
  k.op = KernelOp::cell;
}

void plan_real(const Graph& g, NodeId v, KernelPlan& k) {
  if (!g.node(v).exec) bad(g, v, "no exec description (use synthetic kernels)");
  const ExecDesc& e = *g.node(v).exec;
  if (e.shape.size() > kMaxRank) bad(g, v, "rank above 16");
  for (auto x : e.shape)
    if (x < 1) bad(g, v, "empty block");
  if (e.origin.size() != e.shape.size()) bad(g, v, "origin rank differs from shape rank");
  k.shape = e.shape;
  k.numel = numel_of(e.shape);
  for (const ExecInput& in : e.inputs) k.in.push_back(make_view(g, v, in));
  const workloads::KernelInfo* info = workloads::find_kernel(e.op);
  if (!info) bad(g, v, "unknown kernel '" + e.op + "'");
  if (info->arity >= 0 && static_cast<int>(k.in.size()) != info->arity)
    bad(g, v, "kernel '" + e.op + "' needs " + std::to_string(info->arity) + " operands");
  if (info->arity < 0 && k.in.empty()) bad(g, v, "kernel '" + e.op + "' needs operands");
  k.flops = g.node(v).flops;
  k.p0 = static_cast<float>(e.attr("scale", 1));
  k.p1 = static_cast<float>(e.attr("eps", 0));
  if (e.op == "pow") k.p0 = static_cast<float>(e.attr("exponent", 1));
  plan_unary_attrs(e, k);
  const auto fn = fn_names().find(e.op);
  if (fn != fn_names().end()) k.fn = fn->second;
  const std::string& op = e.op;
  if (op == "input" || op == "fill") {
    plan_constant(e, k);
  } else if (op == "load") {
    plan_load(g, v, e, k);
  } else if (op == "reshape") {
    if (numel_of(k.in[0].shape) != k.numel)
      bad(g, v, "reshape: the operand's element count differs from the output's");
    k.op = KernelOp::copy;
    k.copy_shape = k.in[0].shape;
    k.copy_src = k.in[0].strides;
    k.copy_dst = contiguous_strides(k.in[0].shape);
  } else if (op == "transpose") {
    const auto perm = transpose_perm(g, v, e.einsum, k.in[0].shape.size(), e.shape.size());
    k.op = KernelOp::copy;
    k.copy_shape = e.shape;
    k.copy_dst = contiguous_strides(e.shape);
    for (std::size_t d = 0; d < perm.size(); ++d) {
      if (k.in[0].shape[perm[d]] != e.shape[d])
        bad(g, v, "transpose: output extent " + std::to_string(d) + " differs from the operand's");
      k.copy_src.push_back(k.in[0].strides[perm[d]]);
    }
  } else if (op == "stride") {
    plan_stride(g, v, e, k);
  } else if (op == "expand") {
    plan_broadcast(g, v, e, k, 1);  // the operand's strides, 0 where it repeats
    k.op = KernelOp::copy;
    k.copy_shape = e.shape;
    k.copy_src = k.bcast[0];
    k.copy_dst = contiguous_strides(e.shape);
  } else if (op == "einsum") {
    try {
      plan_einsum(e.einsum, k.in, e.shape, k);
    } catch (const InputError& err) {
      bad(g, v, err.what());
    }
  } else if (op == "sum" || op == "max") {
    for (const View& o : k.in)
      if (o.shape != e.shape) bad(g, v, "aggregate operand shape differs from the output's");
    k.op = KernelOp::aggregate;
  } else if (op == "assemble" || op == "select") {
    const Dims os = contiguous_strides(e.shape);
    std::int64_t covered = 0;
    for (std::size_t j = 0; j < k.in.size(); ++j) {
      const ExecDesc& pe = *g.node(k.in[j].src).exec;
      Piece p;
      for (std::size_t d = 0; d < e.shape.size(); ++d) {
        const auto off = op == "select" || e.inputs[j].offset.empty() ? 0 : e.inputs[j].offset[d];
        const auto dst = op == "select" ? 0 : pe.origin[d] + off - e.origin[d];
        if (k.in[j].shape.size() != e.shape.size() || dst < 0 ||
            dst + k.in[j].shape[d] > e.shape[d])
          bad(g, v, "piece outside the block");
        p.dst_offset += dst * os[d];
      }
      covered += numel_of(k.in[j].shape);
      k.pieces.push_back(p);
    }
    if (covered != k.numel) bad(g, v, "pieces do not tile the block");
    k.op = KernelOp::pieces;
  } else if (op == "reduce_sum" || op == "reduce_max" || op == "reduce_sumsq" ||
             op == "reduce_argmax") {
    if (op == "reduce_argmax") k.p0 = e.attr("last", 0) != 0 ? 1.0f : 0.0f;
    Dims want = k.in[0].shape;
    if (want.empty()) bad(g, v, "reduction of a scalar");
    want.back() = 1;
    if (want != e.shape) bad(g, v, "reduction output shape");
    k.op = KernelOp::reduce;
  } else if (op == "rotary") {
    plan_rotary(g, v, e, k);
  } else if (op == "gather") {
    plan_gather(g, v, e, k);
  } else if (op == "gather_along") {
    plan_gather_along(g, v, e, k);
  } else if (op == "conv2d" || op == "conv_transpose2d" || op == "maxpool2d" || op == "avgpool2d") {
    try {
      plan_window(e, k);
    } catch (const InputError& err) {
      bad(g, v, err.what());
    }
  } else if (op == "resize2d") {
    try {
      plan_resize(e, k);
    } catch (const InputError& err) {
      bad(g, v, err.what());
    }
  } else if (op == "lstm_cell" || op == "lstm_hidden" || op == "gru_cell") {
    plan_cell(g, v, e, k);
  } else if (op == "topk") {
    Dims want = k.in[0].shape;
    if (want.empty() || e.shape.size() != want.size() || e.shape.back() < 1 ||
        e.shape.back() > want.back() || !std::equal(want.begin(), want.end() - 1, e.shape.begin()))
      bad(g, v, "topk: the output is not the operand's shape with a last extent of 1 to its own");
    k.op = KernelOp::topk;
    k.p0 = e.attr("largest", 1) != 0 ? 1.0f : 0.0f;
    k.p1 = e.attr("indices", 0) != 0 ? 1.0f : 0.0f;
  } else if (op == "cumsum") {
    if (k.in[0].shape != e.shape || e.shape.empty())
      bad(g, v, "cumsum: the operand's shape differs from the output's (or is a scalar)");
    k.op = KernelOp::scan;
    k.p0 = e.attr("exclusive", 0) != 0 ? 1.0f : 0.0f;
    k.p1 = e.attr("reverse", 0) != 0 ? 1.0f : 0.0f;
  } else if (info->arity == 1) {
    if (k.in[0].shape != e.shape) bad(g, v, "unary operand shape differs from the output's");
    k.op = KernelOp::unary;
  } else if (info->arity == 2) {
    plan_broadcast(g, v, e, k, 2);
  } else if (op == "where") {
    plan_broadcast(g, v, e, k, 3);

  } else {
    bad(g, v, "kernel '" + op + "' is not supported by the engine");
  }
}

// Work and size of node v for synthetic kernels: reference costs, else flops / out_bytes.
double syn_work(const Node& n) {
  return n.compute_cost ? *n.compute_cost : n.flops;
}
// With per-edge transfer costs the output is as large as its costliest out-edge (the engine
// moves one copy per producer and destination device, as the hardware model does).
double syn_size(const Graph& g, NodeId v) {
  const Node& n = g.node(v);
  double size = n.transfer_cost ? *n.transfer_cost : n.out_bytes;
  if (g.has_edge_transfer_costs()) size = std::max(size, g.max_out_transfer_cost(v));
  return size;
}

void plan_synthetic(const Graph& g, NodeId v, double scale, KernelPlan& k) {
  for (NodeId u : g.predecessors(v)) {
    View view;
    view.src = u;
    view.shape = {1};
    view.strides = {1};
    k.in.push_back(view);
  }
  const Node& n = g.node(v);
  k.numel = std::max<std::int64_t>(1, std::llround(scale * syn_size(g, v) / 4.0));
  k.shape = {k.numel};
  k.op = KernelOp::synthetic;
  k.p0 = static_cast<float>(v % 7 + 1);
  const double f = scale * syn_work(n);
  if (f < 2) return;
  k.sm = std::clamp<std::int64_t>(std::llround(std::cbrt(f / 2)), 1, kSynMaxM);
  const double per_k = 2.0 * static_cast<double>(k.sm * k.sm);
  k.sk = std::clamp<std::int64_t>(std::llround(f / per_k), 1, kSynMaxK);
  k.reps = std::max<std::int64_t>(1, std::llround(f / (per_k * static_cast<double>(k.sk))));
  k.flops = per_k * static_cast<double>(k.sk * k.reps);
}

}  // namespace

dev::GatherArgs gather_args(const KernelPlan& k) {
  const View& t = k.in[0];
  const View& ix = k.in[1];
  dev::GatherArgs a;
  a.idx = device_shape(ix.shape);
  std::copy(ix.strides.begin(), ix.strides.end(), a.ix);
  a.along = k.p1 != 0;
  const std::size_t split = a.along ? t.shape.size() - 1 : 1;  // the table's row axes
  const Dims lead(t.shape.begin(), t.shape.begin() + static_cast<std::ptrdiff_t>(split)),
      row(t.shape.begin() + static_cast<std::ptrdiff_t>(split), t.shape.end());
  const Dims lead_strides(t.strides.begin(),
                          t.strides.begin() + static_cast<std::ptrdiff_t>(split)),
      row_strides(t.strides.begin() + static_cast<std::ptrdiff_t>(split), t.strides.end());
  a.row = device_shape(a.along ? lead : row);
  const Dims& tr = a.along ? lead_strides : row_strides;
  std::copy(tr.begin(), tr.end(), a.tr);
  a.rows = (a.along ? row : lead)[0];
  a.row_stride = (a.along ? row_strides : lead_strides)[0];
  a.row_len = a.along ? ix.shape.back() : numel_of(row);
  return a;
}

void set_row_mode(const KernelPlan& k, dev::ScanArgs& a) {
  if (k.op == KernelOp::topk) {
    a.k = k.shape.back();
    a.largest = k.p0 != 0, a.indices = k.p1 != 0;
  } else {
    a.exclusive = k.p0 != 0, a.reverse = k.p1 != 0;
  }
}

Plan compile_plan(const Graph& g, KernelMode mode, double scale) {
  Plan plan;
  if (mode == KernelMode::automatic) {
    mode = KernelMode::real;
    for (const Node& n : g.nodes())
      if (!n.exec) mode = KernelMode::synthetic;
  }
  plan.mode = mode;
  plan.kernels.resize(static_cast<std::size_t>(g.num_nodes()));
  if (mode == KernelMode::synthetic) {
    if (scale <= 0) {
      double total = 0;
      for (const Node& n : g.nodes()) total += syn_work(n);
      scale = total > 0 ? 1e8 / total : 1.0;
    }
    plan.scale = scale;
    plan.syn_a.resize(static_cast<std::size_t>(kSynMaxM * kSynMaxK));
    plan.syn_b.resize(static_cast<std::size_t>(kSynMaxK * kSynMaxM));
    for (std::size_t i = 0; i < plan.syn_a.size(); ++i) {
      plan.syn_a[i] = static_cast<float>(static_cast<double>(i % 17) / 17.0 - 0.5);
      plan.syn_b[i] = static_cast<float>(static_cast<double>(i % 13) / 13.0 - 0.5);
    }
  }
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    KernelPlan& k = plan.kernels[static_cast<std::size_t>(v)];
    if (mode == KernelMode::real) {
      plan_real(g, v, k);
    } else if (mode == KernelMode::synthetic) {
      plan_synthetic(g, v, plan.scale, k);
    } else {
      k.shape = {1};
      for (NodeId u : g.predecessors(v)) k.in.push_back(View{u, 0, {1}, {1}});
    }
    plan.total_flops += k.flops;
  }
  return plan;
}

}  // namespace doppler::engine_detail
