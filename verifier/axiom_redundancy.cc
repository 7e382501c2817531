#include "verifier/axiom_redundancy.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "verifier/axioms.h"
#include "verifier/symbols.h"
#include "z3++.h"

namespace taso::verifier {

absl::StatusOr<std::vector<AxiomRedundancy>> FindRedundantAxioms(const RedundancyOptions& options) {
  std::vector<AxiomRedundancy> out;
  try {
    z3::context ctx;
    Symbols symbols(ctx);
    auto axioms = BuildAxioms(symbols);
    if (!axioms.ok()) return axioms.status();
    std::vector<z3::expr> guards;
    for (size_t i = 0; i < axioms->size(); ++i) guards.push_back(ctx.bool_const(absl::StrCat("use!", i).c_str()));
    for (size_t i = 0; i < axioms->size(); ++i) {
      const BuiltAxiom& target = (*axioms)[i];
      if (!options.only.empty() && !options.only.count(target.info.name)) continue;
      z3::solver solver(ctx);
      z3::params params(ctx);
      params.set("rlimit", static_cast<unsigned>(std::min<uint64_t>(options.rlimit, UINT32_MAX)));
      params.set("mbqi", false);
      solver.set(params);
      z3::expr_vector assumptions(ctx);
      for (size_t j = 0; j < axioms->size(); ++j) {
        if (j == i) continue;
        solver.add(z3::implies(guards[j], (*axioms)[j].formula));
        assumptions.push_back(guards[j]);
      }
      solver.add(!target.formula);
      AxiomRedundancy r;
      r.name = target.info.name;
      const z3::check_result answer = solver.check(assumptions);
      if (answer == z3::unsat) {
        r.entailed = true;
        z3::expr_vector core = solver.unsat_core();
        for (unsigned k = 0; k < core.size(); ++k) {
          for (size_t j = 0; j < guards.size(); ++j) {
            if (z3::eq(core[k], guards[j])) r.by.push_back((*axioms)[j].info.name);
          }
        }
        std::sort(r.by.begin(), r.by.end());
      } else {
        r.detail = answer == z3::sat ? "independent (Z3 found a model of the others where it fails)"
                                     : absl::StrCat("not shown: ", solver.reason_unknown());
      }
      out.push_back(std::move(r));
    }
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
  return out;
}

}  // namespace taso::verifier
