#include "records/axiom_versions.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_join.h"

namespace taso::records {
namespace {

// verifier/axioms.cc AxiomSetVersion() of each trusted set, oldest first.
constexpr std::array<absl::string_view, 1> kKnown = {
    "axioms-69-16accf5ef6c0",  // the 69 axioms since 2026-11-24 (the built-in rule set's)
};

}  // namespace

bool KnownAxiomSetVersion(absl::string_view version) {
  return std::find(kKnown.begin(), kKnown.end(), version) != kKnown.end();
}

std::string KnownAxiomSetVersions() { return absl::StrJoin(kKnown, ", "); }

}  // namespace taso::records
