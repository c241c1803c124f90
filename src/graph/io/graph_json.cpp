#include "doppler/graph/io/graph_json.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/base64.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/json_aside.hpp"
#include "doppler/util/json_doc.hpp"

namespace doppler {

namespace {

// The shortest constant data (base64 characters) decoded from the file's text in place.
constexpr std::size_t kAsideBytes = 4096;

using nlohmann::json;
using ojson = nlohmann::ordered_json;
constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max() - 1;

std::vector<std::int64_t> int_list(const JsonDoc& doc, const json& j, const std::string& ptr) {
  doc.expect_array(j, ptr);
  std::vector<std::int64_t> out;
  out.reserve(j.size());
  for (std::size_t i = 0; i < j.size(); ++i)
    out.push_back(doc.integer(j[i], ptr + "/" + std::to_string(i), 0,
                              std::numeric_limits<std::int64_t>::max()));
  return out;
}

ExecDesc parse_exec(const JsonDoc& doc, const json& j, const std::string& ptr, std::int64_t n) {
  ExecDesc x;
  x.op = doc.string(doc.require(j, ptr, "op"), ptr + "/op");
  for (const auto& [key, val] : j.items()) {
    const std::string p = ptr + "/" + key;
    if (key == "op") continue;
    if (key == "shape") {
      x.shape = int_list(doc, val, p);
    } else if (key == "origin") {
      x.origin = int_list(doc, val, p);
    } else if (key == "einsum") {
      x.einsum = doc.string(val, p);
    } else if (key == "attrs") {
      doc.expect_object(val, p);
      for (const auto& [k, v] : val.items())
        x.attrs.emplace_back(k, doc.number(v, p + "/" + k, -std::numeric_limits<double>::max()));
    } else if (key == "inputs") {
      doc.expect_array(val, p);
      for (std::size_t i = 0; i < val.size(); ++i) {
        const std::string ip = p + "/" + std::to_string(i);
        ExecInput in;
        in.src =
            static_cast<NodeId>(doc.integer(doc.require(val[i], ip, "src"), ip + "/src", 0, n - 1));
        if (val[i].contains("offset")) in.offset = int_list(doc, val[i]["offset"], ip + "/offset");
        if (val[i].contains("shape")) in.shape = int_list(doc, val[i]["shape"], ip + "/shape");
        x.inputs.push_back(std::move(in));
      }
    } else {
      doc.fail(p, fmt::format("unknown exec field '{}'", key));
    }
  }
  return x;
}

ojson exec_to_json(const ExecDesc& x) {
  ojson j = ojson::object();
  j["op"] = x.op;
  if (!x.shape.empty()) j["shape"] = x.shape;
  if (!x.origin.empty()) j["origin"] = x.origin;
  if (!x.einsum.empty()) j["einsum"] = x.einsum;
  if (!x.inputs.empty()) {
    ojson ins = ojson::array();
    for (const ExecInput& in : x.inputs) {
      ojson a = {{"src", in.src}};
      if (!in.offset.empty()) a["offset"] = in.offset;
      if (!in.shape.empty()) a["shape"] = in.shape;
      ins.push_back(std::move(a));
    }
    j["inputs"] = std::move(ins);
  }
  if (!x.attrs.empty()) {
    // Sorted by name, as the reader returns them: a written graph reads back to the same text.
    auto sorted = x.attrs;
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    ojson a = ojson::object();
    for (const auto& [k, v] : sorted) a[k] = v;
    j["attrs"] = std::move(a);
  }
  return j;
}

// Reverses each 4-byte group on big-endian hosts (the format stores little-endian f32).
void to_little_endian(std::span<char> bytes) {
  if constexpr (std::endian::native == std::endian::big) {
    for (std::size_t i = 0; i + 4 <= bytes.size(); i += 4) {
      std::swap(bytes[i], bytes[i + 3]);
      std::swap(bytes[i + 1], bytes[i + 2]);
    }
  }
}

// Appends the base64 of f32 values' little-endian bytes to `out`.
void append_f32_base64(const std::vector<float>& values, std::string& out) {
  const std::string_view bytes(reinterpret_cast<const char*>(values.data()), values.size() * 4);
  if constexpr (std::endian::native == std::endian::little) return base64_append(bytes, out);
  std::string swapped(bytes);
  to_little_endian(swapped);
  base64_append(swapped, out);
}

// Decodes `data` (base64 of little-endian f32) into `out`, whose size the shape gave; fails at
// `pointer` with why the text is not that.
void decode_f32(const JsonDoc& doc, std::string_view data, std::vector<float>& out,
                const std::string& pointer, std::size_t t) {
  const std::size_t size = out.size() * 4;
  std::string why;
  if (base64_decoded_size(data) != size) {  // the reason: invalid base64, or the wrong size
    std::string bytes;
    if (!base64_decode(data, bytes, why)) doc.fail(pointer, fmt::format("constant {}: {}", t, why));
    doc.fail(pointer,
             fmt::format("constant {}: data holds {} bytes, the shape needs {} (4 per f32)", t,
                         bytes.size(), size));
  }
  const std::span<char> bytes(reinterpret_cast<char*>(out.data()), size);
  if (!base64_decode_to(data, bytes, why))
    doc.fail(pointer, fmt::format("constant {}: {}", t, why));
  to_little_endian(bytes);
}

// The "constants" array: [{"name", "shape", "dtype": "f32", "data": base64}...]. The total
// decoded size is limited by `limits.max_constant_bytes`, checked before anything is decoded.
std::vector<ConstantTensor> parse_constants(const JsonDoc& doc, const json& arr,
                                            const ReadLimits& limits, std::string_view source,
                                            const std::vector<AsideSpan>& aside) {
  doc.expect_array(arr, "/constants");
  std::vector<ConstantTensor> out;
  std::uint64_t total = 0;
  for (std::size_t t = 0; t < arr.size(); ++t) {
    const std::string p = fmt::format("/constants/{}", t);
    const json& jc = arr[t];
    doc.expect_object(jc, p);
    for (const auto& [key, val] : jc.items())
      if (key != "name" && key != "shape" && key != "dtype" && key != "data")
        doc.fail(p + "/" + key,
                 fmt::format("constant {}: unknown field '{}' (expected name, shape, dtype, data)",
                             t, key));
    ConstantTensor c;
    if (jc.contains("name")) c.name = doc.string(jc["name"], p + "/name");
    c.shape = int_list(doc, doc.require(jc, p, "shape"), p + "/shape");
    const std::string dtype = doc.string(doc.require(jc, p, "dtype"), p + "/dtype");
    if (dtype != "f32")
      doc.fail(p + "/dtype",
               fmt::format("constant {}: unsupported dtype \"{}\" (expected \"f32\")", t, dtype));
    const json& data_value = doc.require(jc, p, "data");
    if (!data_value.is_string()) doc.string(data_value, p + "/data");  // throws: expected a string
    const std::string_view data =
        aside_contents(data_value.get_ref<const std::string&>(), source, aside);
    // Element count, refused as soon as the bytes exceed what is left of the limit.
    const std::uint64_t left = limits.max_constant_bytes - total;
    const auto too_large = [&] {
      doc.fail(p + "/shape",
               fmt::format("constant {}: constant tensors hold more than {} bytes, the limit "
                           "(raise it with DOPPLER_MAX_CONSTANT_BYTES)",
                           t, limits.max_constant_bytes));
    };
    std::uint64_t count = 1;
    for (auto e : c.shape) count = e == 0 ? 0 : count;
    for (auto e : c.shape) {
      if (count == 0) break;
      const auto ue = static_cast<std::uint64_t>(e);
      if (count > left / 4 / ue) too_large();
      count *= ue;
    }
    if (count * 4 > left) too_large();
    total += count * 4;
    c.values.resize(static_cast<std::size_t>(count));
    decode_f32(doc, data, c.values, p + "/data", t);
    out.push_back(std::move(c));
  }
  return out;
}

}  // namespace

Graph parse_graph_json(std::string_view text, const std::string& file,
                       std::vector<std::string>* warnings, const ReadLimits& limits) {
  JsonLimits jl;
  jl.arrays = {{"nodes", limits.max_ops, "nodes", "DOPPLER_MAX_OPS"},
               {"edges", limits.max_edges, "edges", "DOPPLER_MAX_EDGES"}};
  // The constants' base64 (hundreds of MB for a large model) is set aside, to be decoded from
  // the text itself, not copied into the parsed document a character at a time.
  std::optional<AsideText> aside = set_aside_long_strings(text, {"data"}, kAsideBytes);
  const JsonDoc doc(aside ? std::move(aside->text) : std::string(text), file, jl);
  const std::vector<AsideSpan> spans = aside ? std::move(aside->spans) : std::vector<AsideSpan>{};
  doc.expect_format("doppler-graph", 1);
  const json& root = doc.root();

  GraphMeta meta;
  meta.origin = "json";
  if (root.contains("name")) meta.name = doc.string(root["name"], "/name");
  if (root.contains("origin")) meta.origin = doc.string(root["origin"], "/origin");
  if (root.contains("params")) {
    doc.expect_object(root["params"], "/params");
    for (const auto& [k, v] : root["params"].items())
      meta.params[k] = v.is_string() ? doc.string(v, "/params/" + k) : v.dump();
  }

  const json& nodes = doc.require(root, "", "nodes");
  doc.expect_array(nodes, "/nodes");
  const auto n = static_cast<std::int64_t>(nodes.size());
  if (n > kMaxIndex) doc.fail("/nodes", fmt::format("{} nodes is more than supported", n));

  GraphBuilder b;
  for (std::int64_t v = 0; v < n; ++v) {
    const std::string p = fmt::format("/nodes/{}", v);
    const json& jn = nodes[static_cast<std::size_t>(v)];
    doc.expect_object(jn, p);
    Node node;
    for (const auto& [key, val] : jn.items()) {
      const std::string fp = p + "/" + key;
      if (key == "id") {
        const auto id = doc.integer(val, fp, 0, std::numeric_limits<std::int64_t>::max());
        if (id != v)
          doc.fail(
              fp, fmt::format("node ids must be 0..N-1 in order: expected id {}, found {}", v, id));
      } else if (key == "name") {
        node.name = doc.string(val, fp);
      } else if (key == "kind") {
        const std::string k = doc.string(val, fp);
        const auto kind = parse_op_kind(k);
        if (!kind) doc.fail(fp, fmt::format("node {}: unknown kind \"{}\"", v, k));
        node.kind = *kind;
      } else if (key == "flops") {
        node.flops = doc.number(val, fp);
      } else if (key == "out_bytes") {
        node.out_bytes = doc.number(val, fp);
      } else if (key == "group") {
        node.group = static_cast<std::int32_t>(doc.integer(val, fp, -1, kMaxIndex));
      } else if (key == "compute_cost") {
        node.compute_cost = doc.number(val, fp);
      } else if (key == "transfer_cost") {
        node.transfer_cost = doc.number(val, fp);
      } else if (key == "exec") {
        doc.expect_object(val, fp);
        node.exec = parse_exec(doc, val, fp, n);
      } else {
        doc.fail(fp, fmt::format("node {}: unknown field '{}'", v, key));
      }
    }
    b.add_node(std::move(node));
  }

  std::vector<std::string> edge_ptr;
  if (root.contains("edges")) {
    const json& edges = root["edges"];
    doc.expect_array(edges, "/edges");
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const std::string p = fmt::format("/edges/{}", i);
      const json& je = edges[i];
      if (!je.is_array() || je.size() < 2 || je.size() > 3)
        doc.fail(p, fmt::format("edge: expected [src, dst], [src, dst, bytes] or [src, dst, "
                                "{{\"bytes\": b, \"transfer_cost\": c}}], found {}",
                                je.is_array() ? fmt::format("an array of {}", je.size())
                                              : JsonDoc::type_name(je)));
      const auto src = doc.integer(je[0], p + "/0", std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
      const auto dst = doc.integer(je[1], p + "/1", std::numeric_limits<std::int64_t>::min(),
                                   std::numeric_limits<std::int64_t>::max());
      std::optional<double> bytes, transfer_cost;
      if (je.size() == 3 && je[2].is_object()) {
        for (const auto& [key, val] : je[2].items()) {
          const std::string fp = p + "/2/" + key;
          if (key == "bytes")
            bytes = doc.number(val, fp);
          else if (key == "transfer_cost")
            transfer_cost = doc.number(val, fp);
          else
            doc.fail(fp,
                     fmt::format("edge: unknown field '{}' (expected bytes, transfer_cost)", key));
        }
      } else if (je.size() == 3) {
        bytes = doc.number(je[2], p + "/2");
      }
      b.add_edge(src, dst, bytes, transfer_cost);
      edge_ptr.push_back(p);
    }
  }
  for (const auto& [key, val] : root.items()) {
    static const char* known[] = {"format", "version", "name",  "origin",   "params",
                                  "units",  "nodes",   "edges", "constants"};
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) doc.fail("/" + key, fmt::format("unknown field '{}'", key));
  }

  b.set_meta(std::move(meta));
  Graph g;
  try {
    g = b.build();
  } catch (const GraphError& e) {
    if (e.edge() >= 0) doc.fail(edge_ptr[static_cast<std::size_t>(e.edge())], e.problem());
    if (e.node() >= 0) doc.fail(fmt::format("/nodes/{}", e.node()), e.problem());
    throw InputError(file, 0, e.problem());
  }
  if (b.duplicates_collapsed() > 0 && warnings)
    warnings->push_back(
        fmt::format("{}: {} duplicate edge(s) collapsed", file, b.duplicates_collapsed()));
  if (root.contains("constants")) {
    try {
      g.set_constants(parse_constants(doc, root["constants"], limits, text, spans));
    } catch (const InputError& e) {
      if (!e.file().empty()) throw;
      doc.fail("/constants", e.problem());
    }
  }
  // Exec operands must be real predecessors.
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    if (!g.node(v).exec) continue;
    for (const ExecInput& in : g.node(v).exec->inputs)
      if (g.find_edge(in.src, v) < 0)
        doc.fail(fmt::format("/nodes/{}/exec", v),
                 fmt::format("node {}: exec reads node {} but there is no edge {}->{}", v, in.src,
                             in.src, v));
  }
  return g;
}

std::string format_graph_json(const Graph& g) {
  const GraphMeta& m = g.meta();
  json head = json::object();
  head["name"] = m.name;
  head["origin"] = m.origin;
  head["params"] = m.params;
  head["units"] = {{"flops", "FLOP"},
                   {"out_bytes", "bytes"},
                   {"edge_bytes", "bytes"},
                   {"compute_cost", "reference units"},
                   {"transfer_cost", "reference units"}};
  std::string out = "{\n  \"format\": \"doppler-graph\",\n  \"version\": 1,\n";
  for (const char* key : {"name", "origin", "params", "units"})
    out += fmt::format("  \"{}\": {},\n", key, head[key].dump());
  out += "  \"nodes\": [";
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const Node& nd = g.node(v);
    ojson j = {{"id", v}, {"kind", std::string(op_kind_name(nd.kind))}};
    if (!nd.name.empty()) j["name"] = nd.name;
    j["flops"] = nd.flops;
    j["out_bytes"] = nd.out_bytes;
    if (nd.group >= 0) j["group"] = nd.group;
    if (nd.compute_cost) j["compute_cost"] = *nd.compute_cost;
    if (nd.transfer_cost) j["transfer_cost"] = *nd.transfer_cost;
    if (nd.exec) j["exec"] = exec_to_json(*nd.exec);
    out += (v ? ",\n    " : "\n    ") + j.dump();
  }
  out += g.num_nodes() ? "\n  ],\n" : "],\n";
  out += "  \"edges\": [";
  for (EdgeId e = 0; e < g.num_edges(); ++e) {
    const Edge& ed = g.edge(e);
    ojson j = ojson::array({ed.src, ed.dst});
    if (ed.transfer_cost) {
      ojson attrs = ojson::object();
      if (ed.bytes) attrs["bytes"] = *ed.bytes;
      attrs["transfer_cost"] = *ed.transfer_cost;
      j.push_back(attrs);
    } else if (ed.bytes) {
      j.push_back(*ed.bytes);
    }
    out += (e ? ",\n    " : "\n    ") + j.dump();
  }
  out += g.num_edges() ? "\n  ]" : "]";
  if (!g.constants().empty()) {
    std::size_t data_size = 0;  // the constants' base64, reserved at once (hundreds of MB)
    for (const ConstantTensor& c : g.constants())
      data_size += base64_encoded_size(c.values.size() * 4) + 64 + c.name.size();
    out.reserve(out.size() + data_size);
    out += ",\n  \"constants\": [";
    for (std::size_t t = 0; t < g.constants().size(); ++t) {
      const ConstantTensor& c = g.constants()[t];
      // As ordered_json's dump() of {name, shape, dtype, data} writes it, but the data (base64:
      // nothing to escape) is appended whole, not character by character.
      out += (t ? ",\n    " : "\n    ");
      out += "{\"name\":" + ojson(c.name).dump() + ",\"shape\":" + ojson(c.shape).dump() +
             ",\"dtype\":\"f32\",\"data\":\"";
      append_f32_base64(c.values, out);
      out += "\"}";
    }
    out += "\n  ]";
  }
  out += "\n}\n";
  return out;
}

}  // namespace doppler
