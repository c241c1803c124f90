#pragma once
// Checks of the placers' declared options (PlacerInfo::options) shared by the heuristics' and
// the learned methods' tests: well-formed declarations and a value a spec may give an option.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "doppler/heuristics/placer.hpp"
#include "doppler/util/parse.hpp"

namespace doppler::test {

/// A value a spec may give `o`: its default, else one of its type.
inline std::string sample_value(const PlacerOption& o) {
  if (has_fixed_default(o)) return o.default_value;
  switch (o.type) {
    case OptionType::number:
      return "0.5";
    case OptionType::integer:
      return "1";
    case OptionType::choice:
      return o.choices.front();
    case OptionType::string:
    case OptionType::path:
      return "x";
  }
  return "x";
}

/// Every option of `info` has a unique name, a description, a default of its type, and choices
/// exactly when it is a choice (its fixed default among them).
inline void expect_well_formed(const PlacerInfo& info) {
  SCOPED_TRACE(info.name);
  std::set<std::string> names;
  for (const PlacerOption& o : info.options) {
    SCOPED_TRACE(o.name);
    EXPECT_TRUE(names.insert(o.name).second) << "declared twice";
    EXPECT_FALSE(o.name.empty());
    EXPECT_FALSE(o.description.empty());
    EXPECT_EQ(o.choices.empty(), o.type != OptionType::choice);
    if (!has_fixed_default(o)) continue;
    std::string why;
    double x = 0;
    std::int64_t i = 0;
    const bool valid =
        o.type == OptionType::number    ? parse_finite_double(o.default_value, x, why)
        : o.type == OptionType::integer ? parse_int64(o.default_value, i, why)
        : o.type == OptionType::choice
            ? std::find(o.choices.begin(), o.choices.end(), o.default_value) != o.choices.end()
            : true;
    EXPECT_TRUE(valid) << "default '" << o.default_value << "' " << why;
  }
}

/// Whether `info` declares an option named `key`.
inline bool declares(const PlacerInfo& info, const std::string& key) {
  for (const PlacerOption& o : info.options)
    if (o.name == key) return true;
  return false;
}

/// One option a factory reads: the method's name when the call spells it, and the key.
struct OptionRead {
  std::string method;  ///< "" when the call names it through a variable (or take_string)
  std::string key;     ///< the option
};

/// Every take_number / take_integer / take_fraction / take_string call in the source file `file`.
inline std::vector<OptionRead> options_read(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  std::vector<OptionRead> out;
  const std::regex numeric(
      R"re(take_(?:number|integer|fraction)\(\s*\w+,\s*(?:"([\w-]+)"|\w+),\s*"(\w+)")re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), numeric); it != std::sregex_iterator();
       ++it)
    out.push_back({(*it)[1].str(), (*it)[2].str()});
  const std::regex text_option(R"re(take_string\(\s*\w+,\s*"(\w+)")re");
  for (auto it = std::sregex_iterator(s.begin(), s.end(), text_option);
       it != std::sregex_iterator(); ++it)
    out.push_back({"", (*it)[1].str()});
  return out;
}

}  // namespace doppler::test
