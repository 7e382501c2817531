// The pictures taso's commands write: `taso rules show ID --svg FILE` (a
// rule's two sides) and `taso optimize IN.onnx --diff-svg FILE` (what the
// optimizer changed in the model). DOT from pictures/, SVG from Graphviz; a
// path ending in .dot gets the DOT text instead.
#ifndef TASO_CLI_COMMAND_PICTURES_H_
#define TASO_CLI_COMMAND_PICTURES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "cli/svg_render.h"
#include "core/graph.h"
#include "proto/rules.pb.h"

namespace taso::cli {

absl::Status WriteRuleSvg(const rules::Rule& rule, const std::string& svg_path,
                          const SvgRenderOptions& render = {});

struct ModelDiffSvgOptions {
  std::string svg_path;
  std::string title;    // the picture's first caption line
  int max_nodes = 2000;  // DiffPictureOptions::max_nodes (--diff-svg-max-nodes)
  // DiffPictureOptions' labels: the ONNX node each IR node came from.
  std::vector<std::string> before_origins, after_origins;
  SvgRenderOptions render;
};

// The graphs diffed by structure (pictures/graph_diff.h) and drawn. Returns
// a one-line summary for the command's output ("3 regions: 104 nodes
// removed, 53 added, 0 reading other inputs").
absl::StatusOr<std::string> WriteGraphDiffSvg(const Graph& before, const Graph& after,
                                              const ModelDiffSvgOptions& options);

// The same for two ONNX models, imported as the optimizer imports them
// (what a client of taso_optimizer has: a fusion ONNX spells as several
// nodes shows as those nodes).
absl::StatusOr<std::string> WriteModelDiffSvg(const std::string& before_onnx, const std::string& after_onnx,
                                              const ModelDiffSvgOptions& options);

}  // namespace taso::cli

#endif  // TASO_CLI_COMMAND_PICTURES_H_
