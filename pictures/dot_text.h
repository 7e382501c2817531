// Graphviz DOT text: quoting, and a writer for the statements the pictures
// use (graphs, clusters, nodes, edges). Every string that reaches the file
// goes through DotQuote, so names taken from a model (which may hold quotes,
// backslashes or newlines) cannot break the file or inject statements.
#ifndef TASO_PICTURES_DOT_TEXT_H_
#define TASO_PICTURES_DOT_TEXT_H_

#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <vector>

namespace taso::pictures {

// A double-quoted DOT string. A newline in `text` becomes a centred line
// break in a label; other escapes DOT would interpret (\N, \l) are disarmed.
std::string DotQuote(absl::string_view text);

// Attribute name and (unquoted) value, e.g. {"shape", "box"}.
using DotAttrs = std::vector<std::pair<std::string, std::string>>;

class DotWriter {
 public:
  // Starts `digraph name { attrs }`.
  DotWriter(absl::string_view name, const DotAttrs& graph_attrs);

  // `subgraph cluster_<id> { label=...; attrs }`; Close() ends it.
  void OpenCluster(absl::string_view id, absl::string_view label, const DotAttrs& attrs);
  void Close();

  // `node [attrs]` / `edge [attrs]`: defaults for what follows in scope.
  void Defaults(absl::string_view what, const DotAttrs& attrs);
  void Node(absl::string_view id, const DotAttrs& attrs);
  void Edge(absl::string_view from, absl::string_view to, const DotAttrs& attrs = {});

  // Closes whatever is still open and returns the text.
  std::string Finish();

 private:
  void Line(absl::string_view statement);

  std::string text_;
  int depth_ = 1;
};

}  // namespace taso::pictures

#endif  // TASO_PICTURES_DOT_TEXT_H_
