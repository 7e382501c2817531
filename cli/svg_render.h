// Graphviz's `dot -Tsvg` run on DOT text (pictures/), for the commands that
// write pictures. Graphviz is a Debian package deploy/setup.sh installs; it
// is looked up on PATH when a picture is asked for, so a missing one is a
// clear error before any long work starts.
#ifndef TASO_CLI_SVG_RENDER_H_
#define TASO_CLI_SVG_RENDER_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace taso::cli {

struct SvgRenderOptions {
  std::string program = "dot";  // looked up on PATH unless it holds a '/'
  // Graphviz is stopped past this (a huge picture): DeadlineExceeded.
  absl::Duration time_limit = absl::Seconds(120);
};

// The program's path; FailedPrecondition "... install graphviz
// (deploy/setup.sh)" when it is not there.
absl::StatusOr<std::string> FindGraphviz(const SvgRenderOptions& options = {});

// Renders `dot_text` to `svg_path` (written whole or not at all). Graphviz's
// own complaint comes back as Internal with its last lines.
absl::Status RenderSvg(const std::string& dot_text, const std::string& svg_path, const SvgRenderOptions& options = {});

}  // namespace taso::cli

#endif  // TASO_CLI_SVG_RENDER_H_
