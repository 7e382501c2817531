#include "records/axiom_versions.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_join.h"

namespace taso::records {
namespace {

// verifier/axioms.cc AxiomSetVersion() of each trusted set, oldest first.
// Not trusted: axioms-69-16accf5ef6c0 (2026-11-24) and axioms-71-5b37d8deea61
// (earlier on 2026-12-07), whose sums over a concatenated inner dimension
// (matmul_concat_sum, conv_concat_sum) held for halves of any shapes; read
// right to left they proved rules false where the halves do not align. Nor
// axioms-71-988a58d78fb9 (2026-12-07), which fixed those two but gave no
// patterns: Z3 could instantiate 15 laws from a side whose typing does not
// imply the other's, so a proof could pass through ill-typed terms.
constexpr std::array<absl::string_view, 1> kKnown = {
    "axioms-74-bfa82a845e1c",  // each law used only from sides whose typing implies the other's (2026-12-07)
};

}  // namespace

bool KnownAxiomSetVersion(absl::string_view version) {
  return std::find(kKnown.begin(), kKnown.end(), version) != kKnown.end();
}

std::string KnownAxiomSetVersions() { return absl::StrJoin(kKnown, ", "); }

}  // namespace taso::records
