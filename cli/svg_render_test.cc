// Graphviz run for real: CI installs it (deploy/setup.sh); where it is
// missing these tests fail, saying to install it, rather than skip.
#include "cli/svg_render.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"

namespace taso::cli {
namespace {

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir ? dir : "/tmp") + "/" + name;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SvgRenderTest, GraphvizIsInstalled) {
  auto dot = FindGraphviz();
  ASSERT_TRUE(dot.ok()) << dot.status() << " (the pictures' tests need Graphviz: run deploy/setup.sh)";
}

TEST(SvgRenderTest, WritesAnSvgWithTheLabels) {
  const std::string path = TempPath("tiny.svg");
  absl::Status s = RenderSvg("digraph g { a [label=\"conv2d\"]; b [label=\"relu\"]; a -> b }", path);
  ASSERT_TRUE(s.ok()) << s;
  const std::string svg = ReadFile(path);
  EXPECT_NE(svg.find("<svg"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">conv2d</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find(">relu</text>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("</svg>"), std::string::npos) << svg;
}

TEST(SvgRenderTest, AMissingGraphvizSaysHowToInstallIt) {
  SvgRenderOptions options;
  options.program = "taso-test-no-such-graphviz";
  const std::string path = TempPath("missing.svg");
  absl::Status s = RenderSvg("digraph g { a }", path, options);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("install graphviz (deploy/setup.sh)"), absl::string_view::npos) << s;
  EXPECT_FALSE(std::ifstream(path).good());
}

TEST(SvgRenderTest, BadDotIsAnErrorWithGraphvizsWordsAndNoFile) {
  const std::string path = TempPath("bad.svg");
  absl::Status s = RenderSvg("digraph g { a -> }", path);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << s;
  EXPECT_NE(s.message().find("syntax error"), absl::string_view::npos) << s;
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_FALSE(std::ifstream(path + ".partial").good());
}

TEST(SvgRenderTest, AnUnwritableDestinationIsAnError) {
  absl::Status s = RenderSvg("digraph g { a }", TempPath("no-such-dir/x.svg"));
  EXPECT_FALSE(s.ok());
}

}  // namespace
}  // namespace taso::cli
