#include "doppler/graph/io/reference_text.hpp"

#include <cmath>
#include <limits>
#include <unordered_set>

#include <fmt/format.h>

#include "doppler/graph/graph_builder.hpp"
#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler {

namespace {

// Largest block count of the format, whatever the limits (T is checked against DOPPLER_MAX_OPS
// too, once the input blocks are known).
constexpr std::int64_t kMaxBlocks = 50'000'000;

struct Line {
  std::string_view text;
  std::int64_t number;  // 1-based
};

// The lines of `text` without trailing blank lines, at most `max_lines` of them, so that a file
// of millions of lines costs no memory; `*overflow_line` is set to the number of the first line
// left out (0 when none), for the caller to report after the header checks.
std::vector<Line> split_lines(std::string_view text, std::int64_t max_lines,
                              std::int64_t* overflow_line) {
  *overflow_line = 0;
  const auto last = text.find_last_not_of(" \t\r\n");
  text = last == std::string_view::npos ? std::string_view() : text.substr(0, last + 1);
  std::vector<Line> lines;
  std::size_t start = 0;
  std::int64_t number = 1;
  while (!text.empty() && start <= text.size()) {
    if (number > max_lines) {
      *overflow_line = number;
      break;
    }
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view l = text.substr(start, end - start);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    lines.push_back({l, number++});
    if (end == text.size()) break;
    start = end + 1;
  }
  return lines;
}

// Number of comma-separated fields of a line (without splitting it).
std::int64_t count_fields(std::string_view text) {
  if (trim(text).empty()) return 0;
  std::int64_t n = 1;
  for (const char c : text) n += c == ',';
  if (trim(text.substr(text.rfind(',') + 1)).empty() && text.find(',') != std::string_view::npos)
    --n;  // one trailing comma is allowed
  return n;
}

std::vector<std::int64_t> parse_id_list(const Line& line, const std::string& file,
                                        const char* what) {
  std::vector<std::int64_t> ids;
  for (std::string_view field : split_fields(line.text, ',')) {
    std::int64_t v = 0;
    std::string why;
    if (!parse_int64(field, v, why))
      throw InputError(file, line.number, std::string(what) + ": " + why);
    ids.push_back(v);
  }
  return ids;
}

std::string format_number(double x) {
  if (x == std::floor(x) && std::fabs(x) < 9007199254740992.0)
    return fmt::format("{}", static_cast<std::int64_t>(x));
  return fmt::format("{}", x);
}

}  // namespace

Graph parse_reference_text(std::string_view text, const std::string& file,
                           std::vector<std::string>* warnings, const ReadLimits& limits) {
  std::int64_t overflow_line = 0;
  const std::vector<Line> lines = split_lines(text, 4 + limits.max_ops, &overflow_line);
  if (lines.empty())
    throw InputError(file, 0, "empty file, expected the total block count on line 1");
  std::int64_t total = 0;
  std::string why;
  if (!parse_int64(lines[0].text, total, why))
    throw InputError(file, 1, "total block count: " + why);
  if (total < 0 || total > kMaxBlocks)
    throw InputError(
        file, 1, fmt::format("total block count {} is out of range (0..{})", total, kMaxBlocks));
  // Limits, checked before anything is allocated: ops = T minus the input blocks of line 2.
  const std::int64_t listed_inputs = lines.size() > 1 ? count_fields(lines[1].text) : 0;
  if (total - listed_inputs > limits.max_ops)
    throw InputError(file, 1,
                     fmt::format("total block count {} minus {} input blocks is more than {} ops, "
                                 "the limit (raise it with DOPPLER_MAX_OPS)",
                                 total, listed_inputs, limits.max_ops));
  if (lines.size() < 4)
    throw InputError(file, lines.back().number + 1,
                     fmt::format("truncated file: expected at least 4 header lines (count, "
                                 "inputs, sources, destinations), found {}",
                                 lines.size()));
  if (overflow_line > 0)
    throw InputError(file, overflow_line,
                     fmt::format("more than {} node lines, the limit (raise it with "
                                 "DOPPLER_MAX_OPS)",
                                 limits.max_ops));
  if (count_fields(lines[2].text) > limits.max_edges)
    throw InputError(file, 3,
                     fmt::format("more than {} edges, the limit (raise it with DOPPLER_MAX_EDGES)",
                                 limits.max_edges));

  const auto inputs = parse_id_list(lines[1], file, "input block ids");
  std::unordered_set<std::int64_t> seen;  // sized by the line, not by T
  for (const std::int64_t id : inputs) {
    if (id < 0 || id >= total)
      throw InputError(file, 2,
                       fmt::format("input block id {} is out of range (0..{})", id, total - 1));
    if (!seen.insert(id).second)
      throw InputError(file, 2, fmt::format("input block id {} is listed twice", id));
  }
  const std::int64_t n = total - static_cast<std::int64_t>(inputs.size());

  const auto sources = parse_id_list(lines[2], file, "edge sources");
  const auto dests = parse_id_list(lines[3], file, "edge destinations");
  if (sources.size() != dests.size())
    throw InputError(file, 4,
                     fmt::format("line 3 has {} edge sources but line 4 has {} "
                                 "destinations",
                                 sources.size(), dests.size()));

  const std::int64_t node_lines = static_cast<std::int64_t>(lines.size()) - 4;
  if (node_lines < n)
    throw InputError(file, lines.back().number + 1,
                     fmt::format("truncated file: expected {} node lines (T={} minus {} inputs), "
                                 "found {}",
                                 n, total, inputs.size(), node_lines));
  if (node_lines > n)
    throw InputError(file, lines[static_cast<std::size_t>(4 + n)].number,
                     fmt::format("unexpected line: the header announces {} nodes (T={} minus {} "
                                 "inputs), found {} node lines",
                                 n, total, inputs.size(), node_lines));

  GraphBuilder b;
  for (std::int64_t v = 0; v < n; ++v) {
    const Line& line = lines[static_cast<std::size_t>(4 + v)];
    const auto fields = split_fields(line.text, ',');
    if (fields.size() < 2 || fields.size() > 3)
      throw InputError(file, line.number,
                       fmt::format("node {}: expected 'C,M' or 'C,M,type', found {} field(s)", v,
                                   fields.size()));
    double c = 0, m = 0;
    if (!parse_finite_double(fields[0], c, why))
      throw InputError(file, line.number, fmt::format("node {}: compute cost C: {}", v, why));
    if (!parse_finite_double(fields[1], m, why))
      throw InputError(file, line.number, fmt::format("node {}: transfer cost M: {}", v, why));
    if (c < 0)
      throw InputError(file, line.number,
                       fmt::format("node {}: compute cost C is negative ({})", v, c));
    if (m < 0)
      throw InputError(file, line.number,
                       fmt::format("node {}: transfer cost M is negative ({})", v, m));
    Node node;
    if (fields.size() == 3) {
      const std::string_view type = trim(fields[2]);
      const auto kind = parse_op_kind(type);
      if (!kind)
        throw InputError(file, line.number,
                         fmt::format("node {}: unknown op type {} (expected one of input, "
                                     "formation, complexer, squeezer, fill, select, einsummable)",
                                     v, quote_token(type)));
      node.kind = *kind;
    }
    node.compute_cost = c;
    node.transfer_cost = m;
    b.add_node(std::move(node));
  }
  for (std::size_t i = 0; i < sources.size(); ++i) b.add_edge(sources[i], dests[i]);

  GraphMeta meta;
  meta.origin = "reference-text";
  meta.params["total_blocks"] = std::to_string(total);
  meta.params["input_blocks"] = std::to_string(inputs.size());
  b.set_meta(std::move(meta));
  try {
    Graph g = b.build();
    if (b.duplicates_collapsed() > 0 && warnings)
      warnings->push_back(
          fmt::format("{}: {} duplicate edge(s) collapsed", file, b.duplicates_collapsed()));
    return g;
  } catch (const GraphError& e) {
    std::int64_t line = 0;
    if (e.node() >= 0) line = 5 + e.node();
    if (e.edge() >= 0) {
      const auto k = static_cast<std::size_t>(e.edge());
      line = (sources[k] < 0 || sources[k] >= n) ? 3 : 4;
      if (sources[k] == dests[k]) line = 3;
    }
    throw InputError(file, line, e.problem());
  }
}

std::string format_reference_text(const Graph& g) {
  if (g.has_edge_transfer_costs())
    throw InputError(
        "the graph has per-edge transfer costs, which the reference text format cannot hold "
        "(it has one transfer cost per op); write JSON instead");
  std::vector<NodeId> new_id(static_cast<std::size_t>(g.num_nodes()), -1);
  std::vector<NodeId> inputs;
  NodeId next = 0;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    if (g.node(v).kind == OpKind::input) {
      inputs.push_back(v);
    } else {
      const Node& nd = g.node(v);
      if (!nd.compute_cost || !nd.transfer_cost)
        throw InputError(
            fmt::format("node {} has no reference costs (compute_cost, "
                        "transfer_cost); the reference text format needs them",
                        v));
      new_id[static_cast<std::size_t>(v)] = next++;
    }
  }
  std::string out = fmt::format("{}\n", g.num_nodes());
  for (NodeId v : inputs) out += fmt::format("{}, ", v);
  out += "\n";
  std::string dsts;
  for (const Edge& e : g.edges()) {
    const NodeId s = new_id[static_cast<std::size_t>(e.src)];
    const NodeId d = new_id[static_cast<std::size_t>(e.dst)];
    if (s < 0 || d < 0) continue;
    out += fmt::format("{}, ", s);
    dsts += fmt::format("{}, ", d);
  }
  out += "\n" + dsts + "\n";
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    if (new_id[static_cast<std::size_t>(v)] < 0) continue;
    const Node& nd = g.node(v);
    out += fmt::format("{},{},{}\n", format_number(*nd.compute_cost),
                       format_number(*nd.transfer_cost), op_kind_reference_name(nd.kind));
  }
  return out;
}

}  // namespace doppler
