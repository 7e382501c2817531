#include "pictures/diff_picture.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "pictures/diff_regions.h"
#include "pictures/dot_text.h"
#include "pictures/graph_dot.h"

namespace taso::pictures {
namespace {

NodeMark MarkOf(NodeChange change) {
  switch (change) {
    case NodeChange::kRemoved:
      return NodeMark::kRemoved;
    case NodeChange::kAdded:
      return NodeMark::kAdded;
    case NodeChange::kRewired:
      return NodeMark::kRewired;
    case NodeChange::kKept:
      break;
  }
  return NodeMark::kContext;
}

// One side of one region: its changed nodes marked, its context greyed.
GraphDrawing SideDrawing(const Graph& graph, const std::vector<NodeChange>& change, const std::vector<int>& changed,
                         const std::vector<int>& context, const std::string& prefix) {
  GraphDrawing drawing;
  drawing.prefix = prefix;
  drawing.include.assign(graph.num_nodes(), false);
  drawing.marks.assign(graph.num_nodes(), NodeMark::kContext);
  for (int id : changed) drawing.include[id] = true, drawing.marks[id] = MarkOf(change[id]);
  for (int id : context) drawing.include[id] = true;
  drawing.output_labels.assign(graph.outputs().size(), "");
  for (size_t k = 0; k < graph.outputs().size(); ++k) {
    const int node = graph.outputs()[k].tensor.node;
    // Only where a changed node is an output: a context node's outputs are
    // no news.
    if (change[node] != NodeChange::kKept) drawing.output_labels[k] = absl::StrCat("output ", graph.outputs()[k].name);
  }
  return drawing;
}

}  // namespace

absl::StatusOr<DiffPicture> DrawDiff(const Graph& before, const Graph& after, const DiffPictureOptions& options) {
  if (options.max_nodes < 1) return absl::InvalidArgumentError("the diff picture's node limit must be at least 1");
  auto diff = DiffGraphs(before, after);
  if (!diff.ok()) return diff.status();
  const std::vector<DiffRegion> regions = ChangedRegions(before, after, *diff);

  DiffPicture picture;
  picture.regions = static_cast<int>(regions.size());
  std::vector<const DiffRegion*> drawn;
  int nodes = 0, skipped_nodes = 0;
  for (const DiffRegion& region : regions) {
    if (nodes + region.size() > options.max_nodes) {
      skipped_nodes += region.size();
      continue;
    }
    nodes += region.size();
    drawn.push_back(&region);
  }
  picture.regions_drawn = static_cast<int>(drawn.size());

  std::vector<std::string> caption;
  if (!options.title.empty()) caption.push_back(options.title);
  if (diff->unchanged()) {
    caption.push_back("no changes: the model after computes the model before, node for node");
  } else {
    caption.push_back(absl::StrCat(diff->removed, " nodes removed (red), ", diff->added, " added (green), ",
                                   diff->rewired, " reading other inputs (orange) in ", regions.size(),
                                   regions.size() == 1 ? " region" : " regions", "; operators ", before.num_ops(),
                                   " -> ", after.num_ops()));
    caption.push_back("grey: unchanged neighbours; other unchanged nodes are not drawn");
  }
  if (picture.regions_drawn < picture.regions) {
    caption.push_back(absl::StrCat(picture.regions - picture.regions_drawn, " regions (", skipped_nodes,
                                   " nodes) not drawn: over the limit of ", options.max_nodes, " nodes"));
  }
  DotWriter dot("diff", PictureAttrs(absl::StrJoin(caption, "\n"), "t"));
  WriteDefaults(dot);
  std::vector<std::string> above;  // the bottoms of the region above: the next region goes below
  for (size_t r = 0; r < drawn.size(); ++r) {
    const DiffRegion& region = *drawn[r];
    const std::string id = absl::StrCat("r", r + 1);
    dot.OpenCluster(id, absl::StrCat("region ", r + 1), {{"style", "rounded"}, {"color", "#90a4ae"}});
    const std::string root = id + "root";
    WriteRowRoot(root, dot);
    const struct {
      const char* name;
      const Graph& graph;
      const std::vector<NodeChange>& change;
      const std::vector<int>& changed;
      const std::vector<int>& context;
      const std::vector<std::string>& origins;
    } sides[] = {{"before", before, diff->before_change, region.before_changed, region.before_context,
                  options.before_origins},
                 {"after", after, diff->after_change, region.after_changed, region.after_context,
                  options.after_origins}};
    std::vector<Anchors> anchors;
    for (const auto& side : sides) {
      if (side.changed.empty()) continue;  // e.g. only additions: no "before" to show
      const std::string side_id = absl::StrCat(id, side.name);
      dot.OpenCluster(side_id, side.name, {{"style", "dashed"}, {"color", "#b0bec5"}});
      GraphDrawing drawing =
          SideDrawing(side.graph, side.change, side.changed, side.context, absl::StrCat(side_id, "_"));
      drawing.origins = side.origins;
      anchors.push_back(WriteAnchors(drawing.prefix, WriteGraph(side.graph, drawing, dot), dot));
      dot.Close();
    }
    WriteRow(root, anchors, dot);  // before on the left, after on the right
    dot.Close();
    for (const std::string& bottom : above) dot.Edge(bottom, root, {{"style", "invis"}});
    above.clear();
    for (const Anchors& a : anchors) above.push_back(a.bottom);
  }
  picture.dot = dot.Finish();
  picture.diff = *std::move(diff);
  return picture;
}

}  // namespace taso::pictures
