#include "doppler/graph/graph.hpp"

#include <algorithm>
#include <string>

#include "doppler/util/error.hpp"

namespace doppler {

double Graph::edge_bytes(EdgeId e) const {
  const Edge& ed = edge(e);
  return ed.bytes ? *ed.bytes : node(ed.src).out_bytes;
}

double Graph::edge_transfer_cost(EdgeId e) const {
  const Edge& ed = edge(e);
  return ed.transfer_cost ? *ed.transfer_cost : node(ed.src).transfer_cost.value_or(0.0);
}

double Graph::max_out_transfer_cost(NodeId v) const {
  double m = 0;
  const auto degree = static_cast<EdgeId>(successors(v).size());
  for (EdgeId e = out_edge_begin(v); e < out_edge_begin(v) + degree; ++e)
    m = std::max(m, edge_transfer_cost(e));
  return m;
}

std::span<const NodeId> Graph::successors(NodeId v) const {
  const auto b = static_cast<std::size_t>(succ_offset_[static_cast<std::size_t>(v)]);
  const auto e = static_cast<std::size_t>(succ_offset_[static_cast<std::size_t>(v) + 1]);
  return {succ_.data() + b, e - b};
}

std::span<const NodeId> Graph::predecessors(NodeId v) const {
  const auto b = static_cast<std::size_t>(pred_offset_[static_cast<std::size_t>(v)]);
  const auto e = static_cast<std::size_t>(pred_offset_[static_cast<std::size_t>(v) + 1]);
  return {pred_.data() + b, e - b};
}

std::span<const EdgeId> Graph::in_edges(NodeId v) const {
  const auto b = static_cast<std::size_t>(pred_offset_[static_cast<std::size_t>(v)]);
  const auto e = static_cast<std::size_t>(pred_offset_[static_cast<std::size_t>(v) + 1]);
  return {pred_edge_.data() + b, e - b};
}

EdgeId Graph::find_edge(NodeId u, NodeId v) const {
  const auto succ = successors(u);
  const auto it = std::lower_bound(succ.begin(), succ.end(), v);
  if (it == succ.end() || *it != v) return -1;
  return out_edge_begin(u) + static_cast<EdgeId>(it - succ.begin());
}

std::string Graph::label(NodeId v) const {
  const Node& n = node(v);
  return n.name.empty() ? "#" + std::to_string(v) : n.name;
}

const std::vector<ConstantTensor>& Graph::constants() const {
  static const std::vector<ConstantTensor> kNone;
  return constants_ ? *constants_ : kNone;
}

void Graph::set_constants(std::vector<ConstantTensor> constants) {
  for (std::size_t t = 0; t < constants.size(); ++t) {
    const ConstantTensor& c = constants[t];
    const std::string what = "constant " + std::to_string(t) + " ('" + c.name + "')";
    bool zero = false;
    for (auto e : c.shape) {
      if (e < 0) throw InputError(what + ": negative extent " + std::to_string(e));
      zero = zero || e == 0;
    }
    // The product of the extents, stopping as soon as it exceeds the value count (no overflow).
    const std::size_t have = c.values.size();
    std::size_t want = zero ? 0 : 1;
    bool above = false;
    for (auto e : c.shape) {
      if (zero || above) break;
      const auto ue = static_cast<std::size_t>(e);
      if (want > have / ue)
        above = true;
      else
        want *= ue;
    }
    if (above || want != have)
      throw InputError(what + ": " + std::to_string(have) +
                       " values do not match the product of its shape");
  }
  if (constants.empty())
    constants_.reset();
  else
    constants_ = std::make_shared<const std::vector<ConstantTensor>>(std::move(constants));
}

}  // namespace doppler
