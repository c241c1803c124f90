#pragma once
// The kind of a block operation. Our names and the reference's (einsummable) type names both
// parse; `op_kind_name` prints ours.
#include <optional>
#include <string_view>

namespace doppler {

/// What a block operation does. The reference (einsummable) types map as:
/// einsummable -> einsum, formation -> aggregate, squeezer -> squeeze, complexer -> complexer,
/// input, fill, select -> same name.
enum class OpKind : unsigned char {
  einsum,       ///< contraction / matmul block (reference: einsummable)
  aggregate,    ///< sum (or max) of partial blocks (reference: formation)
  elementwise,  ///< pointwise map of one or more blocks
  input,        ///< an input tensor block (not computed; placers may pin or ignore it)
  fill,         ///< a constant block (e.g. a causal mask)
  select,       ///< a slice / gather of a block
  squeeze,      ///< a reshape that drops unit dimensions (reference: squeezer)
  complexer,    ///< a real <-> complex view change (reference: complexer)
  other,        ///< anything else
};

/// Number of OpKind values.
inline constexpr int kNumOpKinds = 9;

/// Our name of `k` ("einsum", "aggregate", ...).
std::string_view op_kind_name(OpKind k);

/// The reference (einsummable) type name of `k` ("einsummable", "formation", ...), or our name
/// when the reference has no such type.
std::string_view op_kind_reference_name(OpKind k);

/// Parses our names and the reference's seven type names; nullopt when unknown.
std::optional<OpKind> parse_op_kind(std::string_view name);

}  // namespace doppler
