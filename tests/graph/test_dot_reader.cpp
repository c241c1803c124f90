// DOT task graphs (Sinnen-group style): hand-checked costs and structure, graph attributes, the
// schedule, the DOT writer's round trip, and one "FILE:LINE: problem" per malformed input.
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "support/support.hpp"

#include "doppler/graph/graph_builder.hpp"
#include "doppler/graph/io/dot.hpp"
#include "doppler/graph/io/dot_reader.hpp"
#include "doppler/graph/io/graph_file.hpp"
#include "doppler/util/error.hpp"

namespace doppler {
namespace {

// a -> {b, c} -> d with distinct weights; ids a=0, b=1, c=2, d=3.
const char* kDiamond = R"(digraph "diamond" {
  Processors=2;
  "Optimal schedule length"=14;
  a [Weight=2];
  b [Weight=3];
  c [Weight=4];
  d [Weight=1];
  a -> b [Weight=5];
  a -> c [Weight=6];
  b -> d [Weight=7];
  c -> d [Weight=8];
}
)";

double edge_cost(const Graph& g, NodeId u, NodeId v) {
  const EdgeId e = g.find_edge(u, v);
  EXPECT_GE(e, 0) << u << "->" << v;
  return e < 0 ? -1 : g.edge_transfer_cost(e);
}

TEST(DotReader, DiamondHasTheHandCheckedCosts) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const Graph g = parse_dot_graph(kDiamond, "d.dot");
  ASSERT_EQ(g.num_nodes(), 4);
  ASSERT_EQ(g.num_edges(), 4);
  const char* names[] = {"a", "b", "c", "d"};
  const double compute[] = {2, 3, 4, 1};
  for (NodeId v = 0; v < 4; ++v) {
    EXPECT_EQ(g.node(v).name, names[v]);
    EXPECT_EQ(g.node(v).kind, OpKind::other);
    EXPECT_EQ(g.node(v).compute_cost, compute[v]);
    EXPECT_EQ(g.node(v).transfer_cost, 0.0);
  }
  EXPECT_EQ(edge_cost(g, 0, 1), 5);
  EXPECT_EQ(edge_cost(g, 0, 2), 6);
  EXPECT_EQ(edge_cost(g, 1, 3), 7);
  EXPECT_EQ(edge_cost(g, 2, 3), 8);
  EXPECT_TRUE(g.has_reference_costs());
  EXPECT_TRUE(g.has_edge_transfer_costs());
  EXPECT_EQ(g.meta().name, "diamond");
  EXPECT_EQ(g.meta().origin, "dot");
  EXPECT_EQ(g.meta().params.at("devices"), "2");
  EXPECT_EQ(g.meta().params.at("optimum"), "14");
}

TEST(DotReader, Utf8NamesAreKept) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const Graph g = parse_dot_graph(
      "digraph \"gr\xc3\xa4ph\" { \"\xe2\x82\xac\xf0\x9f\x98\x80\" [Weight=1]; }", "u.dot");
  EXPECT_EQ(g.meta().name, "gr\xc3\xa4ph");
  EXPECT_EQ(g.node(0).name, "\xe2\x82\xac\xf0\x9f\x98\x80");
}

TEST(DotReader, NodesAreNumberedInOrderOfFirstAppearance) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const Graph g =
      parse_dot_graph("digraph { node [Weight=1]; y -> x [Weight=2]; x [Weight=3]; z; }", "o.dot");
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.node(0).name, "y");
  EXPECT_EQ(g.node(1).name, "x");
  EXPECT_EQ(g.node(2).name, "z");
  EXPECT_EQ(g.node(0).compute_cost, 1.0);  // the node default
  EXPECT_EQ(g.node(1).compute_cost, 3.0);
  EXPECT_EQ(edge_cost(g, 0, 1), 2);
  EXPECT_EQ(g.meta().name, "");  // anonymous: load_graph names it after the file
  EXPECT_EQ(g.meta().params.count("devices"), 0u);
}

TEST(DotReader, QuotedNamesMultiLineListsAndAScheduleNumberedFromOne) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const char* text = R"(digraph g {
  "Number of processors" = 3;
  "Total schedule length" = 9.5;
  "task 1" [
    Weight = 2.5,
    "Start time" = 0,
    Processor = 1
  ];
  "task 2" [Weight=1, Start=3, Processor=2];
  "task 3" [Weight=4, "Start time"=2.5, Processor=1];
  "task 1" -> "task 2" [Weight=0];
  "task 1" -> "task 3" [
     Weight=1.25
  ];
}
)";
  const DotTaskGraph t = parse_dot_task_graph(text, "q.dot");
  const Graph& g = t.graph;
  ASSERT_EQ(g.num_nodes(), 3);
  EXPECT_EQ(g.node(0).name, "task 1");
  EXPECT_EQ(g.node(0).compute_cost, 2.5);
  EXPECT_EQ(edge_cost(g, 0, 1), 0);
  EXPECT_EQ(edge_cost(g, 0, 2), 1.25);
  EXPECT_EQ(g.meta().params.at("devices"), "3");
  EXPECT_EQ(g.meta().params.at("schedule_length"), "9.5");
  EXPECT_EQ(g.meta().params.count("optimum"), 0u);
  ASSERT_TRUE(t.schedule);
  EXPECT_EQ(t.schedule->devices, 3);
  EXPECT_EQ(t.schedule->device_of, (std::vector<DeviceId>{0, 1, 0}));
  EXPECT_EQ(t.schedule->order, (std::vector<NodeId>{0, 2, 1}));  // by start time
}

TEST(DotReader, ScheduleNumberedFromZeroWithStartAndTiesByTopologicalRank) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const char* text = R"(digraph s {
  a [Weight=0, Processor=0, Start=0];
  b [Weight=2, Processor=1, Start=0];
  c [Weight=1, Processor=0, Start=0];
  a -> c [Weight=1];
  c -> b [Weight=1];
}
)";
  const DotTaskGraph t = parse_dot_task_graph(text, "s.dot");
  ASSERT_TRUE(t.schedule);
  EXPECT_EQ(t.schedule->devices, 2);  // no Processors attribute: largest + 1
  EXPECT_EQ(t.schedule->device_of, (std::vector<DeviceId>{0, 1, 0}));
  EXPECT_EQ(t.schedule->order, (std::vector<NodeId>{0, 2, 1}));  // a, c, b: a DAG order
}

TEST(DotReader, NoProcessorAttributeMeansNoSchedule) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  test::TempDir dir;
  std::ofstream(dir / "d.dot") << kDiamond;
  EXPECT_FALSE(read_dot_schedule(dir / "d.dot"));
  std::ofstream(dir / "s.dot") << "digraph { a [Weight=1, Processor=2]; }";
  const auto s = read_dot_schedule(dir / "s.dot");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->devices, 2);  // numbered from 1: processor 2 is device 1
  EXPECT_EQ(s->device_of, (std::vector<DeviceId>{1}));
  EXPECT_TRUE(s->order.empty());
}

TEST(DotReader, LoadGraphReadsDotAndGvFiles) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  test::TempDir dir;
  std::ofstream(dir / "x.gv") << "digraph { a [Weight=1]; b [Weight=2]; a -> b [Weight=3]; }";
  std::vector<std::string> warnings;
  const Graph g = load_graph(dir / "x.gv", &warnings);
  EXPECT_EQ(g.num_nodes(), 2);
  EXPECT_EQ(g.meta().name, "x");
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(parse_graph_format("gv"), GraphFormat::dot);
}

TEST(DotReader, ParallelEdgesWithEqualWeightsCollapseWithAWarning) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  std::vector<std::string> warnings;
  const Graph g = parse_dot_graph(
      "digraph { a [Weight=1]; b [Weight=1]; a -> b [Weight=2]; a -> b [Weight=2]; }", "p.dot",
      &warnings);
  EXPECT_EQ(g.num_edges(), 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("p.dot: 1 parallel edge"), std::string::npos) << warnings[0];
  // A strict digraph merges them itself: the last Weight wins.
  const Graph s = parse_dot_graph(
      "strict digraph { a [Weight=1]; b [Weight=1]; a -> b [Weight=2]; a -> b [Weight=5]; }",
      "s.dot");
  ASSERT_EQ(s.num_edges(), 1);
  EXPECT_EQ(s.edge_transfer_cost(0), 5);
}

void expect_same_task_graph(const Graph& a, const Graph& b) {
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  ASSERT_EQ(a.num_edges(), b.num_edges());
  for (NodeId v = 0; v < a.num_nodes(); ++v)
    EXPECT_EQ(a.node(v).compute_cost, b.node(v).compute_cost) << v;
  for (EdgeId e = 0; e < a.num_edges(); ++e) {
    EXPECT_EQ(a.edge(e).src, b.edge(e).src);
    EXPECT_EQ(a.edge(e).dst, b.edge(e).dst);
    EXPECT_EQ(a.edge_transfer_cost(e), b.edge_transfer_cost(e)) << e;
  }
}

TEST(DotReader, WriterRoundTripKeepsStructureAndCosts) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  // Costs that need all digits, a producer's transfer cost on some edges, and node ids that do
  // not follow a topological order of the names.
  GraphBuilder b;
  const double c[] = {0.1, 1e-7, 3, 123456.789, 0};
  for (int v = 0; v < 5; ++v) {
    Node nd;
    nd.name = v == 2 ? "quote \" and \\ backslash" : "";
    nd.compute_cost = c[v];
    nd.transfer_cost = 0.5 * v;
    b.add_node(nd);
  }
  b.add_edge(0, 1, std::nullopt, 2.25);
  b.add_edge(0, 2);  // the producer's 0
  b.add_edge(1, 3, std::nullopt, 1e300);
  b.add_edge(2, 3);  // the producer's 1
  b.add_edge(3, 4, std::nullopt, 1.0 / 3);
  GraphMeta meta;
  meta.name = "round \"trip\"";
  b.set_meta(meta);
  const Graph g = b.build();
  ASSERT_TRUE(g.has_reference_costs());
  Assignment a;
  a.devices = 2;
  a.device_of = {0, 1, 0, 1, 1};
  for (const Assignment* with :
       {static_cast<const Assignment*>(nullptr), static_cast<const Assignment*>(&a)}) {
    const std::string text = format_dot(g, with);
    const Graph back = parse_dot_graph(text, "rt.dot");
    expect_same_task_graph(g, back);
    EXPECT_EQ(back.meta().name, "round \"trip\"");
  }
  // And a file read, written and read again.
  const Graph d = parse_dot_graph(kDiamond, "d.dot");
  expect_same_task_graph(d, parse_dot_graph(format_dot(d), "d2.dot"));
}

TEST(DotReader, WriterWithoutReferenceCostsWritesNoWeights) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  GraphBuilder b;
  b.add_node(Node{});
  b.add_node(Node{});
  b.add_edge(0, 1);
  EXPECT_EQ(format_dot(b.build()).find("Weight"), std::string::npos);
}

struct BadCase {
  const char* text;
  std::int64_t line;
  const char* problem;  // a substring of the message
};

TEST(DotReader, MalformedInputsNameTheFileAndLine) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const BadCase cases[] = {
      {"digraph g {\n a [Weight=1];\n b;\n a -> b [Weight=2];\n}", 3, "node 'b' has no Weight"},
      {"digraph g {\n a [Weight=1];\n b [Weight=1];\n a -> b;\n}", 4,
       "edge 'a' -> 'b' has no Weight"},
      {"digraph g {\n a [Weight=1];\n b [Weight=-2];\n}", 3, "negative"},
      {"digraph g {\n a [Weight=1];\n b [Weight=\"x\"];\n}", 3, "expected a number"},
      {"digraph g {\n a [Weight=1];\n b [Weight=nan];\n}", 3, "NaN"},
      {"digraph g {\n a [Weight=1];\n a -> b [Weight=1];\n b [Weight=1];\n a [Weight=\"oops\"];\n}",
       5, "node 'a': Weight"},
      {"digraph g {\n a [Weight=1]; b [Weight=1];\n a -> b [Weight=1];\n a\n -> b [Weight=-1];\n}",
       4, "negative"},
      {"digraph g {\n a [Weight=1]; b [Weight=1]; c [Weight=1];\n a -> b [Weight=1];\n"
       " b -> c [Weight=1];\n c -> a [Weight=1];\n}",
       5, "cycle"},
      {"digraph g {\n a [Weight=1];\n a -> a [Weight=1];\n}", 3, "self-loop"},
      {"digraph g {\n a [Weight=1];\n a -> -> b;\n}", 3, "syntax error near '->'"},
      {"digraph g {\n a [Weight=1, label=\"x\ny\"];\n b [Weight=1\n}", 5, "syntax error"},
      {"# 100 \"foo.c\"\ndigraph g {\n a -> ;\n}", 3, "syntax error near ';'"},
      {"digraph g {\n a [Weight=1];\n a -> 1b [Weight=1];\n}", 3, "badly delimited number"},
      {"digraph g {\n a [Weight=1]", 2, "syntax error"},
      {"graph g {\n a -- b;\n}", 1, "undirected"},
      {"digraph g { a [Weight=1]; }\n\ndigraph h { }\n", 3, "after the graph"},
      {"digraph g {\n a [Weight=1]; b [Weight=1];\n a -> b [Weight=1];\n a -> b [Weight=2];\n}", 4,
       "different Weights"},
      {"digraph g {\n Processors=0;\n a [Weight=1];\n}", 2, "out of range"},
      {"digraph g {\n graph [NumProcessors=two];\n a [Weight=1];\n}", 2, "NumProcessors"},
      {"digraph g {\n a [Weight=1, Processor=1];\n b [Weight=1];\n}", 3, "no Processor"},
      {"digraph g {\n Processors=2;\n a [Weight=1, Processor=1];\n b [Weight=1, Processor=3];\n}",
       4, "beyond the 2 processors"},
      {"digraph g {\n a [Weight=1, Processor=1, Start=0];\n b [Weight=1, Processor=1];\n}", 3,
       "no start time"},
      {"digraph g {\n a [Weight=1];\n b [Weight=1, Processor=-1];\n a [Processor=0];\n}", 3,
       "out of range"},
      {"digraph g {\n a [Weight=1];\n \"b\xff\" [Weight=1];\n}", 3, "not valid UTF-8"},
      {"digraph g {\n a [Weight=1];\n \"\xed\xa0\x80\" [Weight=1];\n}", 3, "not valid UTF-8"},
      {"digraph \"\xc0\xaf\" {\n a [Weight=1];\n}", 1, "graph name is not valid UTF-8"},
      {"", 0, "no graph"},
      {"  // only a comment\n", 0, "no graph"},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.text);
    try {
      parse_dot_task_graph(c.text, "bad.dot");
      ADD_FAILURE() << "accepted";
    } catch (const InputError& e) {
      EXPECT_EQ(e.file(), "bad.dot");
      EXPECT_EQ(e.line(), c.line) << e.what();
      EXPECT_NE(e.problem().find(c.problem), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
}

TEST(DotReader, NulByteIsRejectedWithItsLine) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  const std::string text("digraph g {\n a [Weight=1];\n}\0 junk", 34);
  try {
    parse_dot_graph(text, "n.dot");
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 3) << e.what();
    EXPECT_NE(e.problem().find("NUL"), std::string::npos) << e.what();
  }
}

TEST(DotReader, CgraphPrintsNothingAndLaterParsesAreUnaffected) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  testing::internal::CaptureStderr();
  EXPECT_THROW(parse_dot_graph("digraph g { a -> -> b; }", "e.dot"), InputError);
  // Text left over by the lexer must not leak into the next parse.
  EXPECT_THROW(parse_dot_graph("digraph g { a [Weight=1]; } digraph h { z [Weight=1]; }", "t.dot"),
               InputError);
  const Graph g = parse_dot_graph("digraph k { b [Weight=1]; }", "k.dot");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  ASSERT_EQ(g.num_nodes(), 1);
  EXPECT_EQ(g.node(0).name, "b");
  EXPECT_EQ(g.meta().name, "k");
}

TEST(DotReader, ParallelReadersAreSerialised) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  std::vector<std::thread> threads;
  std::vector<int> nodes(8, 0);
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 20; ++k)
        nodes[static_cast<std::size_t>(i)] = parse_dot_graph(kDiamond, "d.dot").num_nodes();
    });
  for (auto& t : threads) t.join();
  for (const int n : nodes) EXPECT_EQ(n, 4);
}

TEST(DotReader, LimitsAreEnforcedWithTheLine) {
  DOPPLER_REQUIRE_COMPONENT(graphviz);
  ReadLimits limits;
  limits.max_ops = 2;
  try {
    parse_dot_graph("digraph g {\n a [Weight=1];\n b [Weight=1];\n c [Weight=1];\n}", "l.dot",
                    nullptr, limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
    EXPECT_NE(e.problem().find("DOPPLER_MAX_OPS"), std::string::npos) << e.what();
  }
  limits = ReadLimits{};
  limits.max_edges = 1;
  try {
    parse_dot_graph("digraph g {\n node [Weight=1];\n a -> b [Weight=1];\n b -> c [Weight=1];\n}",
                    "l.dot", nullptr, limits);
    ADD_FAILURE() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(e.line(), 4) << e.what();
    EXPECT_NE(e.problem().find("DOPPLER_MAX_EDGES"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace doppler

namespace doppler {
namespace {

// Without Graphviz (DOPPLER_WITH_GRAPHVIZ=off), reading DOT fails with one line naming the file
// and the missing library; writing DOT still works.
TEST(DotReaderAbsent, ReadingNamesTheFileAndTheMissingLibrary) {
  if (component_built(Component::graphviz)) GTEST_SKIP() << "built with Graphviz";
  try {
    parse_dot_graph("digraph g { a -> b; }", "model.dot");
    FAIL() << "a DOT graph was read without Graphviz";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), "model.dot");
    EXPECT_NE(e.problem().find("needs Graphviz's cgraph"), std::string::npos) << e.what();
    EXPECT_NE(e.problem().find("-DDOPPLER_WITH_GRAPHVIZ=on"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace doppler
