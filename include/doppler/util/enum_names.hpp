#pragma once
// The one way an enum's values are named and parsed: a table of (value, name) pairs, written
// once beside the enum, read by enum_name() and parse_enum().
#include <array>
#include <cstddef>
#include <string_view>
#include <vector>

namespace doppler {

/// One value of an enum and the name a person types and reads.
template <class E>
struct EnumName {
  E value;                ///< the value
  std::string_view name;  ///< its name (a string literal)
};

/// Throws InputError "unknown <what> '<name>' (expected a, b or c)".
[[noreturn]] void throw_unknown_name(std::string_view what, std::string_view name,
                                     const std::vector<std::string_view>& names);

/// The name of `value` in `names` ("?" when the table lacks it).
template <class E, std::size_t N>
constexpr std::string_view enum_name(const std::array<EnumName<E>, N>& names, E value) {
  for (const auto& n : names)
    if (n.value == value) return n.name;
  return "?";
}

/// The value called `name` in `names`; InputError naming `what` and the valid names otherwise.
template <class E, std::size_t N>
E parse_enum(const std::array<EnumName<E>, N>& names, std::string_view name,
             std::string_view what) {
  for (const auto& n : names)
    if (n.name == name) return n.value;
  std::vector<std::string_view> valid;
  for (const auto& n : names) valid.push_back(n.name);
  throw_unknown_name(what, name, valid);
}

}  // namespace doppler
