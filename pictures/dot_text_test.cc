#include "pictures/dot_text.h"

#include "gtest/gtest.h"

namespace taso::pictures {
namespace {

TEST(DotTextTest, QuotingKeepsNamesFromBreakingTheFile) {
  EXPECT_EQ(DotQuote("conv2d"), "\"conv2d\"");
  EXPECT_EQ(DotQuote("a\"b"), "\"a\\\"b\"");
  EXPECT_EQ(DotQuote("a\\N"), "\"a\\\\N\"");  // not Graphviz's node-name escape
  EXPECT_EQ(DotQuote("two\nlines"), "\"two\\nlines\"");
  EXPECT_EQ(DotQuote("x\"]; evil -> y [label=\""), "\"x\\\"]; evil -> y [label=\\\"\"");
}

TEST(DotTextTest, WritesNestedClustersNodesAndEdges) {
  DotWriter dot("g", {{"rankdir", "TB"}});
  dot.OpenCluster("a", "source", {{"style", "rounded"}});
  dot.Node("n0", {{"label", "relu"}, {"shape", "box"}});
  dot.Close();
  dot.Node("n1", {});
  dot.Edge("n0", "n1");
  dot.OpenCluster("b", "left open", {});
  const std::string text = dot.Finish();
  EXPECT_EQ(text,
            "digraph \"g\" {\n"
            "  rankdir=\"TB\"\n"
            "  subgraph \"cluster_a\" {\n"
            "    label=\"source\"\n"
            "    style=\"rounded\"\n"
            "    \"n0\" [label=\"relu\", shape=\"box\"]\n"
            "  }\n"
            "  \"n1\"\n"
            "  \"n0\" -> \"n1\"\n"
            "  subgraph \"cluster_b\" {\n"
            "    label=\"left open\"\n"
            "  }\n"
            "}\n");
}

}  // namespace
}  // namespace taso::pictures
