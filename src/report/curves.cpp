#include "doppler/report/curves.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "doppler/report/xml.hpp"
#include "doppler/util/error.hpp"

namespace doppler {

namespace {

constexpr std::array<const char*, 10> kColour = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                                 "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
                                                 "#9c755f", "#bab0ac"};
constexpr double kLeft = 90, kTop = 40, kWidth = 720, kHeight = 400, kLegend = 260;

// The data ranges: seconds [x0, x1], makespans [y0, y1].
struct Frame {
  double x0 = std::numeric_limits<double>::infinity(), x1 = 0;
  double y0 = std::numeric_limits<double>::infinity(), y1 = 0;
  bool log = true;

  double x(double s) const {
    if (log) {
      const double a = std::log10(x0), b = std::log10(x1);
      return kLeft + kWidth * (std::log10(std::max(s, x0)) - a) / std::max(1e-12, b - a);
    }
    return kLeft + kWidth * (s - x0) / std::max(1e-300, x1 - x0);
  }
  double y(double m) const { return kTop + kHeight * (y1 - m) / std::max(1e-300, y1 - y0); }
};

Frame frame_of(const std::vector<CurveSeries>& series, const CurvesOptions& opt) {
  Frame f;
  f.log = opt.log_seconds;
  for (const CurveSeries& s : series) {
    for (const CurvePoint& p : s.curve) {
      f.x0 = std::min(f.x0, p.seconds);
      f.y0 = std::min(f.y0, p.makespan);
      f.y1 = std::max(f.y1, p.makespan);
    }
    f.x1 = std::max(f.x1, s.end_seconds);
    if (!s.curve.empty()) f.x1 = std::max(f.x1, s.curve.back().seconds);
  }
  if (opt.reference > 0) f.y0 = std::min(f.y0, opt.reference);
  if (!std::isfinite(f.x0)) f.x0 = 0;
  if (f.log) f.x0 = std::max(f.x0, 1e-4);
  if (f.x1 <= f.x0) f.x1 = f.x0 * 10 + 1e-3;
  if (!std::isfinite(f.y0)) f.y0 = 0, f.y1 = 1;
  const double pad = 0.03 * std::max(f.y1 - f.y0, 1e-12 * std::abs(f.y1));
  f.y0 -= pad;
  f.y1 += pad;
  return f;
}

// Axes with ticks: decades (log) or five steps (linear) in x, five steps in y.
std::string axes(const Frame& f, const CurvesOptions& opt) {
  std::string out = fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", kLeft,
      kTop, kWidth, kHeight);
  std::vector<double> xs;
  if (f.log) {
    for (double d = std::pow(10.0, std::floor(std::log10(f.x0))); d <= f.x1 * 1.0001; d *= 10)
      if (d >= f.x0 * 0.9999) xs.push_back(d);
  } else {
    for (int i = 0; i <= 5; ++i) xs.push_back(f.x0 + (f.x1 - f.x0) * i / 5);
  }
  for (double s : xs)
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" font-size=\"11\" text-anchor=\"middle\">{4:g} s</text>\n",
        f.x(s), kTop, kTop + kHeight, kTop + kHeight + 16, s);
  for (int i = 0; i <= 5; ++i) {
    const double m = f.y0 + (f.y1 - f.y0) * i / 5;
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" font-size=\"11\" text-anchor=\"end\">{5:.4g}</text>\n",
        kLeft, f.y(m), kLeft + kWidth, kLeft - 6, f.y(m) + 4, m);
  }
  out += fmt::format(
      "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"middle\">seconds{}</text>\n"
      "<text x=\"16\" y=\"{}\" font-size=\"12\" transform=\"rotate(-90 16 {})\" "
      "text-anchor=\"middle\">best makespan{}</text>\n",
      kLeft + kWidth / 2, kTop + kHeight + 34, f.log ? " (log scale)" : "", kTop + kHeight / 2,
      kTop + kHeight / 2, opt.unit.empty() ? "" : " (" + xml_escape(opt.unit) + ")");
  return out;
}

// One series as a step line (a value holds until the next improvement and to the run's end).
std::string step_line(const CurveSeries& s, const Frame& f, const char* colour) {
  if (s.curve.empty()) return {};
  std::string pts;
  double last = s.curve.front().makespan;
  for (const CurvePoint& p : s.curve) {
    if (!pts.empty()) pts += fmt::format(" {:.1f},{:.1f}", f.x(p.seconds), f.y(last));
    pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", f.x(p.seconds), f.y(p.makespan));
    last = p.makespan;
  }
  pts += fmt::format(" {:.1f},{:.1f}", f.x(std::max(s.end_seconds, s.curve.back().seconds)),
                     f.y(last));
  return fmt::format(
      "<polyline fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"><title>{}: "
      "{:.6g} at {:.3g} s</title></polyline>\n",
      colour, pts, xml_escape(s.label), last, s.curve.back().seconds);
}

}  // namespace

std::string format_curves_svg(const std::vector<CurveSeries>& series, const CurvesOptions& opt) {
  if (series.empty()) throw InputError("anytime curves: no series to draw");
  const Frame f = frame_of(series, opt);
  const double h = std::max(kTop + kHeight + 50, kTop + 18.0 * (series.size() + 2));
  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"sans-serif\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{}\" y=\"22\" font-size=\"14\">{}</text>\n",
      kLeft + kWidth + kLegend, h, kLeft, xml_escape(opt.title));
  out += axes(f, opt);
  for (std::size_t i = 0; i < series.size(); ++i) {
    const char* colour = kColour[i % kColour.size()];
    out += step_line(series[i], f, colour);
    const double ly = kTop + 18.0 * static_cast<double>(i) + 8;
    const std::string text = series[i].curve.empty() ? series[i].label + ": no improvement reported"
                                                     : fmt::format("{}: {:.5g}", series[i].label,
                                                                   series[i].curve.back().makespan);
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" "
        "stroke-width=\"3\"/><text x=\"{4}\" y=\"{5:.1f}\" font-size=\"11\">{6}</text>\n",
        kLeft + kWidth + 12, ly, kLeft + kWidth + 30, colour, kLeft + kWidth + 36, ly + 4,
        xml_escape(text));
  }
  if (opt.reference > 0)
    out += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#333\" "
        "stroke-dasharray=\"5,4\"><title>{3}</title></line>\n",
        kLeft, f.y(opt.reference), kLeft + kWidth, xml_escape(opt.reference_label));
  return out + "</svg>\n";
}

}  // namespace doppler
