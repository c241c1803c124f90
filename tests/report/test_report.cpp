// Chrome trace and Gantt SVG outputs of a schedule.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "support/builders.hpp"

#include "doppler/hardware/profile.hpp"
#include "doppler/report/gantt.hpp"
#include "doppler/report/table.hpp"
#include "doppler/report/trace.hpp"
#include "doppler/sim/simulator.hpp"

namespace doppler {
namespace {

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

// Diamond on two devices (see tests/sim/test_reference_hand.cpp): a 0-2 and b 2-5 on device 0,
// c 3-4 on device 1, d 9-13 on device 0; transfers a -> dev 1 (2-3) and c -> dev 0 (4-9).
Schedule diamond_schedule(const Graph& g) {
  const Simulator sim(g, Platform::reference(2));
  return sim.simulate({2, {0, 0, 1, 0}, {}, "test"});
}

Graph diamond() {
  GraphBuilder b;
  const double c[] = {2, 3, 1, 4}, m[] = {1, 2, 5, 0};
  const char* names[] = {"a<1>", "b", "c", "d"};
  for (int i = 0; i < 4; ++i) {
    Node n;
    n.name = names[i];
    n.kind = i == 3 ? OpKind::aggregate : OpKind::einsum;
    n.compute_cost = c[i];
    n.transfer_cost = m[i];
    b.add_node(n);
  }
  for (auto [u, v] : {std::pair{0, 1}, {0, 2}, {1, 3}, {2, 3}}) b.add_edge(u, v);
  return b.build();
}

TEST(ChromeTrace, OneEventPerOpAndTransferWithScaledTimes) {
  const Graph g = diamond();
  const Schedule s = diamond_schedule(g);
  const auto j = nlohmann::json::parse(format_chrome_trace(g, s, "t"));
  int ops = 0, transfers = 0, device_names = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == 0) ++device_names;
    if (e["ph"] != "X") continue;
    if (e["pid"] == 0) {
      ++ops;
      const int v = e["args"]["op"];
      EXPECT_EQ(e["tid"], s.device[static_cast<std::size_t>(v)]);
      // reference units: value / 1e10 seconds, in microseconds
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), s.start[static_cast<std::size_t>(v)] * 1e-4);
      EXPECT_DOUBLE_EQ(
          e["dur"].get<double>(),
          (s.finish[static_cast<std::size_t>(v)] - s.start[static_cast<std::size_t>(v)]) * 1e-4);
    } else {
      ++transfers;
      EXPECT_EQ(e["cat"], "transfer");
    }
  }
  EXPECT_EQ(ops, 4);
  EXPECT_EQ(transfers, 2);
  EXPECT_EQ(device_names, 2);
  EXPECT_EQ(j["otherData"]["makespan"], 13.0);
}

TEST(GanttSvg, DrawsEveryOpAndTransferAndEscapesNames) {
  const Graph g = diamond();
  const Schedule s = diamond_schedule(g);
  const std::string svg = format_gantt_svg(g, s, {"diamond", 800, true});
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  EXPECT_EQ(count(svg, "<title>"), 4u + 2u);
  EXPECT_NE(svg.find("a&lt;1&gt;"), std::string::npos);
  EXPECT_EQ(svg.find("a<1>"), std::string::npos);
  // The op bars: d spans 9..13 of a 13-long axis of 800 px starting at x = 170.
  EXPECT_NE(svg.find(fmt::format("x=\"{:.2f}\"", 170 + 9.0 / 13 * 800)), std::string::npos);
}

TEST(GanttSvg, HardwareLinksGetTheirOwnRows) {
  const HardwareProfile hw = parse_hardware_profile(
      R"({"format": "doppler-hardware", "version": 1, "name": "u", "device": {"peak_flops": {"f32": 1}},
          "count": 2, "topology": {"kind": "all-to-all", "link": {"bandwidth": 1}}})",
      "u.json");
  const Graph g = test::phys_graph({{2, 4}, {1, 0}}, {{0, 1}});
  const Schedule s = Simulator(g, Platform::hardware(hw, 2)).simulate({2, {0, 1}, {}, ""});
  const std::string svg = format_gantt_svg(g, s, {});
  EXPECT_NE(svg.find(">link 0-&gt;1<"), std::string::npos);
  EXPECT_NE(svg.find("time</text>"), std::string::npos);
  EXPECT_EQ(format_time(0.0123, CostUnit::seconds), "12.3 ms");
  EXPECT_EQ(format_time(4.5e-5, CostUnit::seconds), "45 us");
}

TEST(Table, AlignsAndQuotesCsv) {
  Table t;
  t.add_column("method", true);
  t.add_column("makespan");
  t.add_row({"heft", "1.5"});
  t.add_row({"a,b", "12.25"});
  EXPECT_EQ(t.to_text(),
            "method  makespan\n----------------\nheft         1.5\na,b        12.25\n");
  EXPECT_EQ(t.to_csv(), "method,makespan\nheft,1.5\n\"a,b\",12.25\n");
  EXPECT_EQ(t.to_markdown(),
            "| method | makespan |\n|---|---:|\n| heft | 1.5 |\n| a,b | 12.25 |\n");
  EXPECT_THROW(t.add_row({"x"}), std::logic_error);
  EXPECT_EQ(format_sig(1234.5678), "1235");
  EXPECT_EQ(format_sig(0.012345), "0.01235");
  EXPECT_EQ(format_sig(1.5e12), "1.500e+12");
}

}  // namespace
}  // namespace doppler
