// A model before and after as a picture of what changed: one cluster per
// changed region (diff_regions.h) with the region before and after side by
// side. Removed operators are red, added ones green, operators that now read
// other tensors have an orange border, and unchanged neighbours are grey;
// every other unchanged node is left out.
#ifndef TASO_PICTURES_DIFF_PICTURE_H_
#define TASO_PICTURES_DIFF_PICTURE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "pictures/graph_diff.h"

namespace taso::pictures {

struct DiffPictureOptions {
  std::string title;     // first caption line, e.g. "resnet50.onnx -> out.onnx"
  // Nodes drawn at most (changed and context, both sides): regions past it
  // are counted in the caption, not drawn, so Graphviz's time stays bounded.
  int max_nodes = 2000;
  // Per node id of each graph, where it came from in the user's model ("ONNX
  // conv1 (Conv)"), shown as its label's first line; empty: none.
  std::vector<std::string> before_origins, after_origins;
};

struct DiffPicture {
  std::string dot;
  GraphDiff diff;
  int regions = 0;
  int regions_drawn = 0;
};

// InvalidArgument if max_nodes < 1 or a graph is cyclic.
absl::StatusOr<DiffPicture> DrawDiff(const Graph& before, const Graph& after, const DiffPictureOptions& options);

}  // namespace taso::pictures

#endif  // TASO_PICTURES_DIFF_PICTURE_H_
