// The changes of a GraphDiff grouped into regions a reader can take in one
// at a time: changed nodes that touch (on either side, or through the same
// unchanged neighbour, or as one rewired pair) form one region, drawn with
// its unchanged neighbours as context.
#ifndef TASO_PICTURES_DIFF_REGIONS_H_
#define TASO_PICTURES_DIFF_REGIONS_H_

#include <vector>

#include "core/graph.h"
#include "pictures/graph_diff.h"

namespace taso::pictures {

struct DiffRegion {
  // Node ids, ascending: the changed nodes of each side, and the unchanged
  // nodes that feed them or read them.
  std::vector<int> before_changed, after_changed;
  std::vector<int> before_context, after_context;

  int size() const {
    return static_cast<int>(before_changed.size() + after_changed.size() + before_context.size() +
                            after_context.size());
  }
};

// In the order of each region's first changed node of `before` (regions with
// additions only come last). Empty when nothing changed.
std::vector<DiffRegion> ChangedRegions(const Graph& before, const Graph& after, const GraphDiff& diff);

}  // namespace taso::pictures

#endif  // TASO_PICTURES_DIFF_REGIONS_H_
