// The data-movement operations of BlockedProgram that change a tensor's shape: transpose,
// reshape, concat, strided slices and gathers (0 FLOPs each; used by the ONNX importer).
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "doppler/workloads/blocked_program.hpp"

namespace doppler::workloads {

namespace {

using Index = std::vector<std::int64_t>;

// Dimensions of extent above 1, matched in groups of equal products between `in` and `out`.
struct DimGroup {
  std::vector<std::size_t> in, out;
};

std::vector<DimGroup> reshape_groups(const Index& in, const Index& out) {
  std::vector<std::size_t> a, b;
  for (std::size_t d = 0; d < in.size(); ++d)
    if (in[d] > 1) a.push_back(d);
  for (std::size_t d = 0; d < out.size(); ++d)
    if (out[d] > 1) b.push_back(d);
  std::vector<DimGroup> groups;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    DimGroup g{{a[i]}, {b[j]}};
    std::int64_t pa = in[a[i++]], pb = out[b[j++]];
    while (pa != pb) {
      if (pa < pb) {
        if (i == a.size()) throw std::logic_error("reshape: element counts differ");
        g.in.push_back(a[i]);
        pa *= in[a[i++]];
      } else {
        if (j == b.size()) throw std::logic_error("reshape: element counts differ");
        g.out.push_back(b[j]);
        pb *= out[b[j++]];
      }
    }
    groups.push_back(std::move(g));
  }
  if (i != a.size() || j != b.size()) throw std::logic_error("reshape: element counts differ");
  return groups;
}

}  // namespace

const BlockedTensor& BlockedProgram::transpose(const std::string& name, const BlockedTensor& a,
                                               const std::vector<int>& perm) {
  const std::size_t r = a.shape.size();
  if (perm.size() != r || r > 26) throw std::logic_error("transpose: bad permutation");
  std::vector<int> seen(r, 0);
  for (int p : perm) {
    if (p < 0 || static_cast<std::size_t>(p) >= r || seen[static_cast<std::size_t>(p)]++)
      throw std::logic_error("transpose: bad permutation");
  }
  const BlockedTensor& src = placed(a);
  const auto sid = src.id;
  std::string in_labels, out_labels;
  std::vector<std::int64_t> shape;
  std::vector<Cuts> cuts;
  for (std::size_t d = 0; d < r; ++d) in_labels += static_cast<char>('a' + d);
  for (int p : perm) {
    out_labels += static_cast<char>('a' + p);
    shape.push_back(src.shape[static_cast<std::size_t>(p)]);
    cuts.push_back(src.cuts[static_cast<std::size_t>(p)]);
  }
  BlockedTensor& t = new_tensor(name, shape, cuts, static_cast<double>(src.numel()));
  const BlockedTensor& in = tensors_[static_cast<std::size_t>(sid)];
  reserve_nodes(product(t.grid()), name);
  for_each_index(t.grid(), [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "transpose");
    x.einsum = in_labels + "->" + out_labels;
    Index aidx(r);
    for (std::size_t k = 0; k < r; ++k) aidx[static_cast<std::size_t>(perm[k])] = idx[k];
    x.inputs.push_back({in.block(aidx), {}, {}});
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

const BlockedTensor& BlockedProgram::reshape(const std::string& name, const BlockedTensor& a,
                                             std::vector<std::int64_t> shape) {
  if (product(shape) != a.numel()) throw std::logic_error("reshape: element counts differ");
  const auto groups = reshape_groups(a.shape, shape);
  // Required input layout: inner dimensions of each group whole, the first one cut only where
  // the flattened offset is a multiple of the output group's inner extent.
  std::vector<std::optional<Cuts>> req(a.shape.size());
  for (std::size_t d = 0; d < a.shape.size(); ++d)
    if (a.shape[d] == 1) req[d] = Cuts{0, 1};
  std::vector<Cuts> out_cuts(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) out_cuts[d] = {0, shape[d]};
  const BlockedTensor& cur = placed(a);
  for (const DimGroup& g : groups) {
    std::int64_t in_inner = 1, out_inner = 1;
    for (std::size_t k = 1; k < g.in.size(); ++k) in_inner *= a.shape[g.in[k]];
    for (std::size_t k = 1; k < g.out.size(); ++k) out_inner *= shape[g.out[k]];
    Cuts keep, oc;
    for (auto c : cur.cuts[g.in[0]]) {
      if ((c * in_inner) % out_inner != 0) continue;
      keep.push_back(c);
      oc.push_back(c * in_inner / out_inner);
    }
    req[g.in[0]] = keep;
    for (std::size_t k = 1; k < g.in.size(); ++k) req[g.in[k]] = Cuts{0, a.shape[g.in[k]]};
    out_cuts[g.out[0]] = oc;
  }
  const BlockedTensor& src = ensure_layout(cur, req);
  const auto sid = src.id;
  BlockedTensor& t = new_tensor(name, shape, out_cuts, static_cast<double>(a.numel()));
  const BlockedTensor& in = tensors_[static_cast<std::size_t>(sid)];
  reserve_nodes(product(t.grid()), name);
  for_each_index(t.grid(), [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "reshape");
    Index aidx(in.shape.size(), 0);
    for (const DimGroup& g : groups) aidx[g.in[0]] = idx[g.out[0]];
    x.inputs.push_back({in.block(aidx), {}, {}});
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

const BlockedTensor& BlockedProgram::concat(const std::string& name,
                                            const std::vector<const BlockedTensor*>& parts,
                                            int axis) {
  if (parts.empty()) throw std::logic_error("concat of nothing");
  const auto ax = static_cast<std::size_t>(axis);
  const BlockedTensor& first = placed(*parts.front());
  if (ax >= first.shape.size()) throw std::logic_error("concat: bad axis");
  std::vector<const BlockedTensor*> srcs;
  std::vector<std::int64_t> shape = first.shape;
  std::vector<Cuts> cuts = first.cuts;
  shape[ax] = 0;
  cuts[ax] = {0};
  for (const BlockedTensor* p : parts) {
    if (p->shape.size() != shape.size()) throw std::logic_error("concat: rank mismatch");
    std::vector<std::optional<Cuts>> req(shape.size());
    for (std::size_t d = 0; d < shape.size(); ++d) {
      if (d == ax) continue;
      if (p->shape[d] != first.shape[d]) throw std::logic_error("concat: shape mismatch");
      req[d] = first.cuts[d];
    }
    const BlockedTensor* sp = &ensure_layout(*p, req);
    // Nesting is not enough: every part's blocks must be the first's, off the axis.
    std::vector<Cuts> exact = sp->cuts;
    for (std::size_t d = 0; d < shape.size(); ++d)
      if (d != ax) exact[d] = first.cuts[d];
    if (exact != sp->cuts) sp = &relayout(*sp, exact);
    const BlockedTensor& s = *sp;
    for (std::size_t c = 1; c < s.cuts[ax].size(); ++c)
      cuts[ax].push_back(shape[ax] + s.cuts[ax][c]);
    shape[ax] += s.shape[ax];
    srcs.push_back(&s);
  }
  BlockedTensor& t = new_tensor(name, shape, cuts, static_cast<double>(product(shape)));
  reserve_nodes(product(t.grid()), name);
  for_each_index(t.grid(), [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "select");
    Index sidx = idx;
    for (const BlockedTensor* s : srcs) {
      const auto nb = static_cast<std::int64_t>(s->cuts[ax].size()) - 1;
      if (sidx[ax] < nb) {
        x.inputs.push_back({s->block(sidx), {}, {}});
        break;
      }
      sidx[ax] -= nb;
    }
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

const BlockedTensor& BlockedProgram::strided(const std::string& name, const BlockedTensor& a,
                                             std::vector<std::int64_t> offset,
                                             std::vector<std::int64_t> shape, int axis,
                                             std::int64_t step) {
  const auto ax = static_cast<std::size_t>(axis);
  if (offset.size() != a.shape.size() || shape.size() != a.shape.size() || ax >= shape.size() ||
      step == 0)
    throw std::logic_error("strided: bad rank, axis or step");
  const std::int64_t k = step < 0 ? -step : step;
  std::vector<std::int64_t> extent = shape;  // of the region read
  extent[ax] = (shape[ax] - 1) * k + 1;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (shape[d] < 1 || offset[d] < 0 || offset[d] + extent[d] > a.shape[d])
      throw std::logic_error("strided: region outside " + a.name);
  const BlockedTensor& src = placed(a);
  const auto sid = src.id;
  std::vector<Cuts> cuts;
  for (std::size_t d = 0; d < shape.size(); ++d)
    cuts.push_back(cuts_within(src.cuts[d], offset[d], shape[d], d == ax ? step : 1));
  const auto elements = static_cast<double>(product(shape));
  BlockedTensor& t = new_tensor(name, std::move(shape), std::move(cuts), elements);
  const BlockedTensor& in = tensors_[static_cast<std::size_t>(sid)];
  const std::int64_t m = t.shape[ax];
  reserve_nodes(product(t.grid()), name);
  for_each_index(t.grid(), [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "stride");
    x.attrs = {{"axis", static_cast<double>(axis)}, {"step", static_cast<double>(step)}};
    Region r;
    for (std::size_t d = 0; d < idx.size(); ++d) {
      const std::int64_t lo = x.origin[d], hi = x.origin[d] + x.shape[d];
      if (d != ax) {
        r.lo.push_back(offset[d] + lo);
        r.hi.push_back(offset[d] + hi);
      } else {  // the box positions of the block's first and last elements
        const std::int64_t first = step > 0 ? lo : m - hi, last = step > 0 ? hi - 1 : m - 1 - lo;
        r.lo.push_back(offset[d] + first * k);
        r.hi.push_back(offset[d] + last * k + 1);
      }
    }
    x.inputs.push_back(read(in, r));
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

const BlockedTensor& BlockedProgram::gather(const std::string& name, const BlockedTensor& table,
                                            const BlockedTensor& indices, std::vector<Cuts> cuts) {
  if (table.shape.empty()) throw std::logic_error("gather: a table of rank 0");
  const std::size_t q = indices.shape.size();
  std::vector<std::int64_t> shape = indices.shape;
  shape.insert(shape.end(), table.shape.begin() + 1, table.shape.end());
  if (cuts.size() != shape.size()) throw std::logic_error("gather: cuts rank");
  const auto split = cuts.begin() + static_cast<std::ptrdiff_t>(q);
  const std::vector<std::optional<Cuts>> ireq(cuts.begin(), split);
  std::vector<std::optional<Cuts>> treq = {Cuts{0, table.shape[0]}};
  treq.insert(treq.end(), split, cuts.end());
  const BlockedTensor& ix = ensure_layout(indices, ireq);
  const BlockedTensor& tb = ensure_layout(table, treq);
  double elements = 1;
  for (auto e : shape) elements *= static_cast<double>(e);
  BlockedTensor& t = new_tensor(name, std::move(shape), std::move(cuts), elements);
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "gather");
    Region rt{{0}, {tb.shape[0]}}, ri;
    for (std::size_t d = 0; d < x.shape.size(); ++d) {
      Region& r = d < q ? ri : rt;
      r.lo.push_back(x.origin[d]);
      r.hi.push_back(x.origin[d] + x.shape[d]);
    }
    x.inputs.push_back(read(tb, rt));
    x.inputs.push_back(read(ix, ri));
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

const BlockedTensor& BlockedProgram::gather_along(const std::string& name,
                                                  const BlockedTensor& table,
                                                  const BlockedTensor& indices,
                                                  std::vector<Cuts> cuts) {
  const std::size_t r = indices.shape.size();
  if (r == 0 || table.shape.size() != r ||
      !std::equal(table.shape.begin(), table.shape.end() - 1, indices.shape.begin()))
    throw std::logic_error("gather_along: the indices' leading extents are not the table's");
  if (cuts.size() != r) throw std::logic_error("gather_along: cuts rank");
  std::vector<std::optional<Cuts>> ireq(cuts.begin(), cuts.end()), treq = ireq;
  treq.back() = Cuts{0, table.shape.back()};
  const BlockedTensor& ix = ensure_layout(indices, ireq);
  const BlockedTensor& tb = ensure_layout(table, treq);
  const auto elements = static_cast<double>(product(indices.shape));
  BlockedTensor& t = new_tensor(name, indices.shape, std::move(cuts), elements);
  const Index grid = t.grid();
  reserve_nodes(product(grid), name);
  for_each_index(grid, [&](const Index& idx) {
    ExecDesc x = block_desc(t, idx, "gather_along");
    Region ri{x.origin, x.origin}, rt;
    for (std::size_t d = 0; d < r; ++d) ri.hi[d] += x.shape[d];
    rt = ri;
    rt.lo.back() = 0, rt.hi.back() = tb.shape.back();
    x.inputs.push_back(read(tb, rt));
    x.inputs.push_back(read(ix, ri));
    add_tensor_block(t, idx, std::move(x), OpKind::select);
  });
  return t;
}

}  // namespace doppler::workloads
