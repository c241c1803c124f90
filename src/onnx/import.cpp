// doppler::onnx_import::import_onnx: read and check the model (libonnx), apply input shapes,
// infer shapes, then fold and lower node by node and build the graph.
#include "doppler/onnx/import.hpp"

#include <onnx/checker.h>
#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "lowerer.hpp"

#include "doppler/util/atomic_file.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/npy.hpp"
#include "doppler/util/utf8.hpp"

namespace doppler::onnx_import {

namespace {

constexpr std::int64_t kMinOpset = 7, kMaxOpset = 17;  // libonnx 1.12 knows opsets up to 17

struct Model {
  std::string file;
  onnx::ModelProto proto;
  std::int64_t opset = 0;
};

[[noreturn]] void fail(const std::string& file, const std::string& problem) {
  throw InputError(file, 0, problem);
}

std::string node_label(const onnx::NodeProto& n) {
  const std::string name = !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : "?";
  return fmt::format("node {} ({})", name, n.op_type());
}

// Every name that reaches the graph or the report must be UTF-8 (JSON requires it); protobuf's
// proto2 strings are not checked by the parser.
void check_names(const Model& m) {
  const auto check = [&](const std::string& s, const std::string& what) {
    if (!valid_utf8(s)) fail(m.file, what + " is not valid UTF-8");
  };
  const auto& g = m.proto.graph();
  check(m.proto.producer_name(), "the producer name");
  check(m.proto.producer_version(), "the producer version");
  for (const auto& o : m.proto.opset_import()) check(o.domain(), "an opset domain");
  for (const auto& t : g.initializer()) check(t.name(), "an initializer name");
  for (const auto* list : {&g.input(), &g.output(), &g.value_info()})
    for (const auto& vi : *list) check(vi.name(), "a graph input, output or value name");
  for (int k = 0; k < g.node_size(); ++k) {
    const auto& n = g.node(k);
    const std::string where = fmt::format("node #{}", k);
    check(n.name(), "the name of " + where);
    check(n.op_type(), "the op type of " + where);
    check(n.domain(), "the domain of " + where);
    for (const auto& s : n.input()) check(s, "an input name of " + where);
    for (const auto& s : n.output()) check(s, "an output name of " + where);
  }
}

void check_opset_and_ops(Model& m) {
  for (const auto& o : m.proto.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") m.opset = o.version();
  if (m.opset == 0) fail(m.file, "the model imports no default-domain (ai.onnx) opset");
  if (m.opset < kMinOpset || m.opset > kMaxOpset)
    fail(m.file,
         fmt::format("unsupported opset {} (supported: {} to {})", m.opset, kMinOpset, kMaxOpset));
  const auto supported = supported_ops();
  std::map<std::string, int> bad;
  for (const auto& n : m.proto.graph().node()) {
    const bool std_domain = n.domain().empty() || n.domain() == "ai.onnx";
    const std::string key = std_domain ? n.op_type() : n.domain() + "." + n.op_type();
    if (!std_domain || !std::binary_search(supported.begin(), supported.end(), n.op_type()))
      ++bad[key];
  }
  if (bad.empty()) return;
  std::vector<std::string> parts;
  for (const auto& [op, count] : bad) parts.push_back(fmt::format("{} ({})", op, count));
  fail(m.file,
       fmt::format("unsupported ONNX ops: {} (see `doppler import --help` for the supported list)",
                   fmt::join(parts, ", ")));
}

std::set<std::string> initializer_names(const onnx::GraphProto& g) {
  std::set<std::string> s;
  for (const auto& t : g.initializer()) s.insert(t.name());
  return s;
}

// Applies --input shapes, then requires every graph input to have a static shape.
void apply_input_shapes(Model& m, const ImportOptions& o) {
  auto* g = m.proto.mutable_graph();
  const auto inits = initializer_names(*g);
  std::set<std::string> seen;
  for (auto& vi : *g->mutable_input()) {
    if (inits.count(vi.name())) continue;
    if (!vi.type().has_tensor_type())
      fail(m.file, "graph input '" + vi.name() + "' is not a tensor");
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (auto it = o.input_shapes.find(vi.name()); it != o.input_shapes.end()) {
      seen.insert(vi.name());
      shape->clear_dim();
      for (auto d : it->second) shape->add_dim()->set_dim_value(d);
    }
    for (int d = 0; d < shape->dim_size(); ++d)
      if (!shape->dim(d).has_dim_value() || shape->dim(d).dim_value() < 1)
        throw InputError(
            m.file, 0,
            fmt::format(
                "graph input '{}': dimension {}{} is dynamic", vi.name(), d,
                shape->dim(d).has_dim_param() ? " ('" + shape->dim(d).dim_param() + "')" : ""))
            .with_remedy(Remedy::input_shape, vi.name());
  }
  for (const auto& [name, dims] : o.input_shapes)
    if (!seen.count(name))
      fail(m.file, "a shape is given for input '" + name + "': the model has no such graph input");
}

// Window attributes libonnx 1.12's shape inference divides by (a zero stride stops the process
// with SIGFPE there): strides, dilations and kernel_shape must be positive before it runs, and a
// DepthToSpace / SpaceToDepth blocksize in 1..2^15 (its square divides the channels).
void check_window_attrs(const Model& m) {
  for (const auto& n : m.proto.graph().node()) {
    const std::string& op = n.op_type();
    if (op == "DepthToSpace" || op == "SpaceToDepth")
      for (const auto& a : n.attribute())
        if (a.name() == "blocksize" && (a.i() < 1 || a.i() > (std::int64_t{1} << 15)))
          fail(m.file, fmt::format("blocksize {} outside 1..32768 ({})", a.i(), node_label(n)));
    if (op != "Conv" && op != "ConvTranspose" && op != "MaxPool" && op != "AveragePool") continue;
    for (const auto& a : n.attribute()) {
      if (a.name() != "strides" && a.name() != "dilations" && a.name() != "kernel_shape") continue;
      for (const auto v : a.ints())
        if (v < 1)
          fail(m.file, fmt::format("{} [{}]: every entry must be positive ({})", a.name(),
                                   fmt::join(a.ints(), ", "), node_label(n)));
    }
  }
}

Model read_model(const std::string& bytes, const std::string& file, const ImportOptions& o) {
  Model m;
  m.file = file;
  if (!m.proto.ParseFromString(bytes))
    fail(file, "not a readable ONNX protobuf (truncated or corrupt)");
  if (!m.proto.has_graph()) fail(file, "the model has no graph");
  check_names(m);
  check_opset_and_ops(m);
  check_window_attrs(m);
  apply_input_shapes(m, o);
  try {
    load_external_data(*m.proto.mutable_graph(), file);
  } catch (const std::exception& e) {
    fail(file, e.what());
  }
  try {
    onnx::checker::check_model(m.proto);
  } catch (const std::exception& e) {
    std::string what = e.what();
    what = what.substr(0, what.find('\n'));
    fail(file, "invalid model: " + what);
  }
  try {
    onnx::shape_inference::InferShapes(m.proto, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(true, 1, true));
  } catch (const std::exception& e) {
    std::string what = e.what();
    std::replace(what.begin(), what.end(), '\n', ' ');
    fail(file, "shape inference: " + what);
  }
  return m;
}

// Static shapes ONNX inference found, to check the lowering against.
std::map<std::string, Shape> inferred_shapes(const onnx::GraphProto& g) {
  std::map<std::string, Shape> m;
  auto add = [&](const onnx::ValueInfoProto& vi) {
    if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape()) return;
    Shape s;
    for (const auto& d : vi.type().tensor_type().shape().dim()) {
      if (!d.has_dim_value()) return;
      s.push_back(d.dim_value());
    }
    m[vi.name()] = s;
  };
  for (const auto& vi : g.value_info()) add(vi);
  for (const auto& vi : g.output()) add(vi);
  return m;
}

// The tensors read as the indices of an axis-0 Gather of an initializer (token ids of an
// embedding), with the rows of that table (the fewest when several): graph inputs among them get
// generated values that are rows, and their .npy values are checked against it.
std::map<std::string, std::int64_t> index_rows(const onnx::GraphProto& g) {
  std::map<std::string, std::int64_t> rows_of;
  for (const auto& t : g.initializer())
    if (t.dims_size() > 0) rows_of[t.name()] = t.dims(0);
  std::map<std::string, std::int64_t> out;
  for (const auto& n : g.node()) {
    if (n.op_type() != "Gather" || n.input_size() < 2 || !n.domain().empty()) continue;
    std::int64_t axis = 0;
    for (const auto& a : n.attribute())
      if (a.name() == "axis") axis = a.i();
    const auto table = rows_of.find(n.input(0));
    if (axis != 0 || table == rows_of.end() || table->second < 1) continue;
    const auto [it, fresh] = out.try_emplace(n.input(1), table->second);
    if (!fresh) it->second = std::min(it->second, table->second);
  }
  return out;
}

// Values of a .npy file given for a graph input that indexes a table of `rows` rows: each must
// name one (-rows .. rows - 1, ONNX Gather's range).
void check_indices(const std::string& path, const std::string& input, const NpyArray& a,
                   std::int64_t rows) {
  for (std::size_t i = 0; i < a.values.size(); ++i) {
    const double v = std::trunc(a.values[i]);
    if (!(v >= -static_cast<double>(rows) && v < static_cast<double>(rows)))
      fail(path, fmt::format("element {} is {}: graph input '{}' indexes a table of {} rows "
                             "(expected {} .. {})",
                             i, a.values[i], input, rows, -rows, rows - 1));
  }
}

void define_inputs(const Model& m, const ImportOptions& o, Lowerer& low) {
  const auto& g = m.proto.graph();
  const auto rows = index_rows(g);
  for (const auto& t : g.initializer()) {
    try {
      low.set_constant(t.name(), decode_tensor(t));
    } catch (const std::exception& e) {
      fail(m.file, fmt::format("initializer '{}': {}", t.name(), e.what()));
    }
  }
  std::set<std::string> used;
  for (const auto& vi : g.input()) {
    if (low.find(vi.name())) continue;
    Shape s;
    for (const auto& d : vi.type().tensor_type().shape().dim()) s.push_back(d.dim_value());
    const auto r = rows.find(vi.name());
    const auto index_of = r == rows.end() ? std::nullopt : std::optional<std::int64_t>(r->second);
    if (auto it = o.input_files.find(vi.name()); it != o.input_files.end()) {
      used.insert(vi.name());
      const NpyArray a = read_npy(it->second);
      if (a.shape != s)
        fail(it->second, fmt::format("holds a {} array; graph input '{}' is {}",
                                     shape_text(a.shape), vi.name(), shape_text(s)));
      if (index_of) check_indices(it->second, vi.name(), a, *index_of);
      low.set_loaded_input(vi.name(),
                           HostTensor{a.shape, {a.values.begin(), a.values.end()}, false});
    } else if (auto sd = o.input_seeds.find(vi.name()); sd != o.input_seeds.end()) {
      used.insert(vi.name());
      low.set_input(vi.name(), s, sd->second, index_of);
    } else {
      low.set_input(vi.name(), s, std::nullopt, index_of);
    }
  }
  for (const auto& [name, path] : o.input_files)
    if (!used.count(name)) fail(m.file, "--inputs " + name + ": the model has no such graph input");
  for (const auto& [name, seed] : o.input_seeds)
    if (!used.count(name)) fail(m.file, "--inputs " + name + ": the model has no such graph input");
}

void check_shapes(const Model& m, const onnx::NodeProto& n, const Lowerer& low,
                  const std::map<std::string, Shape>& inferred) {
  for (const auto& name : n.output()) {
    const Value* v = low.find(name);
    if (name.empty()) continue;
    if (!v) fail(m.file, fmt::format("output '{}' is not produced ({})", name, node_label(n)));
    auto it = inferred.find(name);
    if (it != inferred.end() && it->second != v->shape)
      fail(m.file, fmt::format("shapes do not agree: '{}' is {} by ONNX shape inference but {} by "
                               "the importer ({})",
                               name, shape_text(it->second), shape_text(v->shape), node_label(n)));
  }
}

// Every kernel attribute is finite (a graph file cannot hold NaN or infinities): a model whose
// attribute or scalar constant is not is refused, naming its node.
void check_finite_attrs(const Model& m, const Graph& g,
                        const std::vector<std::pair<int, int>>& ranges) {
  for (std::size_t i = 0; i < ranges.size(); ++i)
    for (NodeId v = ranges[i].first; v < ranges[i].second; ++v) {
      const Node& node = g.node(v);
      if (!node.exec) continue;
      for (const auto& [key, value] : node.exec->attrs)
        if (!std::isfinite(value))
          fail(m.file, fmt::format("kernel attribute '{}' of block {} is {} ({})", key, node.name,
                                   value, node_label(m.proto.graph().node(static_cast<int>(i)))));
    }
}

// Op types whose einsum blocks count as einsum FLOPs: matrix products and recurrent layers.
bool counts_einsum(const std::string& op) {
  return op == "MatMul" || op == "Gemm" || op == "LSTM" || op == "GRU" || op == "RNN";
}

void fill_report(const Graph& g, const std::vector<std::pair<int, int>>& ranges, ImportReport& r) {
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    NodeReport& nr = r.nodes[i];
    nr.blocks = ranges[i].second - ranges[i].first;
    for (NodeId v = ranges[i].first; v < ranges[i].second; ++v) {
      const Node& node = g.node(v);
      nr.flops += node.flops;
      if (counts_einsum(nr.op_type) && node.exec && node.exec->op == "einsum")
        r.einsum_flops += node.flops;
      if (nr.op_type == "Conv" && node.exec && node.exec->op == "conv2d")
        r.conv_flops += node.flops;
    }
  }
  r.blocks = g.num_nodes();
  for (const Node& node : g.nodes()) r.total_flops += node.flops;
}

}  // namespace

ImportResult import_onnx_bytes(const std::string& bytes, const std::string& name,
                               const ImportOptions& options) {
  if (options.devices < 1) throw InputError("the device count must be at least 1");
  Model m = read_model(bytes, name, options);
  const auto& g = m.proto.graph();
  ImportOptions lowering = options;  // whole ops: the partition rule aims at one block per op
  if (options.whole_ops) lowering.devices = 1;
  Lowerer low(lowering, m.opset);
  define_inputs(m, options, low);
  const auto inferred = inferred_shapes(g);
  ImportResult res;
  ImportReport& r = res.report;
  r.model = std::filesystem::path(name).filename().string();
  r.opset = m.opset;
  r.producer = (m.proto.producer_name() + " " + m.proto.producer_version());
  r.onnx_nodes = g.node_size();
  std::vector<std::pair<int, int>> ranges;
  for (const auto& n : g.node()) {
    if (options.cancel && options.cancel->load(std::memory_order_relaxed))
      throw std::runtime_error("import of " + name + " cancelled");
    NodeReport nr;
    nr.name = !n.name().empty() ? n.name() : n.output_size() ? n.output(0) : "";
    nr.op_type = n.op_type();
    const int before = low.num_nodes();
    try {
      nr.folded = low.lower(n);
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      fail(m.file, fmt::format("{} ({})", e.what(), node_label(n)));
    }
    check_shapes(m, n, low, inferred);
    if (n.output_size() > 0 && low.find(n.output(0))) nr.shape = low.find(n.output(0))->shape;
    r.folded_nodes += nr.folded ? 1 : 0;
    ranges.emplace_back(before, low.num_nodes());
    r.nodes.push_back(std::move(nr));
  }
  for (const auto& o : g.output()) r.outputs.push_back(o.name());
  GraphMeta meta;
  meta.name = std::filesystem::path(name).stem().string();
  meta.origin = "onnx";
  meta.params = {{"model", r.model},
                 {"opset", std::to_string(m.opset)},
                 {"devices", std::to_string(options.devices)},
                 {"dtype", std::string(workloads::dtype_name(options.dtype))}};
  try {
    res.graph = low.finish(r.outputs, std::move(meta));
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    fail(m.file, e.what());
  }
  check_finite_attrs(m, res.graph, ranges);
  r.parameters = low.parameters();
  fill_report(res.graph, ranges, r);
  return res;
}

ImportResult import_onnx(const std::string& path, const ImportOptions& options) {
  return import_onnx_bytes(read_file(path), path, options);
}

std::map<std::string, std::vector<std::int64_t>> parse_partition(const std::string& spec) {
  std::map<std::string, std::vector<std::int64_t>> m;
  if (spec.empty() || spec == "auto") return m;
  std::size_t start = 0;
  while (start <= spec.size()) {
    auto end = spec.find(',', start);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(start, end - start);
    const auto eq = item.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == item.size())
      throw InputError("--partition: expected TENSOR=AxBxC, got '" + item + "'");
    std::vector<std::int64_t> parts;
    std::size_t p = eq + 1;
    while (p <= item.size()) {
      auto x = item.find('x', p);
      if (x == std::string::npos) x = item.size();
      const std::string num = item.substr(p, x - p);
      if (num.empty() || num.size() > 9 || !std::all_of(num.begin(), num.end(), ::isdigit) ||
          std::stoll(num) < 1)
        throw InputError("--partition: bad block count '" + num + "' in '" + item + "'");
      parts.push_back(std::stoll(num));
      p = x + 1;
    }
    m[item.substr(0, eq)] = parts;
    start = end + 1;
  }
  return m;
}

}  // namespace doppler::onnx_import
