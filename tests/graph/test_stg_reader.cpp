// Kasahara's Standard Task Graph format: a hand-checked sample, the dummy tasks kept as nodes,
// and one "FILE:LINE: problem" per malformed input.
#include <fstream>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/io/graph_file.hpp"
#include "doppler/graph/io/stg.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// The 10-task example of the STG pages (11-character fields), with its information part.
const char* kSample =
    "         10\n"
    "          0          0          0\n"
    "          1          3          1          0\n"
    "          2          3          1          1\n"
    "          3          4          1          1\n"
    "          4          2          1          1\n"
    "          5          1          1          2\n"
    "          6         10          1          2\n"
    "          7         20          2          3          4\n"
    "          8          7          2          5          6\n"
    "          9          5          2          6          7\n"
    "         10          8          2          8          9\n"
    "         11          0          1         10\n"
    "# Standard Task Graph Set Project\n"
    "#   Tasks             : 10 (+dummy tasks : 2)\n"
    "#   Edges             : 13 (+dummy edges : 2)\n";

TEST(StgReader, SampleHasTheHandCheckedTasksAndEdges) {
  const Graph g = parse_stg(kSample, "s.stg");
  ASSERT_EQ(g.num_nodes(), 12);  // 10 tasks + entry + exit
  ASSERT_EQ(g.num_edges(), 15);  // 13 + 2 dummy edges
  const double cost[] = {0, 3, 3, 4, 2, 1, 10, 20, 7, 5, 8, 0};
  double total = 0;
  for (NodeId v = 0; v < 12; ++v) {
    EXPECT_EQ(g.node(v).compute_cost, cost[v]) << v;
    EXPECT_EQ(g.node(v).transfer_cost, 0.0) << v;
    EXPECT_EQ(g.node(v).name, "T" + std::to_string(v));
    total += *g.node(v).compute_cost;
  }
  EXPECT_EQ(total, 63);
  for (EdgeId e = 0; e < g.num_edges(); ++e) EXPECT_EQ(g.edge_transfer_cost(e), 0.0);
  EXPECT_GE(g.find_edge(0, 1), 0);
  EXPECT_GE(g.find_edge(3, 7), 0);
  EXPECT_GE(g.find_edge(4, 7), 0);
  EXPECT_GE(g.find_edge(10, 11), 0);
  EXPECT_LT(g.find_edge(1, 7), 0);
  EXPECT_EQ(g.sources(), (std::vector<NodeId>{0}));
  EXPECT_EQ(g.sinks(), (std::vector<NodeId>{11}));
  EXPECT_TRUE(g.has_reference_costs());
  EXPECT_EQ(g.meta().origin, "stg");
  EXPECT_EQ(g.meta().params.at("tasks"), "10");
  EXPECT_EQ(g.meta().params.count("devices"), 0u);
}

TEST(StgReader, CommentsBlankLinesCrlfAndRealCostsAreTolerated) {
  const Graph g =
      parse_stg("# header comment\r\n\r\n1\r\n0 0 0\r\n\r\n1 2.5 1 0\r\n2 0 1 1\r\n", "c.stg");
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.node(1).compute_cost, 2.5);
  EXPECT_EQ(g.num_edges(), 2);
  const Graph empty = parse_stg("0\n0 0 0\n1 0 1 0\n", "e.stg");  // no real task
  EXPECT_EQ(empty.num_nodes(), 2);
  EXPECT_EQ(empty.num_edges(), 1);
}

TEST(StgReader, LoadGraphReadsStgFilesAndWritingIsRefused) {
  test::TempDir dir;
  std::ofstream(dir / "sample.stg") << kSample;
  const Graph g = load_graph(dir / "sample.stg");
  EXPECT_EQ(g.num_nodes(), 12);
  EXPECT_EQ(g.meta().name, "sample");
  EXPECT_EQ(parse_graph_format("stg"), GraphFormat::stg);
  EXPECT_EQ(graph_format_of("x.stg"), GraphFormat::stg);
  EXPECT_THROW(format_graph(g, GraphFormat::stg), InputError);
}

struct BadCase {
  const char* text;
  std::int64_t line;
  const char* problem;
};

TEST(StgReader, MalformedInputsNameTheFileAndLine) {
  const BadCase cases[] = {
      {"", 0, "empty file"},
      {"# only comments\n\n", 0, "empty file"},
      {"10 3\n", 1, "task count n alone"},
      {"x\n", 1, "task count: expected an integer"},
      {"-1\n", 1, "negative"},
      {"1\n0 0 0\n2 1 1 0\n2 0 1 1\n", 3, "expected task 1, found task id 2"},
      {"1\n0 0 0\n0 1 1 0\n2 0 1 1\n", 3, "expected task 1, found task id 0"},  // duplicate
      {"2\n0 0 0\n1 1 1 0\n1 1 1 0\n3 0 1 1\n", 4, "expected task 2, found task id 1"},
      {"2\n0 0 0\n1 1 1 0\n2 1 1 3\n3 0 1 2\n", 4, "predecessor 3 is not an earlier task"},
      {"2\n0 0 0\n1 1 1 1\n", 3, "predecessor 1 is not an earlier task"},  // self
      {"2\n0 0 0\n1 1 1 -1\n", 3, "predecessor -1"},
      {"2\n0 0 0\n1 1 1 0\n2 1 2 0 0\n", 4, "predecessor 0 is listed twice"},
      {"1\n0 0 0\n1 -3 1 0\n2 0 1 1\n", 3, "processing time is negative"},
      {"1\n0 0 0\n1 abc 1 0\n2 0 1 1\n", 3, "processing time: expected a number"},
      {"1\n0 0 0\n1 1 2 0\n2 0 1 1\n", 3, "announces 2 predecessor(s) but lists 1"},
      {"1\n0 0 0\n1 1 1 0 0\n2 0 1 1\n", 3, "announces 1 predecessor(s) but lists 2"},
      {"1\n0 0 0\n1 1\n", 3, "expected 'id cost npred pred...'"},
      {"1\n0 0 0\n1 1 1 0\n", 4, "truncated file: expected 3 task lines"},
      {"3\n0 0 0\n1 1 1 0\n# info\n", 5, "truncated"},
      {"1\n0 0 0\n1 1 1 0\n2 0 1 1\n3 0 1 2\n", 5, "unexpected line after the exit task 2"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_stg(c.text, "bad.stg");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "bad.stg");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(e.problem().find(c.problem), std::string::npos) << e.what();
    }
  }
}

TEST(StgReader, LimitsAreEnforcedWithTheLine) {
  ReadLimits limits;
  limits.max_ops = 11;  // the sample needs 12
  try {
    parse_stg(kSample, "l.stg", nullptr, limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 1) << e.what();
    EXPECT_NE(e.problem().find("DOPPLER_MAX_OPS"), std::string::npos);
  }
  limits = ReadLimits{};
  limits.max_edges = 3;  // the 4th edge is task 4's
  try {
    parse_stg(kSample, "l.stg", nullptr, limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 6) << e.what();
    EXPECT_NE(e.problem().find("DOPPLER_MAX_EDGES"), std::string::npos);
  }
}

}  // namespace
}  // namespace doppler
