// Einsum kernels: a binary einsum whose labels split into batch (both operands and the output),
// M (first operand and output), N (second operand and output) and K (both operands, summed) runs
// as one SGEMM per batch element, reading operands in place when their labels collapse to a
// row-major or transposed matrix and gathering them into scratch otherwise. Anything else runs
// as a plain loop (double accumulation).
#include <algorithm>
#include <string>

#include <cblas.h>
#include <climits>

#include "plan.hpp"

#include "doppler/util/error.hpp"

namespace doppler::engine_detail {

namespace {

// Extent and stride of a group of labels seen as one dimension.
struct Group {
  std::int64_t size = 1;
  std::int64_t stride = 0;
  bool ok = true;  // the labels collapse to one strided dimension
};

Group collapse(const std::vector<std::pair<std::int64_t, std::int64_t>>& dims) {
  std::vector<std::pair<std::int64_t, std::int64_t>> nz;
  for (const auto& d : dims)
    if (d.first != 1) nz.push_back(d);
  Group g;
  if (nz.empty()) return g;
  for (const auto& d : nz) g.size *= d.first;
  g.stride = nz.back().second;
  for (std::size_t i = 0; i + 1 < nz.size(); ++i)
    if (nz[i].second != nz[i + 1].second * nz[i + 1].first) g.ok = false;
  return g;
}

// A [rows, cols] matrix in place: row-major (NoTrans) or column-major (Trans).
bool as_matrix(const Group& r, const Group& c, GemmOperand& o) {
  if (!r.ok || !c.ok) return false;
  const bool r1 = r.size == 1, c1 = c.size == 1;
  if ((c1 || c.stride == 1) && (r1 || r.stride >= c.size)) {
    o.trans = false;
    o.ld = r1 ? std::max<std::int64_t>(c.size, 1) : r.stride;
    return true;
  }
  if ((r1 || r.stride == 1) && (c1 || c.stride >= r.size)) {
    o.trans = true;
    o.ld = c1 ? std::max<std::int64_t>(r.size, 1) : c.stride;
    return true;
  }
  return false;
}

using Dim = std::pair<std::int64_t, std::int64_t>;  // (extent, stride)

void plan_operand(const std::vector<Dim>& rows, const std::vector<Dim>& cols, GemmOperand& o) {
  if (as_matrix(collapse(rows), collapse(cols), o)) return;
  o.pack = true;
  o.trans = false;
  o.pack_shape.clear();
  o.pack_strides.clear();
  std::int64_t ncols = 1;
  for (const auto& d : rows) o.pack_shape.push_back(d.first), o.pack_strides.push_back(d.second);
  for (const auto& d : cols) {
    o.pack_shape.push_back(d.first), o.pack_strides.push_back(d.second);
    ncols *= d.first;
  }
  o.pack_dst = contiguous_strides(o.pack_shape);
  o.ld = std::max<std::int64_t>(ncols, 1);
}

std::vector<std::string> split_spec(const std::string& spec, std::string& out) {
  const auto arrow = spec.find("->");
  if (arrow == std::string::npos) throw InputError("einsum '" + spec + "' has no '->'");
  out = spec.substr(arrow + 2);
  std::vector<std::string> in(1);
  for (char c : spec.substr(0, arrow)) {
    if (c == ',') {
      in.emplace_back();
    } else if (c >= 'a' && c <= 'z') {
      in.back() += c;
    } else {
      throw InputError("einsum '" + spec + "': bad label '" + std::string(1, c) + "'");
    }
  }
  return in;
}

bool has_repeat(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.find(s[i], i + 1) != std::string::npos) return true;
  return false;
}

void plan_loop(const std::vector<std::string>& in, const std::string& out,
               const std::string& labels, const Dims& ext, const std::vector<View>& ops,
               const Dims& out_shape, KernelPlan& k) {
  k.op = KernelOp::einsum_loop;
  k.loop.extents = ext;
  k.loop.op_strides.assign(ops.size(), Dims(labels.size(), 0));
  k.loop.out_strides.assign(labels.size(), 0);
  for (std::size_t j = 0; j < ops.size(); ++j)
    for (std::size_t d = 0; d < in[j].size(); ++d)
      k.loop.op_strides[j][labels.find(in[j][d])] += ops[j].strides[d];
  const Dims os = contiguous_strides(out_shape);
  for (std::size_t d = 0; d < out.size(); ++d) k.loop.out_strides[labels.find(out[d])] = os[d];
}

// For C = A B in BLAS calls: batch labels iterate; M, N, K are matrices.
void plan_gemm(const std::string& a, const std::string& b, const std::string& out,
               const std::string& labels, const Dims& ext, const std::vector<View>& ops,
               const Dims& out_shape, KernelPlan& k) {
  const Dims os = contiguous_strides(out_shape);
  const auto stride_in = [&](const std::string& s, const View& v, char c) {
    return v.strides[s.find(c)];
  };
  std::string batch, m, n, kk;
  for (char c : out) {
    const bool ia = a.find(c) != std::string::npos, ib = b.find(c) != std::string::npos;
    (ia && ib ? batch : ia ? m : n) += c;
  }
  for (char c : a)
    if (b.find(c) != std::string::npos && out.find(c) == std::string::npos) kk += c;
  GemmPlan& g = k.gemm;
  const auto extent = [&](char c) { return ext[labels.find(c)]; };
  const auto dims = [&](const std::string& ls, const std::string& s, const View* v) {
    std::vector<Dim> r;
    for (char c : ls) r.push_back({extent(c), v ? stride_in(s, *v, c) : os[out.find(c)]});
    return r;
  };
  for (char c : batch) {
    g.batch_shape.push_back(extent(c));
    g.a.batch_strides.push_back(stride_in(a, ops[0], c));
    g.b.batch_strides.push_back(stride_in(b, ops[1], c));
    g.c_batch_strides.push_back(os[out.find(c)]);
  }
  g.m = g.n = g.k = 1;
  for (char c : m) g.m *= extent(c);
  for (char c : n) g.n *= extent(c);
  for (char c : kk) g.k *= extent(c);
  plan_operand(dims(m, a, &ops[0]), dims(kk, a, &ops[0]), g.a);
  plan_operand(dims(kk, b, &ops[1]), dims(n, b, &ops[1]), g.b);
  const Group cm = collapse(dims(m, out, nullptr)), cn = collapse(dims(n, out, nullptr));
  GemmOperand c;
  if (as_matrix(cm, cn, c) && !c.trans) {
    g.c_mode = 0;
    g.ldc = c.ld;
  } else if (as_matrix(cn, cm, c) && !c.trans) {
    g.c_mode = 1;
    g.ldc = c.ld;
  } else {
    g.c_mode = 2;
    for (const auto& d : dims(m, out, nullptr))
      g.scatter_shape.push_back(d.first), g.scatter_strides.push_back(d.second);
    for (const auto& d : dims(n, out, nullptr))
      g.scatter_shape.push_back(d.first), g.scatter_strides.push_back(d.second);
    g.scatter_src = contiguous_strides(g.scatter_shape);
    g.ldc = std::max<std::int64_t>(g.n, 1);
  }
  g.scratch =
      (g.a.pack ? g.m * g.k : 0) + (g.b.pack ? g.k * g.n : 0) + (g.c_mode == 2 ? g.m * g.n : 0);
  for (std::int64_t x : {g.m, g.n, g.k, g.a.ld, g.b.ld, g.ldc})
    if (x > INT_MAX) throw InputError("einsum block too large for 32-bit BLAS");
  k.op = KernelOp::gemm;
}

}  // namespace

void plan_einsum(const std::string& spec, const std::vector<View>& ops, const Dims& out_shape,
                 KernelPlan& k) {
  std::string out;
  const std::vector<std::string> in = split_spec(spec, out);
  if (in.size() != ops.size())
    throw InputError("einsum '" + spec + "' has " + std::to_string(in.size()) +
                     " operands but the node has " + std::to_string(ops.size()));
  std::string labels;
  Dims ext;
  for (std::size_t j = 0; j < in.size(); ++j) {
    if (in[j].size() != ops[j].shape.size())
      throw InputError("einsum '" + spec + "': operand " + std::to_string(j) + " has rank " +
                       std::to_string(ops[j].shape.size()));
    for (std::size_t d = 0; d < in[j].size(); ++d) {
      const auto p = labels.find(in[j][d]);
      if (p == std::string::npos) {
        labels += in[j][d];
        ext.push_back(ops[j].shape[d]);
      } else if (ext[p] != ops[j].shape[d]) {
        throw InputError("einsum '" + spec + "': extents of '" + std::string(1, in[j][d]) +
                         "' disagree");
      }
    }
  }
  if (out.size() != out_shape.size() || has_repeat(out))
    throw InputError("einsum '" + spec + "': output labels do not match the block's rank");
  for (std::size_t d = 0; d < out.size(); ++d) {
    const auto p = labels.find(out[d]);
    if (p == std::string::npos || ext[p] != out_shape[d])
      throw InputError("einsum '" + spec + "': output extents differ from the block's shape");
  }
  bool gemm = in.size() == 2 && !has_repeat(in[0]) && !has_repeat(in[1]);
  if (gemm)
    for (char c : labels) {
      const bool ia = in[0].find(c) != std::string::npos, ib = in[1].find(c) != std::string::npos,
                 io = out.find(c) != std::string::npos;
      if (!io && !(ia && ib)) gemm = false;  // summed over one operand only
    }
  if (gemm) {
    plan_gemm(in[0], in[1], out, labels, ext, ops, out_shape, k);
  } else {
    plan_loop(in, out, labels, ext, ops, out_shape, k);
  }
}

namespace {

CBLAS_TRANSPOSE tr(bool t) {
  return t ? CblasTrans : CblasNoTrans;
}

void run_gemm(const KernelPlan& k, const float* const* inputs, float* out,
              std::vector<float>& scratch) {
  const GemmPlan& g = k.gemm;
  if (scratch.size() < static_cast<std::size_t>(g.scratch))
    scratch.resize(static_cast<std::size_t>(g.scratch));
  float* sa = scratch.data();
  float* sb = sa + (g.a.pack ? g.m * g.k : 0);
  float* sc = sb + (g.b.pack ? g.k * g.n : 0);
  const float* a0 = inputs[0] + k.in[0].offset;
  const float* b0 = inputs[1] + k.in[1].offset;
  const std::size_t nb = g.batch_shape.size();
  std::array<std::int64_t, kMaxRank> idx{};
  std::int64_t oa = 0, ob = 0, oc = 0;
  const int m = static_cast<int>(g.m), n = static_cast<int>(g.n), kk = static_cast<int>(g.k);
  while (true) {
    const float* pa = a0 + oa;
    const float* pb = b0 + ob;
    if (g.a.pack) {
      copy_strided(pa, g.a.pack_strides, sa, g.a.pack_dst, g.a.pack_shape);
      pa = sa;
    }
    if (g.b.pack) {
      copy_strided(pb, g.b.pack_strides, sb, g.b.pack_dst, g.b.pack_shape);
      pb = sb;
    }
    const int lda = static_cast<int>(g.a.ld), ldb = static_cast<int>(g.b.ld);
    if (g.c_mode == 1) {  // C^T = op(B)^T op(A)^T
      cblas_sgemm(CblasRowMajor, tr(!g.b.trans), tr(!g.a.trans), n, m, kk, 1.0f, pb, ldb, pa, lda,
                  0.0f, out + oc, static_cast<int>(g.ldc));
    } else {
      float* pc = g.c_mode == 0 ? out + oc : sc;
      cblas_sgemm(CblasRowMajor, tr(g.a.trans), tr(g.b.trans), m, n, kk, 1.0f, pa, lda, pb, ldb,
                  0.0f, pc, static_cast<int>(g.ldc));
      if (g.c_mode == 2)
        copy_strided(sc, g.scatter_src, out + oc, g.scatter_strides, g.scatter_shape);
    }
    std::size_t d = nb;
    while (true) {
      if (d == 0) return;
      --d;
      ++idx[d];
      oa += g.a.batch_strides[d], ob += g.b.batch_strides[d], oc += g.c_batch_strides[d];
      if (idx[d] < g.batch_shape[d]) break;
      oa -= g.a.batch_strides[d] * g.batch_shape[d];
      ob -= g.b.batch_strides[d] * g.batch_shape[d];
      oc -= g.c_batch_strides[d] * g.batch_shape[d];
      idx[d] = 0;
    }
  }
}

void run_loop(const KernelPlan& k, const float* const* inputs, float* out) {
  const EinsumLoop& l = k.loop;
  std::vector<double> acc(static_cast<std::size_t>(k.numel), 0.0);
  const std::size_t nl = l.extents.size(), no = l.op_strides.size();
  for (auto e : l.extents)
    if (e == 0) return;
  std::vector<std::int64_t> idx(nl, 0), off(no, 0);
  std::vector<const float*> base(no);
  for (std::size_t j = 0; j < no; ++j) base[j] = inputs[j] + k.in[j].offset;
  std::int64_t oo = 0;
  while (true) {
    double prod = 1;
    for (std::size_t j = 0; j < no; ++j) prod *= static_cast<double>(base[j][off[j]]);
    acc[static_cast<std::size_t>(oo)] += prod;
    std::size_t d = nl;
    while (true) {
      if (d == 0) {
        for (std::size_t i = 0; i < acc.size(); ++i) out[i] = static_cast<float>(acc[i]);
        return;
      }
      --d;
      ++idx[d];
      for (std::size_t j = 0; j < no; ++j) off[j] += l.op_strides[j][d];
      oo += l.out_strides[d];
      if (idx[d] < l.extents[d]) break;
      for (std::size_t j = 0; j < no; ++j) off[j] -= l.op_strides[j][d] * l.extents[d];
      oo -= l.out_strides[d] * l.extents[d];
      idx[d] = 0;
    }
  }
}

}  // namespace

void run_einsum(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch) {
  if (k.op == KernelOp::gemm) {
    run_gemm(k, inputs, out, scratch);
  } else {
    run_loop(k, inputs, out);
  }
}

}  // namespace doppler::engine_detail
