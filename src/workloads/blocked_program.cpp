// The layout machinery of BlockedProgram: tensors and groups, inputs placed by their first
// reader, region reads, automatic (cached) relayouts, and the final graph with reference costs.
// The tensor operations themselves are in blocked_ops.cpp.
#include "doppler/workloads/blocked_program.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "doppler/util/error.hpp"

namespace doppler::workloads {

namespace {

using Index = std::vector<std::int64_t>;

// FNV-1a of a name, cut to 53 bits so that it is exact as a double attribute.
std::uint64_t name_seed(const std::string& name) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : name) h = (h ^ c) * 0x100000001b3ULL;
  return h & ((1ULL << 53) - 1);
}

}  // namespace

BlockedProgram::BlockedProgram(DType dtype) : dtype_(dtype) {}

double BlockedProgram::bytes_of(double elements) const {
  return elements * dtype_size(dtype_);
}

int BlockedProgram::new_group(double reference_c, bool is_input) {
  group_c_.push_back(reference_c);
  group_input_.push_back(is_input ? 1 : 0);
  return static_cast<int>(group_c_.size()) - 1;
}

void BlockedProgram::reserve_nodes(std::int64_t count, const std::string& what) const {
  if (static_cast<std::int64_t>(num_nodes()) + count > kMaxNodes)
    throw InputError(
        fmt::format("{}: the partitioning would create more than {} blocks", what, kMaxNodes));
}

BlockedTensor& BlockedProgram::new_tensor(const std::string& name, std::vector<std::int64_t> shape,
                                          std::vector<Cuts> cuts, double reference_c,
                                          bool is_input) {
  double elements = 1;
  for (auto e : shape) {
    if (e < 1) throw InputError(fmt::format("tensor '{}' has an empty dimension", name));
    if (e > (std::int64_t{1} << 31))
      throw InputError(fmt::format("tensor '{}': extent {} exceeds 2^31", name, e));
    elements *= static_cast<double>(e);
  }
  if (elements > 0x1.0p62) throw InputError(fmt::format("tensor '{}' is too large", name));
  for (std::size_t d = 0; d < cuts.size(); ++d)
    if (cuts[d].size() < 2 || cuts[d].front() != 0 || cuts[d].back() != shape[d])
      throw std::logic_error("bad cuts for tensor " + name);
  BlockedTensor& t = tensors_.emplace_back();
  t.id = static_cast<int>(tensors_.size()) - 1;
  t.name = name;
  t.shape = std::move(shape);
  t.cuts = std::move(cuts);
  t.group = new_group(reference_c, is_input);
  return t;
}

NodeId BlockedProgram::add_block(Node node) {
  node.out_bytes = bytes_of(static_cast<double>(node.exec->numel()));
  std::map<NodeId, double> reads;  // producer -> bytes read (largest region when read twice)
  for (const ExecInput& in : node.exec->inputs) {
    const ExecDesc& src = *builder_.node(in.src).exec;
    const std::int64_t n = in.shape.empty() ? src.numel() : product(in.shape);
    double& b = reads[in.src];
    b = std::max(b, bytes_of(static_cast<double>(n)));
  }
  const NodeId v = builder_.add_node(std::move(node));
  for (const auto& [src, bytes] : reads) builder_.add_edge(src, v, bytes);
  return v;
}

// Kernel `op` for the block of `t` at grid index `idx`: origin and shape from t's cuts.
ExecDesc BlockedProgram::block_desc(const BlockedTensor& t, const Index& idx, std::string op) {
  ExecDesc x;
  x.op = std::move(op);
  for (std::size_t d = 0; d < idx.size(); ++d) {
    const auto lo = t.cuts[d][static_cast<std::size_t>(idx[d])];
    x.origin.push_back(lo);
    x.shape.push_back(t.cuts[d][static_cast<std::size_t>(idx[d]) + 1] - lo);
  }
  return x;
}

// Adds block `idx` of `t` (named name[idx], in t's group) running `x`, and records it in t.
void BlockedProgram::add_tensor_block(BlockedTensor& t, const Index& idx, ExecDesc x, OpKind kind,
                                      double flops) {
  Node n;
  n.name = block_name(t.name, idx);
  n.kind = kind;
  n.group = t.group;
  n.flops = flops;
  n.exec = std::move(x);
  t.blocks.push_back(add_block(std::move(n)));
}

ExecInput BlockedProgram::read(const BlockedTensor& t, const Region& r) const {
  ExecInput in;
  Index idx(t.shape.size()), offset(t.shape.size()), shape(t.shape.size());
  bool whole = true;
  for (std::size_t d = 0; d < t.shape.size(); ++d) {
    const auto b = t.block_index(static_cast<int>(d), r.lo[d]);
    const auto blo = t.cuts[d][static_cast<std::size_t>(b)];
    const auto bhi = t.cuts[d][static_cast<std::size_t>(b) + 1];
    if (r.hi[d] > bhi || r.lo[d] >= r.hi[d])
      throw std::logic_error("region spans several blocks of " + t.name);
    idx[d] = b;
    offset[d] = r.lo[d] - blo;
    shape[d] = r.hi[d] - r.lo[d];
    whole = whole && r.lo[d] == blo && r.hi[d] == bhi;
  }
  in.src = t.block(idx);
  if (!whole) {
    in.offset = std::move(offset);
    in.shape = std::move(shape);
  }
  return in;
}

void BlockedProgram::materialize_input(BlockedTensor& t, std::vector<Cuts> cuts) {
  t.cuts = std::move(cuts);
  const Index grid = t.grid();
  reserve_nodes(product(grid), "input " + t.name);
  const InputInfo& info = inputs_.at(t.id);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, info.constant >= 0 ? "load" : "input");
    if (info.constant >= 0)
      x.attrs = {{"tensor", info.constant}};
    else
      x.attrs = {{"seed", info.seed}, {"scale", info.scale}, {"offset", info.offset}};
    add_tensor_block(t, idx, std::move(x), OpKind::input);
  });
}

const BlockedTensor& BlockedProgram::input(const std::string& name, std::vector<std::int64_t> shape,
                                           double scale, double offset, std::vector<Cuts> cuts) {
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(std::max<std::int64_t>(e, 1));
  BlockedTensor& t = new_tensor(name, std::move(shape), {}, elements, true);
  inputs_[t.id] = {static_cast<double>(name_seed(name)), scale, offset};
  if (!cuts.empty()) {
    if (cuts.size() != t.shape.size()) throw std::logic_error("input cuts rank");
    materialize_input(t, std::move(cuts));
  }
  return t;
}

const BlockedTensor& BlockedProgram::constant(const std::string& name,
                                              std::vector<std::int64_t> shape, int index) {
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(std::max<std::int64_t>(e, 1));
  BlockedTensor& t = new_tensor(name, std::move(shape), {}, elements, true);
  inputs_[t.id] = {0, 1, 0, index};
  return t;
}

const BlockedTensor& BlockedProgram::placed(const BlockedTensor& t) {
  if (!t.blocks.empty()) return t;
  return ensure_layout(t, std::vector<std::optional<Cuts>>(t.shape.size()));
}

const BlockedTensor& BlockedProgram::input_seeded(const std::string& name,
                                                  std::vector<std::int64_t> shape,
                                                  std::uint64_t seed, double scale, double offset) {
  if (seed >= (std::uint64_t{1} << 53)) throw InputError("input seeds must be below 2^53");
  const BlockedTensor& t = input(name, std::move(shape), scale, offset);
  inputs_[t.id].seed = static_cast<double>(seed);
  return t;
}

const BlockedTensor& BlockedProgram::ensure_layout(
    const BlockedTensor& t, const std::vector<std::optional<Cuts>>& required) {
  BlockedTensor& mt = tensors_[static_cast<std::size_t>(t.id)];
  if (mt.blocks.empty()) {  // an input read for the first time: take the layout it needs
    std::vector<Cuts> cuts;
    for (std::size_t d = 0; d < mt.shape.size(); ++d)
      cuts.push_back(required[d] ? *required[d] : Cuts{0, mt.shape[d]});
    materialize_input(mt, std::move(cuts));
    return mt;
  }
  bool ok = true;
  std::vector<Cuts> target = mt.cuts;
  for (std::size_t d = 0; d < mt.shape.size(); ++d)
    if (required[d] && !cuts_refine(*required[d], mt.cuts[d])) {
      ok = false;
      target[d] = *required[d];
    }
  return ok ? mt : relayout(mt, target);
}

const BlockedTensor& BlockedProgram::relayout(const BlockedTensor& a,
                                              const std::vector<Cuts>& cuts) {
  if (a.blocks.empty()) throw std::logic_error("relayout of an unplaced input " + a.name);
  const auto key = std::make_pair(a.id, cuts);
  if (auto it = relayouts_.find(key); it != relayouts_.end())
    return tensors_[static_cast<std::size_t>(it->second)];
  const auto aid = a.id;
  BlockedTensor& t =
      new_tensor("relayout:" + a.name, a.shape, cuts, static_cast<double>(a.numel()));
  const BlockedTensor& src = tensors_[static_cast<std::size_t>(aid)];
  const Index grid = t.grid();
  reserve_nodes(product(grid), "relayout of " + src.name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x;
    x.op = "assemble";
    Index first(idx.size()), pieces(idx.size());
    for (std::size_t d = 0; d < idx.size(); ++d) {
      const auto lo = t.cuts[d][static_cast<std::size_t>(idx[d])];
      const auto hi = t.cuts[d][static_cast<std::size_t>(idx[d]) + 1];
      x.origin.push_back(lo);
      x.shape.push_back(hi - lo);
      first[d] = src.block_index(static_cast<int>(d), lo);
      pieces[d] = src.block_index(static_cast<int>(d), hi - 1) - first[d] + 1;
    }
    for_each_index(pieces, [&](const Index& p) {
      Region r;
      for (std::size_t d = 0; d < idx.size(); ++d) {
        const auto b = static_cast<std::size_t>(first[d] + p[d]);
        r.lo.push_back(std::max(src.cuts[d][b], x.origin[d]));
        r.hi.push_back(std::min(src.cuts[d][b + 1], x.origin[d] + x.shape[d]));
      }
      x.inputs.push_back(read(src, r));
    });
    Node n;
    n.name = block_name(t.name, idx);
    n.kind = OpKind::aggregate;
    n.group = t.group;
    n.exec = std::move(x);
    t.blocks.push_back(add_block(std::move(n)));
  });
  relayouts_[key] = t.id;
  return t;
}

LabelCuts BlockedProgram::label_cuts(const BlockedTensor& t, const std::string& labels) {
  if (t.blocks.empty()) throw std::logic_error("label_cuts of an unplaced input " + t.name);
  if (static_cast<int>(labels.size()) != t.rank()) throw std::logic_error("label_cuts rank");
  LabelCuts out;
  for (std::size_t d = 0; d < labels.size(); ++d) out[labels[d]] = t.cuts[d];
  return out;
}

Graph BlockedProgram::build(GraphMeta meta) {
  for (NodeId v = 0; v < builder_.num_nodes(); ++v) {
    Node& n = builder_.node(v);
    const auto g = static_cast<std::size_t>(n.group);
    n.compute_cost = group_input_[g] ? 0.0 : group_c_[g];
    n.transfer_cost = 4 * group_c_[g];
  }
  builder_.set_meta(std::move(meta));
  Graph g = builder_.build();
  tensors_.clear();
  inputs_.clear();
  group_c_.clear();
  group_input_.clear();
  relayouts_.clear();
  return g;
}

}  // namespace doppler::workloads
