// Anytime curves as SVG: step lines at the right coordinates, escaped labels, a legend entry per
// series.
#include <gtest/gtest.h>

#include "doppler/report/curves.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

TEST(CurvesSvg, DrawsAStepLineAtTheExpectedCoordinates) {
  // One series: 10 at 0 s, 5 at 1 s, run ends at 2 s; linear time axis. The plot area is
  // x 90..810 and y 40..440; y spans 5..10 padded by 3% of 5 (0.15) on each side.
  const CurveSeries s{"a<b>", {{0.0, 10.0}, {1.0, 5.0}}, 2.0};
  CurvesOptions opt;
  opt.log_seconds = false;
  opt.title = "t";
  const std::string svg = format_curves_svg({s}, opt);
  const auto y = [](double m) { return 40 + 400 * (10.15 - m) / 5.3; };
  char expected[128];
  std::snprintf(expected, sizeof expected, "points=\"90.0,%.1f 450.0,%.1f 450.0,%.1f 810.0,%.1f\"",
                y(10), y(10), y(5), y(5));
  EXPECT_NE(svg.find(expected), std::string::npos) << expected << "\n" << svg;
  EXPECT_NE(svg.find("a&lt;b&gt;: 5"), std::string::npos);  // legend: label and final value
  EXPECT_EQ(svg.find("a<b>"), std::string::npos);
}

TEST(CurvesSvg, ListsSeriesWithoutPointsAndRefusesNoSeries) {
  const CurveSeries drawn{"x", {{0.01, 3.0}}, 1.0};
  const CurveSeries none{"y", {}, 1.0};
  const std::string svg = format_curves_svg({drawn, none}, {});
  EXPECT_NE(svg.find("y: no improvement reported"), std::string::npos);
  std::size_t lines = 0;
  for (auto p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1))
    ++lines;
  EXPECT_EQ(lines, 1u);
  EXPECT_THROW(format_curves_svg({}, {}), InputError);
}

}  // namespace
}  // namespace doppler
