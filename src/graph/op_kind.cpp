#include "doppler/graph/op_kind.hpp"

#include <array>
#include <utility>

namespace doppler {

namespace {
constexpr std::array<std::string_view, kNumOpKinds> kNames = {"einsum",  "aggregate", "elementwise",
                                                              "input",   "fill",      "select",
                                                              "squeeze", "complexer", "other"};
constexpr std::array<std::string_view, kNumOpKinds> kReferenceNames = {
    "einsummable", "formation", "elementwise", "input", "fill",
    "select",      "squeezer",  "complexer",   "other"};
}  // namespace

std::string_view op_kind_name(OpKind k) {
  return kNames[static_cast<std::size_t>(k)];
}

std::string_view op_kind_reference_name(OpKind k) {
  return kReferenceNames[static_cast<std::size_t>(k)];
}

std::optional<OpKind> parse_op_kind(std::string_view name) {
  for (std::size_t i = 0; i < kNames.size(); ++i)
    if (name == kNames[i] || name == kReferenceNames[i]) return static_cast<OpKind>(i);
  return std::nullopt;
}

}  // namespace doppler
