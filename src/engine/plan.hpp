#pragma once
// Internal: a graph compiled into executable block kernels. Compilation resolves every operand
// to a strided view of its producer's buffer, plans each einsum as batched SGEMM calls, caches
// input, fill and load values and rotary tables, and sizes synthetic kernels; running a kernel
// then only reads its plan.
#include <cstdint>
#include <vector>

#include "device_ops.hpp"
#include "strided.hpp"

#include "doppler/engine/options.hpp"
#include "doppler/graph/graph.hpp"
#include "doppler/graph/resize_coords.hpp"

namespace doppler::engine_detail {

/// One operand: a region of a producer's output buffer.
struct View {
  NodeId src = -1;          ///< producer
  std::int64_t offset = 0;  ///< first element of the region in the producer's buffer
  Dims shape;               ///< region extents
  Dims strides;             ///< strides of the region's dimensions in the producer's buffer
};

/// What a kernel does.
enum class KernelOp : std::uint8_t {
  constant,          ///< copy cached values (input, fill, load)
  gemm,              ///< einsum as batched SGEMM
  einsum_loop,       ///< einsum by a plain loop (specs that are not one batched GEMM)
  aggregate,         ///< elementwise sum / max of k operands
  pieces,            ///< assemble / select: strided copies of operand regions into the output
  copy,              ///< reshape / transpose: one strided copy of the operand (KernelPlan::copy_*)
  unary,             ///< elementwise f(x)
  binary,            ///< elementwise f(a, b) with broadcasting
  where,             ///< elementwise cond != 0 ? a : b, broadcasting (operands cond, a, b)
  scan,              ///< running sums along the last axis (p0: exclusive, p1: reverse)
  topk,              ///< the first elements of each last-axis row in value order (p0: largest,
                     ///< p1: indices); as many per row as the output's last extent
  reduce,            ///< last-axis reduction
  rotary,            ///< rotary position embedding (cached cos/sin table)
  synthetic,         ///< a sized SGEMM plus a checksum of the inputs' first elements
  conv2d,            ///< 2-D convolution of an NCHW window (KernelPlan::window)
  maxpool2d,         ///< max pooling of an NCHW window
  avgpool2d,         ///< average pooling of an NCHW window
  gather,            ///< rows of operand 0 at the indices of operand 1 (dev::gather_row); p1:
                     ///< an element of each last-axis row per index instead (gather_along)
  resize2d,          ///< nearest or linear resize of an NCHW window (KernelPlan::window)
  conv_transpose2d,  ///< transposed 2-D convolution of an NCHW window (KernelPlan::window)
  cell,              ///< fused recurrent step (KernelPlan::cell: lstm_cell, lstm_hidden, gru_cell)
  empty,             ///< nothing
};

/// Elementwise or reduction function of unary / binary / aggregate / reduce kernels (defined
/// with the element functions that a GPU backend shares, device_ops.hpp).
using Fn = dev::Fn;

/// One operand of a GEMM as a row-major matrix per batch element.
struct GemmOperand {
  bool trans = false;   ///< stored transposed (BLAS Trans)
  bool pack = false;    ///< gathered into scratch first (then never transposed)
  std::int64_t ld = 1;  ///< leading dimension
  Dims pack_shape;      ///< pack: extents of (row labels..., column labels...)
  Dims pack_strides;    ///< pack: their strides in the operand's buffer
  Dims pack_dst;        ///< pack: contiguous strides of pack_shape
  Dims batch_strides;   ///< stride of each batch label in the operand's buffer
};

/// An einsum as `prod(batch_shape)` SGEMM calls C[m, n] = A[m, k] B[k, n].
struct GemmPlan {
  std::int64_t m = 1, n = 1, k = 1;
  Dims batch_shape;  ///< extents of the batch labels
  GemmOperand a, b;
  int c_mode = 0;            ///< 0: C in place (ldc), 1: C^T in place (ldc), 2: scatter
  std::int64_t ldc = 1;      ///< leading dimension of C (modes 0, 1)
  Dims c_batch_strides;      ///< stride of each batch label in the output
  Dims scatter_shape;        ///< mode 2: extents of (M labels..., N labels...)
  Dims scatter_strides;      ///< mode 2: their strides in the output
  Dims scatter_src;          ///< mode 2: contiguous strides of scatter_shape
  std::int64_t scratch = 0;  ///< floats of scratch needed
};

/// A general einsum loop: every label's extent and stride in each operand and the output.
struct EinsumLoop {
  Dims extents;                  ///< one per label
  std::vector<Dims> op_strides;  ///< per operand, per label (0 when absent)
  Dims out_strides;              ///< per label (0 when summed over)
};

/// assemble / select: one operand region copied to `dst_offset` of the output.
struct Piece {
  std::int64_t dst_offset = 0;
};

/// conv2d / maxpool2d / avgpool2d / resize2d (docs/exec.md, windowed kernels): the geometry of the
/// window [nb, cw, rows, in_w] (operands 0 .. pieces - 1 stacked along rows) and of the output
/// block [nb, cb, oh, ow] at global channel o0 and row y0.
struct WindowPlan {
  std::int64_t pieces = 1;                  ///< window operands
  std::int64_t nb = 1, cw = 1, rows = 1;    ///< window batch, channels and rows
  std::int64_t in_h = 1, in_w = 1;          ///< input height and width
  std::int64_t row0 = 0, c0 = 0;            ///< global row and channel of the window's first
  std::int64_t cb = 1, oh = 1, ow = 1;      ///< output block channels, rows and width
  std::int64_t o0 = 0, y0 = 0;              ///< global channel and row of the output block
  std::int64_t kh = 1, kw = 1;              ///< window extent
  std::int64_t sh = 1, sw = 1;              ///< stride
  std::int64_t ph = 0, pw = 0;              ///< top and left padding
  std::int64_t dh = 1, dw = 1;              ///< dilation
  std::int64_t icg = 1, out_per_group = 1;  ///< conv2d: input channels and outputs per group
  bool bias = false;                        ///< conv2d: operand pieces + 1 is the bias
  bool include_pad = false;                 ///< avgpool2d: divide by kh kw
  bool pack_weight = false;                 ///< conv2d: weight gathered into scratch first
  bool direct_1x1 = false;                  ///< conv2d: the window rows are the GEMM columns
  Dims col_lo, col_hi, col_off;  ///< per kernel column: output columns [lo, hi) read input
                                 ///< columns inside the input, x sw + off
  Dims col_count;                ///< per output column: kernel columns inside the input
  std::int64_t scratch = 0;      ///< floats of scratch needed
  std::vector<float> col_w;      ///< resize2d (linear): per output column, the weight of col_hi
                                 ///< (col_lo, col_hi: the input columns it reads)
  resize::Axis ay, ax;           ///< resize2d: the rows and the columns
  bool linear = false;           ///< resize2d: linear, else nearest
  resize::Rounding rounding = resize::Rounding::round_prefer_floor;  ///< resize2d: nearest's
};

/// The compiled kernel of one node.
struct KernelPlan {
  KernelOp op = KernelOp::empty;
  Fn fn = Fn::add;
  float p0 = 1, p1 = 0;       ///< scale / eps (pow: exponent; clip: min, max;
                              ///< hardsigmoid: alpha, beta)
  std::int64_t numel = 1;     ///< output elements
  Dims shape;                 ///< output shape
  std::vector<View> in;       ///< operands in kernel order (synthetic / empty: predecessors)
  std::vector<float> values;  ///< constant: the values; rotary: (cos, sin) per element pair
  GemmPlan gemm;
  EinsumLoop loop;
  std::vector<Piece> pieces;  ///< one per operand (pieces)
  std::vector<Dims> bcast;    ///< binary / where: per operand, strides over the output's dims
  Dims copy_shape;            ///< copy: the extents iterated
  Dims copy_src;              ///< copy: their strides in the operand's buffer (from its offset)
  Dims copy_dst;              ///< copy: their strides in the output
  std::int64_t copy_start = 0;  ///< copy: the first element read, from the operand's offset
                                ///< (a reversed axis starts at its far end)
  WindowPlan window;          ///< conv2d / maxpool2d / avgpool2d
  dev::CellArgs cell;         ///< cell: which step, units per row, operand row strides
  std::int64_t sm = 0, sk = 0, reps = 0;  ///< synthetic: SGEMM sm x sk x sm, `reps` times
  double flops = 0;                       ///< FLOPs executed
};

/// The geometry of a gather kernel (rows of a table, or with p1 elements of each last-axis row:
/// gather_along) as the device functions take it, all but the element count n.
dev::GatherArgs gather_args(const KernelPlan& k);

/// What a scan or topk kernel does to each row (dev::ScanArgs's mode: exclusive and reverse, or
/// k, largest and indices), from its plan; the rows' layout is the caller's.
void set_row_mode(const KernelPlan& k, dev::ScanArgs& a);

/// The shape `d` as the device functions take it (device_ops.hpp; rank <= dev::kMaxRank).
dev::Shape device_shape(const Dims& d);
/// The geometry of `w` as the device functions take it, with the window's strides.
dev::Window device_window(const WindowPlan& w, std::int64_t sn, std::int64_t sc, std::int64_t sy);

/// A compiled graph.
struct Plan {
  KernelMode mode = KernelMode::real;  ///< never automatic
  double scale = 0;                    ///< synthetic FLOPs (and bytes) per unit of cost
  std::vector<KernelPlan> kernels;     ///< per node
  std::vector<float> syn_a, syn_b;     ///< synthetic operands shared by every worker
  std::int64_t syn_max_m = 0, syn_max_k = 0;
  double total_flops = 0;
};

/// Largest synthetic SGEMM dimensions.
inline constexpr std::int64_t kSynMaxM = 128, kSynMaxK = 2048;

/// Compiles every node of `g`. InputError (naming the node) when a kernel cannot be executed.
Plan compile_plan(const Graph& g, KernelMode mode, double scale);

/// Runs node v's kernel: `inputs[i]` is the buffer holding operand i's producer on this device,
/// `out` the node's buffer (plan.kernels[v].numel floats), `scratch` per-worker memory.
void run_kernel(const Plan& plan, NodeId v, const float* const* inputs, float* out,
                std::vector<float>& scratch);

/// Compiles one einsum (exposed for the plan and its tests).
void plan_einsum(const std::string& spec, const std::vector<View>& ops, const Dims& out_shape,
                 KernelPlan& k);
/// Runs a compiled einsum.
void run_einsum(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch);

/// Compiles a conv2d / conv_transpose2d / maxpool2d / avgpool2d node (operands already in
/// k.in); sets k.flops to the documented count. InputError (without the node) when the
/// description is malformed.
void plan_window(const ExecDesc& e, KernelPlan& k);
/// Runs a compiled windowed kernel.
void run_window(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch);

/// The window of a windowed kernel: element (n, c, r, x) at p[n sn + c sc + r sy + x].
struct WindowRef {
  const float* p = nullptr;
  std::int64_t sn = 0, sc = 0, sy = 0;
};
/// The window in place (one piece) or gathered at `s` (advanced past it).
WindowRef window_ref(const KernelPlan& k, const float* const* inputs, float*& s);
/// conv2d / conv_transpose2d: checks the weight region [cb, icg, KH, KW] and the bias and sets
/// icg, kh, kw and pack_weight. InputError when malformed.
void check_conv_weight(const ExecDesc& e, const KernelPlan& k, WindowPlan& w);
/// Longest run of the block's output channels in one group.
std::int64_t longest_group_run(const WindowPlan& w);

/// conv2d / conv_transpose2d: every output plane [oh, ow] at its channel's bias (0 without one).
void fill_conv_bias(const KernelPlan& k, const float* const* inputs, float* out);

/// The conv_transpose2d part of plan_window (kernel_conv_transpose.cpp), after the window.
void plan_conv_transpose(const ExecDesc& e, KernelPlan& k);
/// Runs a compiled conv_transpose2d kernel: SGEMM of the packed weight and the window, then
/// the columns added onto the output at the bias (dev::col2im_element).
void run_conv_transpose(const KernelPlan& k, const float* const* inputs, float* out,
                        std::vector<float>& scratch);

/// Integer attribute `name` of a windowed kernel, >= `min`; `fallback` when absent unless
/// `required` (InputError naming the kernel otherwise).
std::int64_t window_attr(const ExecDesc& e, const std::string& name, bool required,
                         std::int64_t fallback, std::int64_t min);
/// Reads the window attributes (`pieces`, `row0`, `c0`, `in_h`, `in_w`) into `w` and checks the
/// output block and the window pieces, which `extra` operands follow. InputError when malformed.
void read_window(const ExecDesc& e, const KernelPlan& k, std::size_t extra, WindowPlan& w);

/// Compiles a resize2d node (operands already in k.in; kernel_resize.cpp); sets k.flops.
/// InputError (without the node) when the description is malformed.
void plan_resize(const ExecDesc& e, KernelPlan& k);
/// Runs a compiled resize2d kernel.
void run_resize(const KernelPlan& k, const float* const* inputs, float* out,
                std::vector<float>& scratch);

}  // namespace doppler::engine_detail
