// The two forms of an `axioms validate` report: a table for people and JSON
// for scripts, over the same counts.
#ifndef TASO_VERIFIER_AXIOM_VALIDATION_REPORT_H_
#define TASO_VERIFIER_AXIOM_VALIDATION_REPORT_H_

#include <string>
#include <vector>

#include "verifier/axiom_validation.h"

namespace taso::verifier {

// One row per axiom, its counterexample and strata without instances under
// it, a totals line; `by_param` adds each axiom's instances per parameter value.
std::string ValidationTable(const std::vector<AxiomValidation>& results, bool by_param);

// One JSON object: the configuration, totals and every axiom's counts.
std::string ValidationJson(const std::vector<AxiomValidation>& results, const ValidationOptions& options,
                           double wall_seconds);

}  // namespace taso::verifier

#endif  // TASO_VERIFIER_AXIOM_VALIDATION_REPORT_H_
