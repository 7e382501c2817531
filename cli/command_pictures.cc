#include "cli/command_pictures.h"


#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_write.h"
#include "onnx_io/onnx_import.h"
#include "pictures/diff_picture.h"
#include "pictures/rule_picture.h"

namespace taso::cli {
namespace {

// A FILE.dot gets the DOT text itself (for other Graphviz tools); anything
// else the SVG.
absl::Status WritePicture(const std::string& dot, const std::string& path, const SvgRenderOptions& render) {
  if (!absl::EndsWith(path, ".dot")) return RenderSvg(dot, path, render);
  return WriteFileAtomically(path, dot);
}

}  // namespace

absl::Status WriteRuleSvg(const rules::Rule& rule, const std::string& svg_path, const SvgRenderOptions& render) {
  auto dot = pictures::RuleDot(rule);
  if (!dot.ok()) return dot.status();
  return WritePicture(*dot, svg_path, render);
}

absl::StatusOr<std::string> WriteGraphDiffSvg(const Graph& before, const Graph& after,
                                              const ModelDiffSvgOptions& options) {
  pictures::DiffPictureOptions picture_options;
  picture_options.title = options.title;
  picture_options.max_nodes = options.max_nodes;
  picture_options.before_origins = options.before_origins;
  picture_options.after_origins = options.after_origins;
  auto picture = pictures::DrawDiff(before, after, picture_options);
  if (!picture.ok()) return picture.status();
  if (absl::Status s = WritePicture(picture->dot, options.svg_path, options.render); !s.ok()) return s;
  const pictures::GraphDiff& d = picture->diff;
  std::string summary = absl::StrCat(picture->regions, picture->regions == 1 ? " region" : " regions", ": ", d.removed,
                                     " nodes removed, ", d.added, " added, ", d.rewired, " reading other inputs");
  if (picture->regions_drawn < picture->regions) {
    absl::StrAppend(&summary, " (", picture->regions_drawn, " regions drawn: --diff-svg-max-nodes ",
                    options.max_nodes, ")");
  }
  return summary;
}

absl::StatusOr<std::string> WriteModelDiffSvg(const std::string& before_onnx, const std::string& after_onnx,
                                              const ModelDiffSvgOptions& options) {
  auto before = ImportOnnx(before_onnx);
  if (!before.ok()) return absl::InvalidArgumentError(absl::StrCat("the model before: ", before.status().message()));
  auto after = ImportOnnx(after_onnx);
  if (!after.ok()) return absl::InvalidArgumentError(absl::StrCat("the model after: ", after.status().message()));
  ModelDiffSvgOptions labelled = options;
  labelled.before_origins = OnnxNodeLabels(*before);
  labelled.after_origins = OnnxNodeLabels(*after);
  return WriteGraphDiffSvg(before->graph, after->graph, labelled);
}

}  // namespace taso::cli
