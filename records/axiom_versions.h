// The axiom sets whose proofs this build takes from a rules file or a store
// (ProofInfo.axiom_set_version). A proof is only as good as the axioms it
// used: a set this build never had (a later build's, or one with test axioms
// added) is not trusted, and such rules are refused on load until proved
// again here. The verifier's own set is always listed (prover_test checks
// it); add a set here when the axioms change and its proofs still hold.
#ifndef TASO_RECORDS_AXIOM_VERSIONS_H_
#define TASO_RECORDS_AXIOM_VERSIONS_H_

#include <string>
#include "absl/strings/string_view.h"

namespace taso::records {

bool KnownAxiomSetVersion(absl::string_view version);

// "axioms-69-16accf5ef6c0, ...", for messages.
std::string KnownAxiomSetVersions();

}  // namespace taso::records

#endif  // TASO_RECORDS_AXIOM_VERSIONS_H_
