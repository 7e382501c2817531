// A rule as a picture: its source and target side by side, in two clusters
// ("source", "target"). A variable has the same name and the same colour on
// both sides, and paired outputs the same label, so the reader sees what
// maps to what; the caption gives the id, status, side conditions and the
// axioms of its proof.
#ifndef TASO_PICTURES_RULE_PICTURE_H_
#define TASO_PICTURES_RULE_PICTURE_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"

namespace taso::pictures {

// InvalidArgument when a side is not a valid graph.
absl::StatusOr<std::string> RuleDot(const rules::Rule& rule);

}  // namespace taso::pictures

#endif  // TASO_PICTURES_RULE_PICTURE_H_
