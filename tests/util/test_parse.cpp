// Strict number parsing and field splitting.
#include <cmath>

#include <gtest/gtest.h>

#include "doppler/util/parse.hpp"

namespace doppler {
namespace {

TEST(Parse, Int64AcceptsWholeTokensOnly) {
  std::int64_t v = 0;
  std::string why;
  EXPECT_TRUE(parse_int64(" 42 ", v, why));
  EXPECT_EQ(v, 42);
  EXPECT_TRUE(parse_int64("+7", v, why));
  EXPECT_EQ(v, 7);
  EXPECT_TRUE(parse_int64("-9223372036854775808", v, why));
  EXPECT_EQ(v, INT64_MIN);
  EXPECT_FALSE(parse_int64("9223372036854775808", v, why));
  EXPECT_NE(why.find("out of range"), std::string::npos);
  EXPECT_FALSE(parse_int64("12x", v, why));
  EXPECT_FALSE(parse_int64("1.5", v, why));
  EXPECT_FALSE(parse_int64("", v, why));
}

TEST(Parse, DoubleRejectsNanInfAndOverflow) {
  double x = 0;
  std::string why;
  EXPECT_TRUE(parse_finite_double("1e12", x, why));
  EXPECT_EQ(x, 1e12);
  EXPECT_TRUE(parse_finite_double("68719476736", x, why));
  EXPECT_EQ(x, 68719476736.0);
  EXPECT_TRUE(parse_finite_double("1e-400", x, why)) << why;  // underflow is harmless
  EXPECT_EQ(x, 0.0);
  EXPECT_FALSE(parse_finite_double("nan", x, why));
  EXPECT_FALSE(parse_finite_double("-inf", x, why));
  EXPECT_FALSE(parse_finite_double("1e400", x, why));
  EXPECT_NE(why.find("out of range"), std::string::npos);
  EXPECT_FALSE(parse_finite_double("0x10", x, why));
  EXPECT_FALSE(parse_finite_double("1,5", x, why));
}

TEST(Parse, SplitFieldsDropsOneTrailingEmptyField) {
  EXPECT_EQ(split_fields("1, 2, 3,", ',').size(), 3u);
  EXPECT_EQ(split_fields("1, 2, 3", ',').size(), 3u);
  EXPECT_EQ(split_fields("", ',').size(), 0u);
  EXPECT_EQ(split_fields("  ", ',').size(), 0u);
  EXPECT_EQ(split_fields("1,,2", ',').size(), 3u);  // an inner empty field is kept (an error later)
}

}  // namespace
}  // namespace doppler
