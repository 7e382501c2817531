#include "pictures/node_look.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace taso::pictures {
namespace {

// "stride=1x1,pad=same,act=relu" -> "stride=1x1 pad=same act=relu"; a list
// value keeps its commas ("perm=0,2,1 shuffle=1").
std::string ParamsLine(const Node& node) {
  if (node.kind == OpKind::kOpaque) {
    return node.params.opaque.domain.empty() ? "" : absl::StrCat("domain ", node.params.opaque.domain);
  }
  std::vector<std::string> items;
  for (absl::string_view part : absl::StrSplit(CanonicalParams(node.kind, node.params), ',', absl::SkipEmpty())) {
    if (part.find('=') == absl::string_view::npos && !items.empty()) {
      absl::StrAppend(&items.back(), ",", part);
    } else {
      items.emplace_back(part);
    }
  }
  return absl::StrJoin(items, " ");
}

std::string Title(const Node& node) {
  switch (RoleOf(node)) {
    case NodeRole::kInput:
      return absl::StrCat("input ", node.name);
    case NodeRole::kWeight:
      return absl::StrCat("weight ", node.name);
    case NodeRole::kOpaque:
      return absl::StrCat(node.params.opaque.op_type, " (opaque)");
    case NodeRole::kConstant:
    case NodeRole::kOperator:
      break;
  }
  return OpKindName(node.kind);
}

std::string RoleFill(NodeRole role) {
  switch (role) {
    case NodeRole::kInput:
      return "#d6e6f5";
    case NodeRole::kWeight:
      return "#fbefc4";
    case NodeRole::kConstant:
      return "#e8e0f2";
    case NodeRole::kOperator:
    case NodeRole::kOpaque:
      break;
  }
  return "#ffffff";
}

std::string RoleShape(NodeRole role) {
  switch (role) {
    case NodeRole::kInput:
      return "ellipse";
    case NodeRole::kWeight:
      return "cylinder";
    case NodeRole::kConstant:
      return "octagon";
    case NodeRole::kOperator:
    case NodeRole::kOpaque:
      break;
  }
  return "box";
}

}  // namespace

NodeRole RoleOf(const Node& node) {
  if (node.kind == OpKind::kInput) return NodeRole::kInput;
  if (node.kind == OpKind::kWeight) return NodeRole::kWeight;
  if (IsLoadTimeConstant(node.kind)) return NodeRole::kConstant;
  if (node.kind == OpKind::kOpaque) return NodeRole::kOpaque;
  return NodeRole::kOperator;
}

std::string NodeLabel(const Node& node) {
  std::vector<std::string> lines = {Title(node)};
  if (!IsInputOrWeight(node.kind)) {
    if (std::string params = ParamsLine(node); !params.empty()) lines.push_back(std::move(params));
  }
  std::vector<std::string> shapes;
  for (const TensorType& t : node.output_types) shapes.push_back(t.ToString());
  if (!shapes.empty()) lines.push_back(absl::StrJoin(shapes, " "));
  return absl::StrJoin(lines, "\n");
}

DotAttrs NodeAttrs(const Node& node, NodeMark mark, const std::string& fill) {
  const NodeRole role = RoleOf(node);
  std::string style = role == NodeRole::kOperator ? "rounded,filled" : "filled";
  if (role == NodeRole::kOpaque) style += ",dashed";
  DotAttrs attrs = {{"label", NodeLabel(node)}, {"shape", RoleShape(role)}};
  std::string color = "#333333", fillcolor = fill.empty() ? RoleFill(role) : fill, fontcolor = "#000000";
  std::string penwidth = "1";
  switch (mark) {
    case NodeMark::kPlain:
      break;
    case NodeMark::kRemoved:
      color = "#b71c1c", fillcolor = "#f7c8c8", penwidth = "2";
      break;
    case NodeMark::kAdded:
      color = "#1b5e20", fillcolor = "#c9ecc9", penwidth = "2";
      break;
    case NodeMark::kRewired:
      color = "#e65100", penwidth = "2";
      break;
    case NodeMark::kContext:
      color = fontcolor = "#9e9e9e", fillcolor = "#f5f5f5";
      break;
  }
  attrs.insert(attrs.end(), {{"style", style},
                             {"color", color},
                             {"fillcolor", fillcolor},
                             {"fontcolor", fontcolor},
                             {"penwidth", penwidth}});
  return attrs;
}

}  // namespace taso::pictures
