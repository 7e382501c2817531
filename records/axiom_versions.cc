#include "records/axiom_versions.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_join.h"

namespace taso::records {
namespace {

// verifier/axioms.cc AxiomSetVersion() of each trusted set, oldest first.
constexpr std::array<absl::string_view, 2> kKnown = {
    "axioms-69-16accf5ef6c0",  // the 69 axioms since 2026-11-24 (the built-in rule set's)
    "axioms-71-5b37d8deea61",  // and commutativity of broadcasting sums and products (2026-12-07)
};

}  // namespace

bool KnownAxiomSetVersion(absl::string_view version) {
  return std::find(kKnown.begin(), kKnown.end(), version) != kKnown.end();
}

std::string KnownAxiomSetVersions() { return absl::StrJoin(kKnown, ", "); }

}  // namespace taso::records
