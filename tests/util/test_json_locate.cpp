// JSON pointer -> line mapping used for error messages.
#include <gtest/gtest.h>

#include "doppler/util/error.hpp"
#include "doppler/util/json_doc.hpp"
#include "doppler/util/json_locate.hpp"

namespace doppler {
namespace {

const char* kDoc = R"({
  "a": 1,
  "b": [
    {"x": "y"},
    {"x": [1,
           2]},
    3
  ],
  "c~d/e": "s\"}\n"
})";

TEST(JsonLocate, FindsLinesOfNestedValues) {
  EXPECT_EQ(json_line_of(kDoc, ""), 1);
  EXPECT_EQ(json_line_of(kDoc, "/a"), 2);
  EXPECT_EQ(json_line_of(kDoc, "/b"), 3);
  EXPECT_EQ(json_line_of(kDoc, "/b/0"), 4);
  EXPECT_EQ(json_line_of(kDoc, "/b/1/x/1"), 6);
  EXPECT_EQ(json_line_of(kDoc, "/b/2"), 7);
  EXPECT_EQ(json_line_of(kDoc, "/c~0d~1e"), 9);
  EXPECT_EQ(json_line_of(kDoc, "/nope"), 0);
  EXPECT_EQ(json_line_of(kDoc, "/b/9"), 0);
}

TEST(JsonDoc, SyntaxErrorNamesTheLine) {
  try {
    JsonDoc d("{\n  \"a\": 1,\n  \"b\": tru\n}", "f.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3);
    EXPECT_NE(std::string(e.what()).find("f.json:3: invalid JSON"), std::string::npos) << e.what();
  }
}

TEST(JsonDoc, TypeErrorsNameTheLineAndTypes) {
  JsonDoc d("{\n\"n\": \"x\",\n\"i\": 1.5\n}", "f.json");
  EXPECT_THROW(d.number(d.root()["n"], "/n"), InputError);
  try {
    d.integer(d.root()["i"], "/i", 0, 10);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f.json:3: expected an integer, found 1.5");
  }
}

TEST(JsonDoc, NumberOverflowIsAnErrorWithItsLine) {
  try {
    JsonDoc d("{\n\"a\": 1,\n\"big\": 1e999\n}", "f.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "f.json:3: invalid JSON: number overflow parsing '1e999'");
  }
}

}  // namespace
}  // namespace doppler
