// Numbers as text without fmt (doppler/util/number_text.hpp), against printf's and fmt's
// spellings worked out by hand.
#include <charconv>
#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "doppler/util/number_text.hpp"

namespace doppler {
namespace {

TEST(NumberText, ShortestReadsBackAndIsShortest) {
  EXPECT_EQ(shortest_text(0.1), "0.1");
  EXPECT_EQ(shortest_text(0.25), "0.25");
  EXPECT_EQ(shortest_text(3.0), "3");
  EXPECT_EQ(shortest_text(-1.5), "-1.5");
  EXPECT_EQ(shortest_text(1e20), "1e+20");
  EXPECT_EQ(shortest_text(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(shortest_text(INFINITY), "inf");
  for (double x : {0.1, 1.0 / 3, 6.02214076e23, 5e-324, 123456.789}) {
    const std::string t = shortest_text(x);
    double back = 0;
    std::from_chars(t.data(), t.data() + t.size(), back);
    EXPECT_EQ(back, x) << t;
  }
}

TEST(NumberText, SignificantAndFixedDigitsAsPrintf) {
  EXPECT_EQ(sig_text(1234.5678, 4), "1235");
  EXPECT_EQ(sig_text(0.000123456, 4), "0.0001235");
  EXPECT_EQ(sig_text(12345678.0, 4), "1.235e+07");
  EXPECT_EQ(sig_text(2.0, 4), "2");
  EXPECT_EQ(fixed_text(2.5, 3), "2.500");
  EXPECT_EQ(fixed_text(-0.0004, 3), "-0.000");
  EXPECT_EQ(fixed_text(1e6 / 7, 1), "142857.1");
  EXPECT_EQ(fixed_text(1e300, 0).size(), 301u);  // longer than any fixed buffer
}

TEST(NumberText, NumberedNames) {
  EXPECT_EQ(numbered("l", 3), "l3");
  EXPECT_EQ(numbered("sage", 0), "sage0");
  EXPECT_EQ(numbered("m", -2), "m-2");
}

}  // namespace
}  // namespace doppler
