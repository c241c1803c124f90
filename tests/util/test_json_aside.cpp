// Long strings set aside before parsing (json_aside.hpp): which strings go (a hand-made document),
// and that parsing the text with placeholders and reading them back gives what parsing the source
// gives, on seeded random documents (the reference: nlohmann's parse of the source).
#include <algorithm>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "doppler/util/json_aside.hpp"

namespace doppler {
namespace {

using nlohmann::json;

// `j` with every string read through aside_contents (placeholders replaced by their strings).
json resolved(const json& j, std::string_view source, const std::vector<AsideSpan>& spans) {
  if (j.is_string())
    return std::string(aside_contents(j.get_ref<const std::string&>(), source, spans));
  if (j.is_array()) {
    json out = json::array();
    for (const json& e : j) out.push_back(resolved(e, source, spans));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [k, v] : j.items()) out[k] = resolved(v, source, spans);
    return out;
  }
  return j;
}

std::size_t lines(std::string_view s) {
  return std::count(s.begin(), s.end(), '\n');
}

TEST(JsonAside, OnlyLongUnescapedValuesOfTheNamedMembers) {
  const std::string long_a(40, 'A'), long_b(40, 'B'), short_c(5, 'C');
  const std::string source =
      "{\"data\": \"" + long_a + "\",\n \"data2\": \"" + long_b + "\",\n \"x\": {\"data\" :\n \"" +
      long_b + "\"},\n \"name\": \"" + long_a + "\", \"list\": [\"data\", \"" + long_a +
      "\"],\n \"e\": {\"data\": \"" + long_a + "\\\"\"}, \"s\": {\"data\": \"" + short_c +
      "\"}, \"n\": {\"data\": 5}, \"\\\"data\": \"" + long_b + "\"}";
  ASSERT_TRUE(json::accept(source));
  const auto aside = set_aside_long_strings(source, {"data"}, 10);
  ASSERT_TRUE(aside.has_value());
  // The two "data" values of 40 characters; not data2's, name's, the array's, the one with an
  // escape, the short one, nor the value of the key "\"data" (another name).
  ASSERT_EQ(aside->spans.size(), 2u);
  EXPECT_EQ(source.substr(aside->spans[0].offset, aside->spans[0].size), long_a);
  EXPECT_EQ(source.substr(aside->spans[1].offset, aside->spans[1].size), long_b);
  // Contents that are not printable ASCII stay in the document: a line break or a tab (invalid
  // JSON there), a non-ASCII character.
  for (const char* odd : {"\n", "\t", "\xc3\xa9"}) {
    const std::string text = "{\"data\": \"" + long_a + odd + long_a + "\"}";
    EXPECT_FALSE(set_aside_long_strings(text, {"data"}, 10).has_value()) << odd;
  }
  const json parsed = json::parse(aside->text);
  EXPECT_EQ(parsed["data"], std::string("\0"
                                        "0",
                                        2));
  EXPECT_EQ(parsed["x"]["data"], std::string("\0"
                                             "1",
                                             2));
  EXPECT_EQ(lines(aside->text), lines(source));
  EXPECT_EQ(resolved(parsed, source, aside->spans), json::parse(source));
  EXPECT_FALSE(set_aside_long_strings(source, {"data"}, 41).has_value());
  // A source with the placeholders' escape \u0000 anywhere, before or after: nothing set aside.
  EXPECT_FALSE(set_aside_long_strings("[\"\\u0000\", " + source + "]", {"data"}, 10));
  EXPECT_FALSE(set_aside_long_strings("[" + source + ", \"\\u0000\"]", {"data"}, 10));
  EXPECT_TRUE(set_aside_long_strings("[" + source + ", \"\\u0001\"]", {"data"}, 10));
  EXPECT_FALSE(set_aside_long_strings(source, {"other"}, 10).has_value());
}

TEST(JsonAside, OtherStringsReadAsThemselves) {
  const std::vector<AsideSpan> spans = {{2, 3}};
  const std::string_view source = "..abc..";
  EXPECT_EQ(aside_contents(std::string("\0"
                                       "0",
                                       2),
                           source, spans),
            "abc");
  EXPECT_EQ(aside_contents(std::string("\0"
                                       "1",
                                       2),
                           source, spans),
            std::string("\0"
                        "1",
                        2));
  EXPECT_EQ(aside_contents(std::string("\0"
                                       "x",
                                       2),
                           source, spans),
            std::string("\0"
                        "x",
                        2));
  EXPECT_EQ(aside_contents("0", source, spans), "0");
  EXPECT_EQ(aside_contents(std::string("\0"
                                       "0",
                                       2),
                           source, {}),
            std::string("\0"
                        "0",
                        2));
}

// A random value (an object at the root): objects whose members are often "data", long strings
// (half of them with characters to escape), arrays, short strings, numbers, literals.
json random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(depth == 0 ? 5 : 0, depth > 3 ? 3 : 6);  // root: {}
  const auto text = [&](std::size_t n) {
    std::string s(n, 'x');
    // Now and then a NUL (dumped as \u0000, the placeholders' escape: nothing is set aside).
    for (char& c : s) c = rng() % 20000 == 0 ? '\0' : "AZaz09+/= \"\\\n\t"[rng() % 14];
    if (rng() % 2)
      std::replace_if(
          s.begin(), s.end(), [](char c) { return !std::isalnum(c); }, 'Q');
    return s;
  };
  switch (pick(rng)) {
    case 0:
      if (rng() % 3 == 0) return rng() % 2 == 0;
      return static_cast<int>(rng() % 1000) - 500;
    case 1:
      return text(rng() % 8);
    case 2:
    case 3:
      return text(20 + rng() % 300);
    case 4: {
      json a = json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        a.push_back(random_value(rng, depth + 1));
      return a;
    }
    default: {
      json o = json::object();
      for (int i = static_cast<int>(1 + rng() % 4); i > 0; --i) {
        const std::string key = rng() % 2 ? "data" : text(1 + rng() % 5);
        o[key] = random_value(rng, depth + 1);
      }
      return o;
    }
  }
}

TEST(JsonAside, ParsingWithPlaceholdersGivesTheSourcesDocument) {
  std::mt19937 rng(20261207);
  int set_aside = 0;
  for (int doc = 0; doc < 300; ++doc) {
    const json value = random_value(rng, 0);
    const std::string source = value.dump(rng() % 2 ? -1 : 2);
    const auto aside = set_aside_long_strings(source, {"data"}, 64);
    if (!aside) continue;
    set_aside += static_cast<int>(aside->spans.size());
    EXPECT_EQ(lines(aside->text), lines(source)) << source;
    EXPECT_EQ(resolved(json::parse(aside->text), source, aside->spans), value) << source;
  }
  EXPECT_GT(set_aside, 50);  // the property was exercised
}

// Corrupted documents: the text with placeholders is valid JSON exactly when the source is (so
// the parser reports a broken file as it would have), and then means the same document.
TEST(JsonAside, ValidExactlyWhenTheSourceIs) {
  std::mt19937 rng(7);
  const std::string noise = std::string("\"\\:,{}[]\n AZ09\x01\x7f") + "\xc3\xa9";
  int checked = 0, valid = 0;
  for (int doc = 0; doc < 2000; ++doc) {
    std::string source = random_value(rng, 0).dump(rng() % 2 ? -1 : 1);
    for (int hits = 1 + static_cast<int>(rng() % 3); hits > 0; --hits)
      source[rng() % source.size()] = noise[rng() % noise.size()];
    const auto aside = set_aside_long_strings(source, {"data"}, 64);
    if (!aside) continue;
    ++checked;
    const bool ok = json::accept(source);
    ASSERT_EQ(json::accept(aside->text), ok) << source;
    EXPECT_EQ(lines(aside->text), lines(source));
    if (!ok) continue;
    ++valid;
    EXPECT_EQ(resolved(json::parse(aside->text), source, aside->spans), json::parse(source));
  }
  EXPECT_GT(checked, 300);
  EXPECT_GT(valid, 20);
  EXPECT_GT(checked - valid, 100);
}

TEST(JsonAside, MalformedTextIsLeftToTheParser) {
  const std::string cut = "{\"data\": \"" + std::string(100, 'A');  // unterminated
  EXPECT_FALSE(set_aside_long_strings(cut, {"data"}, 10).has_value());
  const std::string quote_at_end = "{\"data\": \"" + std::string(100, 'A') + "\\\"";
  EXPECT_FALSE(set_aside_long_strings(quote_at_end, {"data"}, 10).has_value());
  const auto partial = set_aside_long_strings(
      "{\"data\": \"" + std::string(20, 'A') + "\", \"x\": \"", {"data"}, 10);
  ASSERT_TRUE(partial.has_value());
  EXPECT_FALSE(json::accept(partial->text));
}

}  // namespace
}  // namespace doppler
