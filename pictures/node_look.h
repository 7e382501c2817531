// How a picture shows one IR node: its label (what it is, its key
// parameters, its output shapes) and its style, which tells graph inputs,
// weights, load-time constants, operators and opaque operators apart at a
// glance. A mark says what a diff or rule picture wants the reader to see.
#ifndef TASO_PICTURES_NODE_LOOK_H_
#define TASO_PICTURES_NODE_LOOK_H_

#include <string>

#include "core/graph.h"
#include "pictures/dot_text.h"

namespace taso::pictures {

enum class NodeRole { kInput, kWeight, kConstant, kOperator, kOpaque };
NodeRole RoleOf(const Node& node);

enum class NodeMark {
  kPlain,
  kRemoved,  // diff: in the model before only
  kAdded,    // diff: in the model after only
  kRewired,  // diff: the same operator, reading other tensors than before
  kContext,  // diff: unchanged, drawn greyed as the border of a changed region
};

// Label lines: "conv2d" / "input x" / "weight w1" / "Gather (opaque)"; the
// parameters that matter ("stride=1x1 pad=same act=relu"; none for relu);
// the output shapes ("f32[1,64,56,56]").
std::string NodeLabel(const Node& node);

// `fill` overrides the role's fill colour (a rule picture colours each
// variable alike on both sides); "" keeps it.
DotAttrs NodeAttrs(const Node& node, NodeMark mark, const std::string& fill = "");

}  // namespace taso::pictures

#endif  // TASO_PICTURES_NODE_LOOK_H_
