#include "doppler/report/gantt.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "doppler/report/xml.hpp"

namespace doppler {

namespace {

// Tableau 10, one colour per op kind (in OpKind order).
constexpr std::array<const char*, kNumOpKinds> kKindColour = {"#4e79a7", "#f28e2b", "#59a14f",
                                                              "#bab0ac", "#edc948", "#b07aa1",
                                                              "#ff9da7", "#9c755f", "#76b7b2"};

// A "nice" tick step (1, 2 or 5 x 10^k) giving about `ticks` ticks over [0, span].
double nice_step(double span, int ticks) {
  const double raw = span / ticks;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (raw <= m * mag) return m * mag;
  return 10 * mag;
}

struct Bar {
  double start, finish;
  std::string label, tooltip, colour;
};

}  // namespace

std::string format_time(double t, CostUnit unit) {
  if (unit == CostUnit::reference) return fmt::format("{:.4g}", t / 1e10);
  const double a = std::fabs(t);
  if (a == 0) return "0";
  if (a < 1e-6) return fmt::format("{:.3g} ns", t * 1e9);
  if (a < 1e-3) return fmt::format("{:.3g} us", t * 1e6);
  if (a < 1) return fmt::format("{:.3g} ms", t * 1e3);
  return fmt::format("{:.4g} s", t);
}

std::string format_gantt_svg(const Graph& g, const Schedule& s, const GanttOptions& opt) {
  const double left = 170, top = 70, right = 20, bottom = 46;
  const double dev_h = 26, link_h = 14, gap = 4;
  const double span = s.makespan > 0 ? s.makespan : 1;
  const auto x_of = [&](double t) { return left + t / span * opt.width; };

  // Rows: devices (with one lane per concurrently running op), then transfer tracks.
  struct Row {
    std::string name;
    double height;
    std::vector<std::vector<Bar>> lanes;
  };
  std::vector<Row> rows;
  std::vector<bool> kind_used(kNumOpKinds, false);
  for (int d = 0; d < s.devices; ++d) {
    std::vector<NodeId> ops;
    for (NodeId v = 0; v < g.num_nodes(); ++v)
      if (s.device[static_cast<std::size_t>(v)] == d) ops.push_back(v);
    std::sort(ops.begin(), ops.end(), [&](NodeId a, NodeId b) {
      return s.start[static_cast<std::size_t>(a)] < s.start[static_cast<std::size_t>(b)];
    });
    Row row{fmt::format("device {} ({:.0f}% busy)", d, 100 * s.utilization(d)), dev_h, {}};
    for (NodeId v : ops) {
      const auto i = static_cast<std::size_t>(v);
      const Node& nd = g.node(v);
      kind_used[static_cast<std::size_t>(nd.kind)] = true;
      Bar b{s.start[i], s.finish[i], g.label(v),
            fmt::format("{} (op {}, {})\nready {}  start {}  finish {}", g.label(v), v,
                        op_kind_name(nd.kind), format_time(s.ready[i], s.unit),
                        format_time(s.start[i], s.unit), format_time(s.finish[i], s.unit)),
            kKindColour[static_cast<std::size_t>(nd.kind)]};
      std::size_t lane = 0;
      while (lane < row.lanes.size() && row.lanes[lane].back().finish > b.start + 1e-15 * span)
        ++lane;
      if (lane == row.lanes.size()) row.lanes.emplace_back();
      row.lanes[lane].push_back(std::move(b));
    }
    if (row.lanes.empty()) row.lanes.emplace_back();
    rows.push_back(std::move(row));
  }
  if (opt.transfers && !s.transfers.empty()) {
    std::map<std::string, std::vector<Bar>> tracks;
    for (const TransferRecord& t : s.transfers) {
      std::vector<std::string> names;
      if (t.links.empty()) {
        names.push_back(fmt::format("dev {} -> dev {}", t.from, t.to));
      } else {
        for (int l : t.links)
          names.push_back(static_cast<std::size_t>(l) < s.link_names.size()
                              ? s.link_names[static_cast<std::size_t>(l)]
                              : fmt::format("link {}", l));
      }
      for (const auto& name : names)
        tracks[name].push_back(
            {t.start, t.finish, g.label(t.src),
             fmt::format("{} -> device {}{}\n{} .. {}", g.label(t.src), t.to,
                         t.bytes > 0 ? fmt::format(" ({:.3g} bytes)", t.bytes) : "",
                         format_time(t.start, s.unit), format_time(t.finish, s.unit)),
             "#e15759"});
    }
    for (auto& [name, bars] : tracks) rows.push_back({name, link_h, {std::move(bars)}});
  }

  double height = top;
  for (const Row& r : rows)
    height += r.height * static_cast<double>(std::max<std::size_t>(1, r.lanes.size())) + gap;
  const double plot_bottom = height;
  height += bottom;
  const double total_w = left + opt.width + right;

  std::string out = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\">\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      total_w, height);
  out += fmt::format("<text x=\"{}\" y=\"20\" font-size=\"15\" font-weight=\"bold\">{}</text>\n",
                     left, xml_escape(opt.title.empty() ? g.meta().name : opt.title));
  out += fmt::format(
      "<text x=\"{}\" y=\"38\">makespan {} ({}), {} devices, {} cross-device transfers{}</text>\n",
      left, format_time(s.makespan, s.unit),
      s.unit == CostUnit::seconds ? "seconds" : "reference units / 1e10", s.devices,
      s.cross_transfers, s.cross_bytes > 0 ? fmt::format(", {:.3g} bytes", s.cross_bytes) : "");
  // Legend.
  double lx = left;
  for (int k = 0; k < kNumOpKinds; ++k) {
    if (!kind_used[static_cast<std::size_t>(k)]) continue;
    const std::string name(op_kind_name(static_cast<OpKind>(k)));
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"47\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1f}\" "
        "y=\"57\">{}</text>\n",
        lx, kKindColour[static_cast<std::size_t>(k)], lx + 16, name);
    lx += 30 + 7.0 * static_cast<double>(name.size());
  }
  if (opt.transfers && !s.transfers.empty())
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"47\" width=\"12\" height=\"12\" fill=\"#e15759\"/><text "
        "x=\"{:.1f}\" y=\"57\">transfer</text>\n",
        lx, lx + 16);

  // Grid and time axis.
  const double step = nice_step(span, 10);
  for (double t = 0; t <= span * (1 + 1e-9); t += step) {
    const double x = x_of(t);
    out += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\" stroke=\"#e0e0e0\"/>"
        "<text x=\"{0:.1f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
        x, top - 4, plot_bottom, plot_bottom + 16, format_time(t, s.unit));
  }
  out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time{}</text>\n",
                     left + opt.width / 2.0, plot_bottom + 34,
                     s.unit == CostUnit::seconds ? "" : " (reference units / 1e10)");

  double y = top;
  for (const Row& r : rows) {
    const double row_h = r.height * static_cast<double>(std::max<std::size_t>(1, r.lanes.size()));
    out += fmt::format(
        "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"#f7f7f7\"/>\n", left,
        y, opt.width, row_h);
    out += fmt::format(
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\" font-size=\"{}\">{}</text>\n",
        left - 6, y + row_h / 2 + 4, r.height < dev_h ? 9 : 11, xml_escape(r.name));
    for (std::size_t lane = 0; lane < r.lanes.size(); ++lane) {
      const double ly = y + r.height * static_cast<double>(lane);
      for (const Bar& b : r.lanes[lane]) {
        const double x0 = x_of(b.start), w = std::max(0.6, x_of(b.finish) - x0);
        out += fmt::format(
            "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" "
            "stroke=\"white\" "
            "stroke-width=\"0.4\"{}><title>{}</title></rect>\n",
            x0, ly + 1, w, r.height - 2, b.colour, r.height < dev_h ? " fill-opacity=\"0.7\"" : "",
            xml_escape(b.tooltip));
        if (r.height >= dev_h && w > 6.5 * static_cast<double>(b.label.size()) + 4)
          out += fmt::format(
              "<text x=\"{:.2f}\" y=\"{:.1f}\" font-size=\"10\" fill=\"white\">{}</text>\n", x0 + 2,
              ly + r.height / 2 + 4, xml_escape(b.label));
      }
    }
    y += row_h + gap;
  }
  out += "</svg>\n";
  return out;
}

}  // namespace doppler
