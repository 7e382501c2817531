// An IR graph's nodes and edges written into a DOT picture: all of it, or
// the nodes a diff selects, each with its mark. Node ids are prefixed so two
// graphs (a rule's sides, a model before and after) share one picture.
#ifndef TASO_PICTURES_GRAPH_DOT_H_
#define TASO_PICTURES_GRAPH_DOT_H_

#include <string>
#include <vector>

#include "core/graph.h"
#include "pictures/dot_text.h"
#include "pictures/node_look.h"

namespace taso::pictures {

struct GraphDrawing {
  std::string prefix;              // DOT id of node i: prefix + "n" + i; of output k: prefix + "o" + k
  std::vector<bool> include;       // per node: draw it (empty: every node)
  std::vector<NodeMark> marks;     // per node (empty: every node plain)
  std::vector<std::string> fills;  // per node fill override, "" none (empty: none)
  // Per node, a first label line naming where it came from in the user's
  // model ("ONNX conv1 (Conv)"); "" none (empty: none).
  std::vector<std::string> origins;
  // Per graph output, the label of its small output node; "" draws none
  // (empty: "output NAME" for every output whose node is drawn).
  std::vector<std::string> output_labels;
};

// The DOT id of node `id` as `drawing` writes it.
std::string NodeDotId(const GraphDrawing& drawing, int id);

// The DOT ids of what WriteGraph drew at the top (no drawn inputs) and at
// the bottom (no drawn readers).
struct DrawnEnds {
  std::vector<std::string> tops, bottoms;
  // Weights at the top: left to sit beside their readers rather than in a
  // row above the whole drawing (long edges otherwise).
  std::vector<std::string> weight_tops;
};

// Writes the selected nodes, every edge between two of them (labelled with
// the output index where a node has several outputs) and the output nodes.
DrawnEnds WriteGraph(const Graph& graph, const GraphDrawing& drawing, DotWriter& dot);

// Two invisible points in the current cluster, one above every top of
// `ends` (the weights only when nothing else is at the top) and one below
// every bottom, so a picture can place whole drawings
// beside or below one another: {top id, bottom id}.
struct Anchors {
  std::string top, bottom;
};
Anchors WriteAnchors(const std::string& prefix, const DrawnEnds& ends, DotWriter& dot);

// An invisible point (written where the drawings' common cluster is open),
// and, once the drawings are written, edges from it to their tops in order:
// Graphviz then keeps them in a row, left to right, tops aligned. (A flat
// edge between the tops with rank=same comes out reversed inside a cluster.)
void WriteRowRoot(const std::string& id, DotWriter& dot);
void WriteRow(const std::string& root, const std::vector<Anchors>& drawings, DotWriter& dot);

// Graph-level, node and edge attributes every picture shares.
DotAttrs PictureAttrs(const std::string& caption, const std::string& caption_at);
void WriteDefaults(DotWriter& dot);

}  // namespace taso::pictures

#endif  // TASO_PICTURES_GRAPH_DOT_H_
