#include "pictures/graph_dot.h"

#include "absl/strings/str_cat.h"

namespace taso::pictures {
namespace {

template <typename T>
T At(const std::vector<T>& v, int i, T otherwise) {
  return i < static_cast<int>(v.size()) ? v[i] : otherwise;
}

}  // namespace

std::string NodeDotId(const GraphDrawing& drawing, int id) { return absl::StrCat(drawing.prefix, "n", id); }

DrawnEnds WriteGraph(const Graph& graph, const GraphDrawing& drawing, DotWriter& dot) {
  auto drawn = [&](int id) { return drawing.include.empty() || At(drawing.include, id, false); };
  DrawnEnds ends;
  std::vector<bool> has_input(graph.num_nodes(), false), has_reader(graph.num_nodes(), false);
  for (const Node& node : graph.nodes()) {
    if (!drawn(node.id)) continue;
    DotAttrs attrs =
        NodeAttrs(node, At(drawing.marks, node.id, NodeMark::kPlain), At(drawing.fills, node.id, std::string()));
    if (const std::string origin = At(drawing.origins, node.id, std::string()); !origin.empty()) {
      for (auto& [key, value] : attrs) {
        if (key == "label") value = absl::StrCat(origin, "\n", value);
      }
    }
    dot.Node(NodeDotId(drawing, node.id), attrs);
  }
  for (const Node& node : graph.nodes()) {
    if (!drawn(node.id)) continue;
    for (const TensorRef& in : node.inputs) {
      if (!drawn(in.node)) continue;
      has_input[node.id] = has_reader[in.node] = true;
      DotAttrs attrs;
      if (graph.node(in.node).output_types.size() > 1) attrs.push_back({"taillabel", absl::StrCat(in.index)});
      dot.Edge(NodeDotId(drawing, in.node), NodeDotId(drawing, node.id), attrs);
    }
  }
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const GraphOutput& out = graph.outputs()[k];
    if (!drawn(out.tensor.node)) continue;
    const std::string label =
        drawing.output_labels.empty() ? absl::StrCat("output ", out.name) : At(drawing.output_labels, k, std::string());
    if (label.empty()) continue;
    const std::string id = absl::StrCat(drawing.prefix, "o", k);
    has_reader[out.tensor.node] = true;
    ends.bottoms.push_back(id);
    dot.Node(id, {{"label", label}, {"shape", "plaintext"}, {"fontsize", "10"}});
    DotAttrs attrs = {{"style", "dashed"}, {"arrowhead", "none"}};
    if (graph.node(out.tensor.node).output_types.size() > 1) attrs.push_back({"taillabel", absl::StrCat(out.tensor.index)});
    dot.Edge(NodeDotId(drawing, out.tensor.node), id, attrs);
  }
  for (const Node& node : graph.nodes()) {
    if (!drawn(node.id)) continue;
    if (!has_input[node.id]) {
      (node.kind == OpKind::kWeight ? ends.weight_tops : ends.tops).push_back(NodeDotId(drawing, node.id));
    }
    if (!has_reader[node.id]) ends.bottoms.push_back(NodeDotId(drawing, node.id));
  }
  return ends;
}

Anchors WriteAnchors(const std::string& prefix, const DrawnEnds& ends, DotWriter& dot) {
  Anchors anchors = {prefix + "top", prefix + "bottom"};
  const DotAttrs point = {{"shape", "point"}, {"style", "invis"}, {"width", "0"}, {"height", "0"}, {"label", ""}};
  dot.Node(anchors.top, point);
  dot.Node(anchors.bottom, point);
  for (const std::string& id : ends.tops.empty() ? ends.weight_tops : ends.tops) {
    dot.Edge(anchors.top, id, {{"style", "invis"}});
  }
  for (const std::string& id : ends.bottoms) dot.Edge(id, anchors.bottom, {{"style", "invis"}});
  return anchors;
}

void WriteRowRoot(const std::string& id, DotWriter& dot) {
  dot.Node(id, {{"shape", "point"}, {"style", "invis"}, {"width", "0"}, {"height", "0"}, {"label", ""}});
}

void WriteRow(const std::string& root, const std::vector<Anchors>& drawings, DotWriter& dot) {
  for (const Anchors& a : drawings) dot.Edge(root, a.top, {{"style", "invis"}});
}

DotAttrs PictureAttrs(const std::string& caption, const std::string& caption_at) {
  return {{"label", caption}, {"labelloc", caption_at}, {"fontname", "Helvetica"}, {"rankdir", "TB"},
          {"nodesep", "0.25"}, {"ranksep", "0.35"}};
}

void WriteDefaults(DotWriter& dot) {
  dot.Defaults("node", {{"fontname", "Helvetica"}, {"fontsize", "11"}});
  dot.Defaults("edge", {{"fontname", "Helvetica"}, {"fontsize", "10"}});
}

}  // namespace taso::pictures
