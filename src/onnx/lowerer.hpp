#pragma once
// Internal: lowers ONNX nodes, one at a time in graph order, to blocked tensor operations of a
// workloads::BlockedProgram. Every ONNX tensor is a Value: a constant (folded at import) or a
// blocked tensor; constants read by blocked ops become Graph constants ("load" blocks).
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "host_tensor.hpp"

#include "doppler/graph/constant_tensor.hpp"
#include "doppler/onnx/import.hpp"
#include "doppler/workloads/blocked_program.hpp"

namespace doppler::onnx_import {

using workloads::BlockedTensor;
using workloads::Cuts;

/// One ONNX tensor during lowering.
struct Value {
  Shape shape;
  std::optional<HostTensor> constant;      ///< set for constants
  const BlockedTensor* blocked = nullptr;  ///< set for computed tensors (and loaded constants)
  std::string alias_of;  ///< a constant that is an Identity of another: the one it names
};

class RnnLowering;

/// The lowering state of one model.
class Lowerer {
public:
  /// A lowering for `options`, of a model whose default-domain opset is `opset`.
  Lowerer(const ImportOptions& options, std::int64_t opset);

  /// Defines a constant tensor (initializer or folded value).
  void set_constant(const std::string& name, HostTensor t);
  /// Defines a graph input with generated values (kernel "input"; seeded by `seed`, else by
  /// the name): in [-1, 1), or in [0, index_rows) for the indices of a table of that many rows
  /// (whole once truncated, as the gather kernel reads them).
  void set_input(const std::string& name, const Shape& shape,
                 std::optional<std::uint64_t> seed = std::nullopt,
                 std::optional<std::int64_t> index_rows = std::nullopt);
  /// Defines a graph input whose values are `t` (a Graph constant read by "load" blocks, never
  /// folded into the ops that read it).
  void set_loaded_input(const std::string& name, const HostTensor& t);
  /// The value named `name`, or nullptr.
  const Value* find(const std::string& name) const;

  /// Lowers node `n` (whose inputs are defined); folds it when it can. Returns true when folded.
  /// Throws std::exception with the problem (the caller adds file and node).
  bool lower(const onnx::NodeProto& n);

  /// Makes every output a blocked tensor named after it, builds the graph and attaches the
  /// constants. The lowerer is left empty.
  Graph finish(const std::vector<std::string>& outputs, GraphMeta meta);

  /// Nodes created so far.
  int num_nodes() const { return p_.num_nodes(); }
  /// Elements of the constants loaded by blocks so far (weights; not .npy graph inputs).
  std::int64_t parameters() const { return parameters_; }

  /// Lowering function of an op type.
  using Op = void (Lowerer::*)(const onnx::NodeProto&);
  /// The op types lowered to blocks, with their functions.
  static const std::map<std::string, Op>& ops();

private:
  const Value& in(const onnx::NodeProto& n, std::size_t i) const;
  bool has_in(const onnx::NodeProto& n, std::size_t i) const;
  const HostTensor& const_in(const onnx::NodeProto& n, std::size_t i, const char* what) const;
  const BlockedTensor& blocked(const onnx::NodeProto& n, std::size_t i);
  const BlockedTensor& materialize(const std::string& name, const Value& v);
  const BlockedTensor& load(const std::string& name, const HostTensor& t);
  const BlockedTensor& load_values(const std::string& name, const HostTensor& t);
  void define(const std::string& name, const BlockedTensor& t);
  std::vector<Cuts> cuts_for(const std::string& tensor, const Shape& shape,
                             const BlockedTensor* like) const;
  const BlockedTensor& last_axis_whole(const BlockedTensor& t);
  std::string out(const onnx::NodeProto& n, const std::string& suffix = "") const;

  // Math ops (lower_math.cpp).
  void matmul(const onnx::NodeProto& n);
  void gemm(const onnx::NodeProto& n);
  void einsum_op(const onnx::NodeProto& n);
  void binary(const onnx::NodeProto& n);
  void unary(const onnx::NodeProto& n);
  void extremum(const onnx::NodeProto& n);
  void softmax(const onnx::NodeProto& n);
  /// A last-axis op: given its input, whole along the last axis, and the name of its result.
  using LastAxisOp =
      std::function<const BlockedTensor&(const BlockedTensor& x, const std::string& y)>;
  /// `f` applied along `axis` of input 0, the result named after the node's output: another
  /// axis than the last is swapped with the last by a transpose before and after.
  const BlockedTensor& along_axis(const onnx::NodeProto& n, std::int64_t axis, const LastAxisOp& f);
  void reduce(const onnx::NodeProto& n);
  void arg_reduce(const onnx::NodeProto& n);
  /// The input of a reduction with its `reduced` axes moved last (a transpose when they are
  /// not already) and merged (a reshape), the last axis whole; the kept extents, and the input's
  /// shape with 1 at the reduced axes (keepdims).
  struct ReducedRows {
    const BlockedTensor* rows = nullptr;
    Shape kept, keep_shape;
  };
  ReducedRows reduced_rows(const onnx::NodeProto& n, const std::vector<bool>& reduced);
  void layer_norm(const onnx::NodeProto& n);
  void instance_norm(const onnx::NodeProto& n);
  void lrn(const onnx::NodeProto& n);  // lower_lrn.cpp
  /// A normalization's result and its per-row statistics ([rows..., 1] each).
  struct Normalized {
    const BlockedTensor *y = nullptr, *mean = nullptr, *inv_std = nullptr;
  };
  Normalized normalized(const std::string& y, const BlockedTensor& x, double eps);
  void where(const onnx::NodeProto& n);
  void compare(const onnx::NodeProto& n);
  void cumsum(const onnx::NodeProto& n);
  void trilu(const onnx::NodeProto& n);
  void topk(const onnx::NodeProto& n);
  void gather_elements(const onnx::NodeProto& n);
  const BlockedTensor& einsum(const std::string& name, const std::string& spec,
                              const BlockedTensor& a, const BlockedTensor& b,
                              const std::string& out_labels, const Shape& out_shape);
  const BlockedTensor& map(const std::string& name, const std::string& kernel,
                           const std::vector<const BlockedTensor*>& operands,
                           workloads::Attrs attrs = {});

  // Convolutional ops (lower_conv.cpp).
  void conv(const onnx::NodeProto& n);
  void conv_transpose(const onnx::NodeProto& n);
  const BlockedTensor* conv_bias(const onnx::NodeProto& n, std::int64_t oc);
  void pool(const onnx::NodeProto& n);
  void global_avg_pool(const onnx::NodeProto& n);
  void batch_norm(const onnx::NodeProto& n);
  void clip(const onnx::NodeProto& n);
  void hard_sigmoid(const onnx::NodeProto& n);
  void pad(const onnx::NodeProto& n);
  const BlockedTensor& pad_part(const std::string& name, const BlockedTensor& t, std::size_t a,
                                std::int64_t extent, bool before, const std::string& mode,
                                double value);
  void resize(const onnx::NodeProto& n);
  workloads::Resize2d resize_mode(const onnx::NodeProto& n) const;
  const BlockedTensor& resize_depth(const onnx::NodeProto& n, const workloads::Resize2d& r,
                                    std::int64_t depth, double scale);
  std::vector<Cuts> nchw_cuts(const std::string& tensor, const Shape& shape) const;
  bool lower_1d(const onnx::NodeProto& n, Op op);

  // Volumetric Conv, ConvTranspose, MaxPool and AveragePool (lower_conv3d.cpp).
  bool lower_3d(const onnx::NodeProto& n);
  struct DepthWindow;
  std::vector<const BlockedTensor*> depth_taps(const std::string& base, const BlockedTensor& x,
                                               const DepthWindow& w, double fill);
  const BlockedTensor& stack_taps(const std::string& base,
                                  const std::vector<const BlockedTensor*>& taps);
  void window_3d(const onnx::NodeProto& n, onnx::NodeProto m, DepthWindow w,
                 const std::string& auto_pad);
  const BlockedTensor& conv_taps(const onnx::NodeProto& n, onnx::NodeProto m,
                                 const std::vector<const BlockedTensor*>& taps,
                                 const std::string& base);
  void conv_transpose_3d(const onnx::NodeProto& n, onnx::NodeProto m, DepthWindow w,
                         const std::string& auto_pad);
  const BlockedTensor* place_taps(const std::string& base,
                                  const std::vector<const BlockedTensor*>& taps,
                                  const DepthWindow& w);
  const BlockedTensor& interleave(const std::string& name,
                                  const std::vector<const BlockedTensor*>& slots);
  const BlockedTensor& pool_taps(const std::string& base, const onnx::NodeProto& m,
                                 const std::vector<const BlockedTensor*>& taps,
                                 const DepthWindow& w, std::int64_t depth);

  // Recurrent ops, LSTM, GRU and RNN, unrolled (lower_rnn.cpp: RnnLowering).
  void recurrent(const onnx::NodeProto& n);
  friend class RnnLowering;

  // Shape ops (lower_shape.cpp).
  void alias(const onnx::NodeProto& n);
  void shape_of(const onnx::NodeProto& n);
  void transpose(const onnx::NodeProto& n);
  void expand(const onnx::NodeProto& n);
  void reshape(const onnx::NodeProto& n);
  void concat(const onnx::NodeProto& n);
  void split(const onnx::NodeProto& n);
  void slice(const onnx::NodeProto& n);
  void tile(const onnx::NodeProto& n);
  void depth_space(const onnx::NodeProto& n);
  void gather(const onnx::NodeProto& n);
  void gather_rows(const onnx::NodeProto& n, std::size_t axis);
  void scatter_nd(const onnx::NodeProto& n);  // lower_scatter.cpp
  const BlockedTensor& around_box(const std::string& name, const BlockedTensor& data,
                                  const BlockedTensor& box, const Shape& offset);
  const BlockedTensor& select(const std::string& name, const BlockedTensor& a, const Shape& offset,
                              const Shape& length);
  const BlockedTensor& reshaped(const std::string& name, const BlockedTensor& a,
                                const Shape& shape);

  ImportOptions options_;
  std::int64_t opset_;
  workloads::BlockedProgram p_;
  std::map<std::string, Value> values_;
  std::vector<ConstantTensor> constants_;
  std::int64_t parameters_ = 0;
};

/// `s` with the axes from `axis` on merged into one (the 2-D coercion of Softmax before opset 13
/// and LayerNormalization's rows); a leading extent 1 when `axis` is 0.
Shape merged_from(const Shape& s, std::int64_t axis);

/// The (low, high) padding of auto_pad SAME_UPPER (`upper`) or SAME_LOWER along an axis of
/// extent `in`: the output has ceil(in / stride) elements, the odd padding element at the end
/// (upper) or the start.
std::pair<std::int64_t, std::int64_t> same_pads(bool upper, std::int64_t in, std::int64_t kernel,
                                                std::int64_t stride, std::int64_t dil);

/// Output extent of a window along one axis (floor, or ceil_mode's ceil where the last window
/// starts inside the input or its low padding); std::runtime_error when the window does not fit.
std::int64_t window_out(std::int64_t in, std::int64_t pad_lo, std::int64_t pad_hi,
                        std::int64_t kernel, std::int64_t stride, std::int64_t dil, bool ceil);

/// ConvTranspose's output extent along one axis (input extent `in`, kernel k, stride s,
/// dilation d, output padding `out_pad`) and its low padding `pad_lo`, from the pads
/// (`pad_lo_attr`, `pad_hi_attr`), `auto_pad` or the wanted extent `want` (output_shape; -1 when
/// absent): ONNX's formulas, total padding = the full extent s (in - 1) + out_pad + (k - 1) d + 1 -
/// the output's.
std::int64_t transposed_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t d,
                            std::int64_t out_pad, const std::string& auto_pad, std::int64_t want,
                            std::int64_t pad_lo_attr, std::int64_t pad_hi_attr,
                            std::int64_t& pad_lo);

/// Block counts of the automatic partition of an op output of shape `shape` for P devices:
/// dimensions in decreasing extent (ties: the outer one first) each take min(extent, the
/// blocks still needed) until the product reaches P (docs/onnx.md).
std::vector<std::int64_t> auto_parts(const Shape& shape, int devices);

}  // namespace doppler::onnx_import
