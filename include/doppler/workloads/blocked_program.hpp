#pragma once
// Builds a Graph from a blocked tensor program: every tensor operation becomes a set of block
// operations with exact per-block FLOPs and bytes, an executable description (docs/exec.md) and
// the reference cost view. Layouts are checked operand by operand: a block always reads one
// region inside one producer block; when an operand's blocks do not nest in the regions an
// operation needs, a relayout (kernel "assemble") is inserted automatically and cached.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "doppler/graph/graph.hpp"
#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/resize_coords.hpp"
#include "doppler/workloads/blocked_tensor.hpp"
#include "doppler/workloads/dtype.hpp"

namespace doppler::workloads {

/// Named scalar attributes of a kernel (ExecDesc::attrs).
using Attrs = std::vector<std::pair<std::string, double>>;
/// Cuts of each einsum label; labels absent from the map are not split.
using LabelCuts = std::map<char, Cuts>;

/// Geometry of a windowed NCHW kernel (conv2d, maxpool2d, avgpool2d; docs/exec.md).
struct Window2d {
  std::int64_t kernel_h = 1, kernel_w = 1;  ///< window extent (a conv takes it from its weight)
  std::int64_t stride_h = 1, stride_w = 1;  ///< >= 1
  std::int64_t pad_h = 0, pad_w = 0;        ///< top and left padding (>= 0)
  std::int64_t dil_h = 1, dil_w = 1;        ///< dilation (>= 1)
  std::int64_t groups = 1;                  ///< conv2d: channel groups
  bool count_include_pad = false;           ///< avgpool2d: divide by the whole window
};

/// How a resize2d kernel maps output positions to input ones (docs/exec.md).
struct Resize2d {
  bool linear = false;  ///< linear (9 FLOPs per output element), else nearest (0)
  resize::Coord coord = resize::Coord::half_pixel;                   ///< coordinate transform
  resize::Rounding rounding = resize::Rounding::round_prefer_floor;  ///< nearest's rounding
  double scale_h = 0, scale_w = 0;  ///< the model's scales (> 0); 0: out / in
};

/// Incrementally builds a blocked program's graph. Costs (docs/workloads.md):
/// - flops: einsum 2 x (iteration-space size of the block); elementwise and reductions
///   KernelInfo::flops_per_element x elements; aggregation of k partials (k - 1) x elements;
///   input, fill, select and assemble 0. out_bytes = block elements x dtype size. Edge bytes =
///   elements of the region the consumer reads x dtype size.
/// - reference view: every block of a tensor op gets compute_cost C (the whole op's
///   iteration-space size for einsums and partial reductions, its output elements otherwise) and
///   transfer_cost 4C; inputs get compute_cost 0 and transfer_cost 4 x (tensor elements).
/// Every tensor operation gets its own group id, in program order (partial products and their
/// aggregation are two operations).
class BlockedProgram {
public:
  /// An empty program whose tensors are stored as `dtype`.
  explicit BlockedProgram(DType dtype);

  /// Storage type of every tensor.
  DType dtype() const { return dtype_; }

  /// Declares an input tensor with values offset + scale * u, u in [-1, 1) from the kernel
  /// "input" (seed = a hash of `name`, so values do not depend on the program). With `cuts`
  /// empty the layout is the one its first reader needs (inputs never need a relayout for their
  /// first reader).
  const BlockedTensor& input(const std::string& name, std::vector<std::int64_t> shape,
                             double scale = 1, double offset = 0, std::vector<Cuts> cuts = {});

  /// As input(), with the kernel's `seed` given (an integer below 2^53) instead of the name's.
  const BlockedTensor& input_seeded(const std::string& name, std::vector<std::int64_t> shape,
                                    std::uint64_t seed, double scale = 1, double offset = 0);

  /// Declares a constant tensor whose values are Graph::constants()[index] (kernel "load", node
  /// kind input); its layout is fixed by its first reader, as for input().
  const BlockedTensor& constant(const std::string& name, std::vector<std::int64_t> shape,
                                int index);

  /// Blocked einsum (e.g. "bsd,dhe->bshe") of `operands` with label cuts `cuts`. With the
  /// contracted labels cut into K > 1 blocks, partial products `name[out..., k...]` are summed
  /// by aggregation blocks `agg:name[out...]` (kernel "sum"); otherwise blocks are `name[...]`.
  const BlockedTensor& einsum(const std::string& name, const std::string& spec,
                              const std::vector<const BlockedTensor*>& operands,
                              const LabelCuts& cuts);

  /// Elementwise kernel `op` (unary or binary, docs/exec.md) with NumPy broadcasting; the output
  /// is cut by `cuts` (one entry per output dimension).
  const BlockedTensor& map(const std::string& name, const std::string& op,
                           const std::vector<const BlockedTensor*>& operands,
                           const std::vector<Cuts>& cuts, Attrs attrs = {});

  /// Fused recurrent step `op` (lstm_cell, lstm_hidden, gru_cell; docs/exec.md) of `operands`,
  /// giving `shape` cut by `cuts` (the last dimension, the hidden units, whole). Each operand has
  /// the output's rank and leading extents (or 1: one row for all) and its own last extent (the
  /// gates side by side), laid out with the output's leading cuts and its last dimension whole;
  /// `flops_per_element` FLOPs per output element.
  const BlockedTensor& cell(const std::string& name, const std::string& op,
                            const std::vector<const BlockedTensor*>& operands,
                            std::vector<std::int64_t> shape, const std::vector<Cuts>& cuts,
                            double flops_per_element);

  /// Last-axis reduction `op` (reduce_sum, reduce_max, reduce_sumsq, reduce_argmax) of `a`, in
  /// a's layout, with the kernel's `attrs`: the output has a's shape with a last extent of 1.
  /// When a's last axis has K > 1 blocks, partial reductions are aggregated by "sum" (or "max"
  /// for reduce_max) blocks `agg:name[...]`; reduce_argmax needs the axis whole (logic_error).
  const BlockedTensor& reduce(const std::string& name, const std::string& op,
                              const BlockedTensor& a, Attrs attrs = {});

  /// The k first elements of each last-axis row of `a` in value order, larger first unless
  /// !largest, ties by lower index (kernel "topk"): their values, or with `indices` their indices
  /// as whole numbers. a's shape with a last extent of k, a's layout with the last axis whole
  /// (re-blocked when cut); k FLOPs per input element. Requires 1 <= k <= a's last extent.
  const BlockedTensor& topk(const std::string& name, const BlockedTensor& a, std::int64_t k,
                            bool largest, bool indices);

  /// A constant tensor (kernel "fill", attributes value and causal).
  const BlockedTensor& fill(const std::string& name, std::vector<std::int64_t> shape,
                            std::vector<Cuts> cuts, Attrs attrs);

  /// Region copy a[offset : offset + shape] (kernel "select"), cut by `cuts`. Each output block
  /// must lie inside one block of `a` (std::logic_error otherwise: a generator bug).
  const BlockedTensor& select(const std::string& name, const BlockedTensor& a,
                              std::vector<std::int64_t> offset, std::vector<std::int64_t> shape,
                              std::vector<Cuts> cuts);

  /// Every |step|-th element of `a` along `axis` (kernel "stride", 0 FLOPs; a reversal when step
  /// < 0): output element i reads a[offset + i step] (step > 0) or a[offset + (shape[axis] - 1 -
  /// i) |step|] (step < 0) along `axis`, a[offset + i] along the others. `offset` is the lowest
  /// index read in each dimension. The output keeps a's cuts, mapped through the step along
  /// `axis`, so that each output block reads one block of `a`.
  const BlockedTensor& strided(const std::string& name, const BlockedTensor& a,
                               std::vector<std::int64_t> offset, std::vector<std::int64_t> shape,
                               int axis, std::int64_t step);

  /// `a` broadcast to `shape` (NumPy rules; kernel "expand", 0 FLOPs), cut by `cuts`: each
  /// block reads the region of `a` it repeats.
  const BlockedTensor& expand(const std::string& name, const BlockedTensor& a,
                              std::vector<std::int64_t> shape, const std::vector<Cuts>& cuts);

  /// `a` with the dimensions permuted: output dimension k is a's dimension perm[k] (kernel
  /// "transpose", one block per block of a, 0 FLOPs).
  const BlockedTensor& transpose(const std::string& name, const BlockedTensor& a,
                                 const std::vector<int>& perm);

  /// `a` viewed with shape `shape` (same element count, row-major order kept; kernel "reshape",
  /// 0 FLOPs). Dimensions are matched in groups of equal products; within a group only the
  /// first input dimension may be cut, at multiples of the group's inner extent (a relayout is
  /// inserted otherwise); every output block is one whole input block.
  const BlockedTensor& reshape(const std::string& name, const BlockedTensor& a,
                               std::vector<std::int64_t> shape);

  /// Rows of `table` at `indices` (kernel "gather"; an embedding lookup): the output has the
  /// indices' shape followed by a table row's (the table's dimensions after the first), cut by
  /// `cuts`. Each output block reads its region of the indices and every row of the table (laid
  /// out with its first dimension whole, the others cut as the output's). 0 FLOPs.
  const BlockedTensor& gather(const std::string& name, const BlockedTensor& table,
                              const BlockedTensor& indices, std::vector<Cuts> cuts);

  /// An element of each last-axis row of `table` per index (kernel "gather_along"; ONNX
  /// GatherElements, NumPy take_along_axis): out[l, j] = table[l, indices[l, j]], the output of
  /// the indices' shape, whose leading extents are the table's, cut by `cuts`. Each output block
  /// reads its region of the indices and the same leading region of the table with its last
  /// axis whole (re-blocked where it is cut). 0 FLOPs.
  const BlockedTensor& gather_along(const std::string& name, const BlockedTensor& table,
                                    const BlockedTensor& indices, std::vector<Cuts> cuts);

  /// Concatenation of `parts` along dimension `axis` (kernel "select" copying whole blocks; the
  /// other dimensions take the first part's cuts, relayouts inserted where parts differ).
  const BlockedTensor& concat(const std::string& name,
                              const std::vector<const BlockedTensor*>& parts, int axis);

  /// 2-D convolution (kernel "conv2d") of `x` [N, C, H, W] with the weight `w` [OC, C / groups,
  /// KH, KW] and `bias` [OC] (or nullptr), giving [N, OC, out_h, out_w] cut by `cuts` (the width
  /// uncut). Each output block reads the rows of `x` its windows cover, halo rows included, from
  /// every x block they overlap (x is laid out with N cut as the output, C whole, or cut as the
  /// output for a depthwise conv, and W whole). FLOPs: 2 x C / groups x KH x KW per output
  /// element, plus 1 with a bias.
  const BlockedTensor& conv2d(const std::string& name, const BlockedTensor& x,
                              const BlockedTensor& w, const BlockedTensor* bias,
                              const Window2d& geometry, std::int64_t out_h, std::int64_t out_w,
                              std::vector<Cuts> cuts);
  /// Transposed 2-D convolution (kernel "conv_transpose2d") of `x` [N, C, H, W] with the weight
  /// `w` [OC, C / groups, KH, KW] (ONNX's [C, OC / groups, KH, KW] regrouped by output channel)
  /// and `bias` [OC] (or nullptr), giving [N, OC, out_h, out_w] cut by `cuts` (the width uncut);
  /// `geometry`'s pads are the top and left ones. Layouts as conv2d's; each output block reads
  /// the rows of x whose kernel positions land on its rows. FLOPs: 2 x C / groups x KH x KW /
  /// (stride_h stride_w) per output element, plus 1 with a bias.
  const BlockedTensor& conv_transpose2d(const std::string& name, const BlockedTensor& x,
                                        const BlockedTensor& w, const BlockedTensor* bias,
                                        const Window2d& geometry, std::int64_t out_h,
                                        std::int64_t out_w, std::vector<Cuts> cuts);
  /// Max or average pooling (`op` "maxpool2d" or "avgpool2d") of `x` [N, C, H, W] to [N, C,
  /// out_h, out_w] cut by `cuts` (the width uncut); x is laid out with N and C cut as the output.
  /// FLOPs: KH x KW per output element.
  const BlockedTensor& pool2d(const std::string& name, const std::string& op,
                              const BlockedTensor& x, const Window2d& geometry, std::int64_t out_h,
                              std::int64_t out_w, std::vector<Cuts> cuts);

  /// Nearest or linear resize (kernel "resize2d") of `x` [N, C, H, W] to [N, C, out_h, out_w]
  /// cut by `cuts` (the width uncut); x is laid out with N and C cut as the output and W whole.
  /// Each output block reads the rows of x its rows map to (resize::input_span), from every x
  /// block they overlap.
  const BlockedTensor& resize2d(const std::string& name, const BlockedTensor& x, const Resize2d& r,
                                std::int64_t out_h, std::int64_t out_w, std::vector<Cuts> cuts);

  /// `a` re-blocked by `cuts`: blocks `relayout:name[...]` assemble the pieces of a's blocks
  /// they overlap (kernel "assemble"). Cached: the same (a, cuts) gives the same tensor.
  const BlockedTensor& relayout(const BlockedTensor& a, const std::vector<Cuts>& cuts);

  /// `t` in a layout whose blocks nest in `required` (per dimension; nullopt = any): t itself
  /// when they already do, else a cached relayout. An input read for the first time takes
  /// `required` (unsplit where nullopt).
  const BlockedTensor& ensure_layout(const BlockedTensor& t,
                                     const std::vector<std::optional<Cuts>>& required);

  /// The cuts of `t` keyed by the labels `labels` (one letter per dimension of t).
  static LabelCuts label_cuts(const BlockedTensor& t, const std::string& labels);

  /// Nodes created so far.
  int num_nodes() const { return builder_.num_nodes(); }

  /// Validates and returns the graph (reference costs set). The program is left empty.
  Graph build(GraphMeta meta);

  /// The largest number of blocks a program may create (InputError beyond).
  static constexpr int kMaxNodes = 4'000'000;

private:
  struct Region {
    std::vector<std::int64_t> lo, hi;
  };
  struct InputInfo {
    double seed = 0, scale = 1, offset = 0;
    int constant = -1;  ///< Graph constant read by "load" blocks; -1: generated "input" values
  };
  BlockedTensor& new_tensor(const std::string& name, std::vector<std::int64_t> shape,
                            std::vector<Cuts> cuts, double reference_c, bool is_input = false);
  int new_group(double reference_c, bool is_input);
  void materialize_input(BlockedTensor& t, std::vector<Cuts> cuts);
  const BlockedTensor& placed(const BlockedTensor& t);
  ExecInput read(const BlockedTensor& t, const Region& r) const;
  NodeId add_block(Node node);
  static ExecDesc block_desc(const BlockedTensor& t, const std::vector<std::int64_t>& idx,
                             std::string op);
  void add_tensor_block(BlockedTensor& t, const std::vector<std::int64_t>& idx, ExecDesc x,
                        OpKind kind, double flops = 0);
  void reserve_nodes(std::int64_t count, const std::string& what) const;
  const BlockedTensor& broadcast_op(const std::string& name, const std::string& op,
                                    const std::vector<const BlockedTensor*>& operands,
                                    std::vector<std::int64_t> shape, const std::vector<Cuts>& cuts,
                                    Attrs attrs);
  const BlockedTensor& window2d(const std::string& name, const std::string& op,
                                const BlockedTensor& x, const BlockedTensor* w,
                                const BlockedTensor* bias, const Window2d& geometry,
                                const std::vector<std::int64_t>& out_shape, std::vector<Cuts> cuts);
  void add_window_pieces(ExecDesc& desc, const BlockedTensor& x, std::int64_t lo, std::int64_t hi,
                         std::int64_t c0, std::int64_t cw) const;
  double bytes_of(double elements) const;

  DType dtype_;
  GraphBuilder builder_;
  std::deque<BlockedTensor> tensors_;
  std::map<int, InputInfo> inputs_;
  std::vector<double> group_c_;
  std::vector<char> group_input_;
  std::map<std::pair<int, std::vector<Cuts>>, int> relayouts_;
};

}  // namespace doppler::workloads
