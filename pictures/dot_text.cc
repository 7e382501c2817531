#include "pictures/dot_text.h"

#include "absl/strings/str_cat.h"

namespace taso::pictures {
namespace {

std::string AttrList(const DotAttrs& attrs) {
  if (attrs.empty()) return "";
  std::string s = " [";
  for (size_t i = 0; i < attrs.size(); ++i) {
    absl::StrAppend(&s, i ? ", " : "", attrs[i].first, "=", DotQuote(attrs[i].second));
  }
  return s + "]";
}

}  // namespace

std::string DotQuote(absl::string_view text) {
  std::string s = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        s += "\\\"";
        break;
      case '\\':
        s += "\\\\";
        break;
      case '\n':
        s += "\\n";
        break;
      case '\r':
        break;
      default:
        s += c;
    }
  }
  return s + "\"";
}

DotWriter::DotWriter(absl::string_view name, const DotAttrs& graph_attrs) {
  absl::StrAppend(&text_, "digraph ", DotQuote(name), " {\n");
  for (const auto& [key, value] : graph_attrs) Line(absl::StrCat(key, "=", DotQuote(value)));
}

void DotWriter::OpenCluster(absl::string_view id, absl::string_view label, const DotAttrs& attrs) {
  Line(absl::StrCat("subgraph ", DotQuote(absl::StrCat("cluster_", id)), " {"));
  ++depth_;
  Line(absl::StrCat("label=", DotQuote(label)));
  for (const auto& [key, value] : attrs) Line(absl::StrCat(key, "=", DotQuote(value)));
}

void DotWriter::Close() {
  if (depth_ <= 1) return;
  --depth_;
  Line("}");
}

void DotWriter::Defaults(absl::string_view what, const DotAttrs& attrs) {
  Line(absl::StrCat(what, AttrList(attrs)));
}

void DotWriter::Node(absl::string_view id, const DotAttrs& attrs) { Line(DotQuote(id) + AttrList(attrs)); }

void DotWriter::Edge(absl::string_view from, absl::string_view to, const DotAttrs& attrs) {
  Line(absl::StrCat(DotQuote(from), " -> ", DotQuote(to), AttrList(attrs)));
}

std::string DotWriter::Finish() {
  while (depth_ > 1) Close();
  depth_ = 0;
  return text_ + "}\n";
}

void DotWriter::Line(absl::string_view statement) {
  text_.append(2 * depth_, ' ');
  absl::StrAppend(&text_, statement, "\n");
}

}  // namespace taso::pictures
