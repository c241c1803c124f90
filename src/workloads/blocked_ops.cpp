// The tensor operations of BlockedProgram: einsum, elementwise map, last-axis reduction, fill
// and select (the layout machinery is in blocked_program.cpp).
#include <algorithm>
#include <stdexcept>

#include "doppler/workloads/blocked_program.hpp"
#include "doppler/workloads/kernels.hpp"

namespace doppler::workloads {

namespace {

using Index = std::vector<std::int64_t>;

const KernelInfo& kernel(const std::string& op) {
  const KernelInfo* k = find_kernel(op);
  if (!k) throw std::logic_error("unknown kernel " + op);
  return *k;
}

}  // namespace

const BlockedTensor& BlockedProgram::einsum(const std::string& name, const std::string& spec,
                                            const std::vector<const BlockedTensor*>& operands,
                                            const LabelCuts& cuts) {
  const auto arrow = spec.find("->");
  if (arrow == std::string::npos) throw std::logic_error("einsum spec without ->: " + spec);
  const std::string out_labels = spec.substr(arrow + 2);
  std::vector<std::string> in_labels;
  for (std::size_t start = 0;;) {
    const auto comma = spec.find(',', start);
    const auto end = comma == std::string::npos || comma > arrow ? arrow : comma;
    in_labels.push_back(spec.substr(start, end - start));
    if (end == arrow) break;
    start = end + 1;
  }
  if (in_labels.size() != operands.size()) throw std::logic_error("einsum arity: " + spec);
  std::map<char, std::int64_t> extent;
  std::string contracted;
  for (std::size_t j = 0; j < operands.size(); ++j) {
    const std::string& ls = in_labels[j];
    if (static_cast<int>(ls.size()) != operands[j]->rank())
      throw std::logic_error("einsum rank mismatch: " + spec);
    for (std::size_t d = 0; d < ls.size(); ++d) {
      const char l = ls[d];
      if (ls.find(l) != d) throw std::logic_error("repeated label in operand: " + spec);
      const auto e = operands[j]->shape[d];
      if (auto it = extent.find(l); it != extent.end() && it->second != e)
        throw std::logic_error("einsum extent mismatch: " + spec);
      if (!extent.count(l) && out_labels.find(l) == std::string::npos) contracted += l;
      extent[l] = e;
    }
  }
  for (std::size_t d = 0; d < out_labels.size(); ++d)
    if (!extent.count(out_labels[d]) || out_labels.find(out_labels[d]) != d)
      throw std::logic_error("bad einsum output labels: " + spec);
  std::map<char, Cuts> lc;
  for (const auto& [l, e] : extent) {
    auto it = cuts.find(l);
    lc[l] = it == cuts.end() ? Cuts{0, e} : it->second;
    if (lc[l].front() != 0 || lc[l].back() != e) throw std::logic_error("bad label cuts");
  }
  // Operands in the layout the iteration space needs.
  std::vector<const BlockedTensor*> ops;
  for (std::size_t j = 0; j < operands.size(); ++j) {
    std::vector<std::optional<Cuts>> req;
    for (char l : in_labels[j]) req.emplace_back(lc[l]);
    ops.push_back(&ensure_layout(*operands[j], req));
  }
  double join = 1;
  for (const auto& [l, e] : extent) join *= static_cast<double>(e);
  std::vector<std::int64_t> shape;
  std::vector<Cuts> out_cuts;
  for (char l : out_labels) {
    shape.push_back(extent[l]);
    out_cuts.push_back(lc[l]);
  }
  std::string split;  // contracted labels with more than one block
  for (char l : contracted)
    if (lc[l].size() > 2) split += l;
  Index kgrid;
  for (char l : split) kgrid.push_back(static_cast<std::int64_t>(lc[l].size()) - 1);
  const std::int64_t k = product(kgrid);
  const int partial_group = k > 1 ? new_group(join, false) : -1;
  double out_elements = 1;
  for (auto e : shape) out_elements *= static_cast<double>(e);
  BlockedTensor& t = new_tensor(name, shape, out_cuts, k > 1 ? out_elements : join);
  const Index grid = t.grid();
  reserve_nodes(product(grid) * (k > 1 ? k + 1 : 1), name);
  for_each_index(grid, [&](const Index& oidx) {
    std::map<char, std::int64_t> at;  // block index of every label
    for (char l : contracted) at[l] = 0;
    for (std::size_t d = 0; d < out_labels.size(); ++d) at[out_labels[d]] = oidx[d];
    ExecDesc out;
    for (std::size_t d = 0; d < out_labels.size(); ++d) {
      const Cuts& c = lc[out_labels[d]];
      out.origin.push_back(c[static_cast<std::size_t>(oidx[d])]);
      out.shape.push_back(c[static_cast<std::size_t>(oidx[d]) + 1] - out.origin.back());
    }
    std::vector<NodeId> partials;
    for_each_index(kgrid, [&](const Index& kidx) {
      for (std::size_t i = 0; i < split.size(); ++i) at[split[i]] = kidx[i];
      ExecDesc x;
      x.op = "einsum";
      x.einsum = spec;
      x.shape = out.shape;
      x.origin = out.origin;
      double points = 1;
      for (const auto& [l, e] : extent) {
        const Cuts& c = lc[l];
        const auto b = static_cast<std::size_t>(at[l]);
        points *= static_cast<double>(c[b + 1] - c[b]);
      }
      for (std::size_t j = 0; j < ops.size(); ++j) {
        Region r;
        for (char l : in_labels[j]) {
          const Cuts& c = lc[l];
          const auto b = static_cast<std::size_t>(at[l]);
          r.lo.push_back(c[b]);
          r.hi.push_back(c[b + 1]);
        }
        x.inputs.push_back(read(*ops[j], r));
      }
      Node n;
      Index full = oidx;
      full.insert(full.end(), kidx.begin(), kidx.end());
      n.name = block_name(name, full);
      n.kind = OpKind::einsum;
      n.group = k > 1 ? partial_group : t.group;
      n.flops = 2 * points;
      n.exec = std::move(x);
      partials.push_back(add_block(std::move(n)));
    });
    if (k == 1) {
      t.blocks.push_back(partials.front());
      return;
    }
    ExecDesc x = out;
    x.op = "sum";
    for (NodeId p : partials) x.inputs.push_back({p, {}, {}});
    Node n;
    n.name = block_name("agg:" + name, oidx);
    n.kind = OpKind::aggregate;
    n.group = t.group;
    n.flops = static_cast<double>(k - 1) * static_cast<double>(x.numel());
    n.exec = std::move(x);
    t.blocks.push_back(add_block(std::move(n)));
  });
  return t;
}

const BlockedTensor& BlockedProgram::map(const std::string& name, const std::string& op,
                                         const std::vector<const BlockedTensor*>& operands,
                                         const std::vector<Cuts>& cuts, Attrs attrs) {
  const KernelInfo& kern = kernel(op);
  if (kern.kind != OpKind::elementwise || kern.arity != static_cast<int>(operands.size()))
    throw std::logic_error("map: not an elementwise kernel of this arity: " + op);
  std::size_t rank = 0;
  for (const auto* o : operands) rank = std::max(rank, o->shape.size());
  std::vector<std::int64_t> shape(rank, 1);
  for (const auto* o : operands) {
    const std::size_t off = rank - o->shape.size();
    for (std::size_t d = 0; d < o->shape.size(); ++d) {
      const auto e = o->shape[d];
      auto& s = shape[off + d];
      if (e != 1 && s != 1 && s != e) throw std::logic_error("map: shapes do not broadcast");
      if (e != 1) s = e;
    }
  }
  return broadcast_op(name, op, operands, shape, cuts, std::move(attrs));
}

const BlockedTensor& BlockedProgram::cell(const std::string& name, const std::string& op,
                                          const std::vector<const BlockedTensor*>& operands,
                                          std::vector<std::int64_t> shape,
                                          const std::vector<Cuts>& cuts, double flops_per_element) {
  const KernelInfo& kern = kernel(op);
  const std::size_t rank = shape.size();
  if (rank == 0 || cuts.size() != rank || cuts.back().size() != 2)
    throw std::logic_error(op + ": the hidden units (last dimension) must be whole");
  std::vector<const BlockedTensor*> ops;
  for (const auto* o : operands) {
    if (o->shape.size() != rank) throw std::logic_error(op + ": operand rank");
    std::vector<std::optional<Cuts>> req;
    for (std::size_t d = 0; d + 1 < rank; ++d) {
      if (o->shape[d] != 1 && o->shape[d] != shape[d])
        throw std::logic_error(op + ": operand rows differ from the output's");
      req.emplace_back(o->shape[d] == 1 && shape[d] != 1 ? std::nullopt
                                                         : std::optional<Cuts>(cuts[d]));
    }
    req.emplace_back(Cuts{0, o->shape.back()});
    ops.push_back(&ensure_layout(*o, req));
  }
  BlockedTensor& t = new_tensor(name, shape, cuts, static_cast<double>(product(shape)));
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, op);
    for (const auto* o : ops) {
      Region r;
      for (std::size_t d = 0; d + 1 < rank; ++d) {
        const bool bcast = o->shape[d] == 1 && shape[d] != 1;
        r.lo.push_back(bcast ? 0 : x.origin[d]);
        r.hi.push_back(bcast ? 1 : x.origin[d] + x.shape[d]);
      }
      r.lo.push_back(0);
      r.hi.push_back(o->shape.back());
      x.inputs.push_back(read(*o, r));
    }
    const double flops = flops_per_element * static_cast<double>(x.numel());
    add_tensor_block(t, idx, std::move(x), kern.kind, flops);
  });
  return t;
}

const BlockedTensor& BlockedProgram::expand(const std::string& name, const BlockedTensor& a,
                                            std::vector<std::int64_t> shape,
                                            const std::vector<Cuts>& cuts) {
  if (a.shape.size() > shape.size()) throw std::logic_error("expand: rank above the output's");
  const std::size_t off = shape.size() - a.shape.size();
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] != 1 && a.shape[d] != shape[off + d])
      throw std::logic_error("expand: shapes do not broadcast");
  return broadcast_op(name, "expand", {&a}, std::move(shape), cuts, {});
}

// The blocks of an elementwise kernel or an expand: each reads, per operand, the region of its
// block (index 0 on the dimensions the operand broadcasts), the operand laid out to nest.
const BlockedTensor& BlockedProgram::broadcast_op(const std::string& name, const std::string& op,
                                                  const std::vector<const BlockedTensor*>& operands,
                                                  std::vector<std::int64_t> shape,
                                                  const std::vector<Cuts>& cuts, Attrs attrs) {
  const KernelInfo& kern = kernel(op);
  const std::size_t rank = shape.size();
  if (cuts.size() != rank) throw std::logic_error(op + ": cuts rank");
  std::vector<const BlockedTensor*> ops;
  for (const auto* o : operands) {
    const std::size_t off = rank - o->shape.size();
    std::vector<std::optional<Cuts>> req;
    for (std::size_t d = 0; d < o->shape.size(); ++d)
      if (o->shape[d] == 1 && shape[off + d] != 1)
        req.emplace_back(std::nullopt);
      else
        req.emplace_back(cuts[off + d]);
    ops.push_back(&ensure_layout(*o, req));
  }
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(e);
  BlockedTensor& t = new_tensor(name, shape, cuts, elements);
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, op);
    for (const auto* o : ops) {
      const std::size_t off = rank - o->shape.size();
      Region r;
      for (std::size_t d = 0; d < o->shape.size(); ++d) {
        const bool bcast = o->shape[d] == 1 && shape[off + d] != 1;
        r.lo.push_back(bcast ? 0 : x.origin[off + d]);
        r.hi.push_back(bcast ? 1 : x.origin[off + d] + x.shape[off + d]);
      }
      x.inputs.push_back(read(*o, r));
    }
    x.attrs = attrs;
    const double flops = kern.flops_per_element * static_cast<double>(x.numel());
    add_tensor_block(t, idx, std::move(x), kern.kind, flops);
  });
  return t;
}

const BlockedTensor& BlockedProgram::reduce(const std::string& name, const std::string& op,
                                            const BlockedTensor& a, Attrs attrs) {
  const KernelInfo& kern = kernel(op);
  if (op.rfind("reduce_", 0) != 0) throw std::logic_error("reduce: not a reduction: " + op);
  if (a.blocks.empty() || a.rank() == 0)
    throw std::logic_error("reduce of an unplaced input " + a.name);
  const auto aid = a.id;
  const std::size_t last = a.shape.size() - 1;
  const std::int64_t k = static_cast<std::int64_t>(a.cuts[last].size()) - 1;
  if (op == "reduce_argmax" && k > 1)
    throw std::logic_error("reduce_argmax of a last axis in " + std::to_string(k) + " blocks");
  std::vector<std::int64_t> shape = a.shape;
  shape[last] = 1;
  std::vector<Cuts> cuts = a.cuts;
  cuts[last] = {0, 1};
  const double in_elements = static_cast<double>(a.numel());
  const int partial_group = k > 1 ? new_group(in_elements, false) : -1;
  BlockedTensor& t = new_tensor(
      name, shape, cuts, k > 1 ? in_elements / static_cast<double>(a.shape[last]) : in_elements);
  const BlockedTensor& src = tensors_[static_cast<std::size_t>(aid)];
  Index grid = src.grid();
  grid[last] = 1;
  reserve_nodes(product(grid) * (k > 1 ? k + 1 : 1), name);
  for_each_index(grid, [&](const Index& oidx) {
    std::vector<NodeId> partials;
    ExecDesc out;
    for (std::size_t d = 0; d < shape.size(); ++d) {
      const auto lo = d == last ? 0 : src.cuts[d][static_cast<std::size_t>(oidx[d])];
      out.origin.push_back(lo);
      out.shape.push_back(d == last ? 1 : src.cuts[d][static_cast<std::size_t>(oidx[d]) + 1] - lo);
    }
    for (std::int64_t c = 0; c < k; ++c) {
      Index aidx = oidx;
      aidx[last] = c;
      const NodeId in = src.block(aidx);
      ExecDesc x = out;
      x.op = op;
      x.attrs = attrs;
      x.inputs.push_back({in, {}, {}});
      Node n;
      n.name = block_name(name, k > 1 ? aidx : oidx);
      n.kind = kern.kind;
      n.group = k > 1 ? partial_group : t.group;
      n.flops = kern.flops_per_element * static_cast<double>(builder_.node(in).exec->numel());
      n.exec = std::move(x);
      partials.push_back(add_block(std::move(n)));
    }
    if (k == 1) {
      t.blocks.push_back(partials.front());
      return;
    }
    ExecDesc x = out;
    x.op = op == "reduce_max" ? "max" : "sum";
    for (NodeId p : partials) x.inputs.push_back({p, {}, {}});
    Node n;
    n.name = block_name("agg:" + name, oidx);
    n.kind = OpKind::aggregate;
    n.group = t.group;
    n.flops = static_cast<double>(k - 1) * static_cast<double>(x.numel());
    n.exec = std::move(x);
    t.blocks.push_back(add_block(std::move(n)));
  });
  return t;
}

const BlockedTensor& BlockedProgram::topk(const std::string& name, const BlockedTensor& a,
                                          std::int64_t k, bool largest, bool indices) {
  if (a.rank() == 0 || k < 1 || k > a.shape.back())
    throw std::logic_error("topk: k outside 1 .. the last extent of " + a.name);
  const std::size_t last = a.shape.size() - 1;
  std::vector<std::optional<Cuts>> req(a.shape.size());
  req[last] = Cuts{0, a.shape[last]};
  const BlockedTensor& src = ensure_layout(a, req);
  const auto sid = src.id;
  std::vector<std::int64_t> shape = src.shape;
  shape[last] = k;
  std::vector<Cuts> cuts = src.cuts;
  cuts[last] = {0, k};
  const auto elements = static_cast<double>(product(shape));
  BlockedTensor& t = new_tensor(name, std::move(shape), std::move(cuts), elements);
  const BlockedTensor& in = tensors_[static_cast<std::size_t>(sid)];
  reserve_nodes(product(t.grid()), name);
  for_each_index(t.grid(), [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "topk");
    x.attrs = {{"largest", largest ? 1.0 : 0.0}, {"indices", indices ? 1.0 : 0.0}};
    const NodeId b = in.block(idx);
    x.inputs.push_back({b, {}, {}});
    const double flops =
        static_cast<double>(k) * static_cast<double>(builder_.node(b).exec->numel());
    add_tensor_block(t, idx, std::move(x), OpKind::einsum, flops);
  });
  return t;
}

const BlockedTensor& BlockedProgram::fill(const std::string& name, std::vector<std::int64_t> shape,
                                          std::vector<Cuts> cuts, Attrs attrs) {
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(e);
  BlockedTensor& t = new_tensor(name, std::move(shape), std::move(cuts), elements);
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "fill");
    x.attrs = attrs;
    add_tensor_block(t, idx, std::move(x), OpKind::fill);
  });
  return t;
}

const BlockedTensor& BlockedProgram::select(const std::string& name, const BlockedTensor& a,
                                            std::vector<std::int64_t> offset,
                                            std::vector<std::int64_t> shape,
                                            std::vector<Cuts> cuts) {
  if (offset.size() != a.shape.size() || shape.size() != a.shape.size() ||
      cuts.size() != a.shape.size())
    throw std::logic_error("select: rank mismatch");
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    if (offset[d] < 0 || offset[d] + shape[d] > a.shape[d])
      throw std::logic_error("select: region outside " + a.name);
  if (a.blocks.empty()) throw std::logic_error("select of an unplaced input " + a.name);
  const auto aid = a.id;
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(e);
  BlockedTensor& t = new_tensor(name, std::move(shape), std::move(cuts), elements);
  const BlockedTensor& src = tensors_[static_cast<std::size_t>(aid)];
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "select");
    Region r;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      r.lo.push_back(offset[d] + x.origin[d]);
      r.hi.push_back(offset[d] + x.origin[d] + x.shape[d]);
    }
    x.inputs.push_back(read(src, r));
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

}  // namespace doppler::workloads
