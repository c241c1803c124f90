#include "tensor_save.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "doppler/util/error.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::cli {

namespace {

constexpr std::size_t kNamesListed = 12;

// "a, b, c, ... (N tensors)": the graph's tensor names (without "agg:"), user tensors first.
std::string tensor_names(const Graph& g) {
  std::set<std::string> user, internal;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    auto t = tensor_of_label(g.node(v).name);
    if (!t) continue;
    if (t->starts_with("agg:")) t->erase(0, 4);
    (t->starts_with("relayout:") ? internal : user).insert(*t);
  }
  std::vector<std::string> all(user.begin(), user.end());
  all.insert(all.end(), internal.begin(), internal.end());
  if (all.empty()) return "the graph has no labelled tensor blocks";
  const std::size_t shown = std::min(all.size(), kNamesListed);
  std::string list = fmt::format("{}", fmt::join(all.begin(), all.begin() + shown, ", "));
  if (shown < all.size()) list += fmt::format(", ... ({} tensors)", all.size());
  return "tensors: " + list;
}

}  // namespace

TensorSave parse_tensor_save(const std::string& spec) {
  const auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw InputError(fmt::format("--save: expected NAME=FILE.npy, found {}", quote_token(spec)));
  return {spec.substr(0, eq), spec.substr(eq + 1)};
}

std::optional<std::string> tensor_of_label(const std::string& label) {
  if (label.empty() || label.back() != ']') return std::nullopt;
  const auto open = label.rfind('[');
  if (open == std::string::npos || open == 0) return std::nullopt;
  bool digit = false;  // whether the current index has a digit
  for (std::size_t i = open + 1; i + 1 < label.size(); ++i) {
    const char c = label[i];
    if (c >= '0' && c <= '9') {
      digit = true;
    } else if (c == ',' && digit) {
      digit = false;
    } else {
      return std::nullopt;
    }
  }
  if (!digit && open + 2 != label.size()) return std::nullopt;  // "x[1,]"
  return label.substr(0, open);
}

TensorBlocks find_tensor_blocks(const Graph& g, const std::string& name,
                                const std::string& graph_file) {
  TensorBlocks t;
  t.name = name;
  std::vector<NodeId> plain, agg;
  const std::string agg_name = "agg:" + name;
  for (NodeId v = 0; v < g.num_nodes(); ++v) {
    const auto tn = tensor_of_label(g.node(v).name);
    if (!tn) continue;
    if (*tn == agg_name) agg.push_back(v);
    if (*tn == name) plain.push_back(v);
  }
  t.blocks = agg.empty() ? std::move(plain) : std::move(agg);
  if (t.blocks.empty())
    throw InputError(
        graph_file, 0,
        fmt::format("--save: no tensor '{}' in the graph ({})", name, tensor_names(g)));
  std::size_t rank = 0;
  for (std::size_t i = 0; i < t.blocks.size(); ++i) {
    const Node& n = g.node(t.blocks[i]);
    if (!n.exec)
      throw InputError(graph_file, 0,
                       fmt::format("--save {}: block {} has no exec description", name, n.name));
    const ExecDesc& x = *n.exec;
    if (i == 0) rank = x.shape.size();
    if (x.shape.size() != rank || x.origin.size() != rank)
      throw std::runtime_error(
          fmt::format("--save {}: block {} has origin/shape of rank {}/{}, other blocks rank {}",
                      name, n.name, x.origin.size(), x.shape.size(), rank));
    for (std::size_t d = 0; d < rank; ++d)
      if (x.origin[d] < 0 || x.shape[d] < 0)
        throw std::runtime_error(
            fmt::format("--save {}: block {} has a negative origin or extent", name, n.name));
  }
  t.shape.assign(rank, 0);
  for (const NodeId v : t.blocks) {
    const ExecDesc& x = *g.node(v).exec;
    for (std::size_t d = 0; d < rank; ++d)
      t.shape[d] = std::max(t.shape[d], x.origin[d] + x.shape[d]);
  }
  // Exact tiling: the blocks' volumes add up to the full volume and no two blocks overlap.
  const auto volume = [](const std::vector<std::int64_t>& s) {
    long double n = 1;
    for (const auto e : s) n *= static_cast<long double>(e);
    return n;
  };
  long double covered = 0;
  for (const NodeId v : t.blocks) covered += volume(g.node(v).exec->shape);
  const auto overlap = [&](const ExecDesc& a, const ExecDesc& b) {
    for (std::size_t d = 0; d < rank; ++d)
      if (a.origin[d] >= b.origin[d] + b.shape[d] || b.origin[d] >= a.origin[d] + a.shape[d])
        return false;
    return true;
  };
  for (std::size_t i = 0; i < t.blocks.size(); ++i)
    for (std::size_t j = i + 1; j < t.blocks.size(); ++j)
      if (overlap(*g.node(t.blocks[i]).exec, *g.node(t.blocks[j]).exec))
        throw std::runtime_error(fmt::format("--save {}: blocks {} and {} overlap", name,
                                             g.node(t.blocks[i]).name, g.node(t.blocks[j]).name));
  if (covered != volume(t.shape))
    throw std::runtime_error(fmt::format(
        "--save {}: the {} blocks do not tile the tensor of shape [{}] ({} of {} elements "
        "covered)",
        name, t.blocks.size(), fmt::join(t.shape, ", "), static_cast<double>(covered),
        static_cast<double>(volume(t.shape))));
  return t;
}

std::vector<float> assemble_tensor(const Graph& g, const TensorBlocks& t,
                                   const std::function<std::span<const float>(NodeId)>& output) {
  const std::size_t rank = t.shape.size();
  std::size_t total = 1;
  for (const auto e : t.shape) total *= static_cast<std::size_t>(e);
  std::vector<float> out(total);
  // Row-major strides of the full tensor.
  std::vector<std::size_t> stride(rank, 1);
  for (std::size_t d = rank; d-- > 1;)
    stride[d - 1] = stride[d] * static_cast<std::size_t>(t.shape[d]);
  for (const NodeId v : t.blocks) {
    const ExecDesc& x = *g.node(v).exec;
    const std::span<const float> src = output(v);
    if (static_cast<std::int64_t>(src.size()) != x.numel())
      throw std::runtime_error(fmt::format("--save {}: block {} produced {} values, expected {}",
                                           t.name, g.node(v).name, src.size(), x.numel()));
    if (src.empty()) continue;
    // Copy the block row by row (rows along the last dimension).
    const std::size_t row = rank == 0 ? 1 : static_cast<std::size_t>(x.shape[rank - 1]);
    std::vector<std::int64_t> idx(rank, 0);  // index within the block, last dimension 0
    for (std::size_t at = 0; at < src.size(); at += row) {
      std::size_t dst = 0;
      for (std::size_t d = 0; d < rank; ++d)
        dst += static_cast<std::size_t>(x.origin[d] + idx[d]) * stride[d];
      std::copy_n(src.begin() + static_cast<std::ptrdiff_t>(at), row,
                  out.begin() + static_cast<std::ptrdiff_t>(dst));
      for (std::size_t d = rank == 0 ? 0 : rank - 1; d-- > 0;) {
        if (++idx[d] < x.shape[d]) break;
        idx[d] = 0;
      }
    }
  }
  return out;
}

}  // namespace doppler::cli
