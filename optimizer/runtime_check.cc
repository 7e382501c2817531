#include "optimizer/runtime_check.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace taso::optimizer {
namespace {

// Why output `d` fails the check, or "" when it passes.
std::string OutputFailure(const profiler::OutputDifference& d, double tolerance) {
  if (!d.mismatch().empty()) return absl::StrCat("output ", d.name(), ": ", d.mismatch());
  const std::string worst =
      absl::StrFormat("element %d: %g (input file) vs %g (output file)", d.worst_index(), d.worst_reference(),
                      d.worst_value());
  if (d.exact()) {
    if (d.differing() == 0) return "";
    return absl::StrFormat("output %s differs in %d of %d elements (compared exactly), %s", d.name(), d.differing(),
                           d.elements(), worst);
  }
  if (d.nonfinite_mismatches() == 0 && d.max_rel_error() <= tolerance) return "";
  std::string text = absl::StrFormat("output %s differs: max |diff| %g, max rel %g (tolerance %g), %d of %d elements",
                                     d.name(), d.max_abs_error(), d.max_rel_error(), tolerance, d.differing(),
                                     d.elements());
  if (d.nonfinite_mismatches() > 0) {
    absl::StrAppend(&text, absl::StrFormat(" (%d NaN or infinite where the other is not)", d.nonfinite_mismatches()));
  }
  return absl::StrCat(text, "; worst ", worst);
}

}  // namespace

RuntimeCheck JudgeRuntimeComparison(const profiler::ModelComparison& comparison, double tolerance) {
  switch (comparison.failure()) {
    case profiler::ModelComparison::COMPARED:
      break;
    case profiler::ModelComparison::MODEL_FAILED: {
      // The input runs and the output does not: the user's runtime could not run what we return.
      RuntimeCheck check;
      check.verdict = RuntimeCheckVerdict::kDifferent;
      check.reason = absl::StrCat("the output file does not run in ONNX Runtime where the input file does (",
                                  comparison.error(), ")");
      return check;
    }
    case profiler::ModelComparison::REFERENCE_FAILED:
    case profiler::ModelComparison::NOT_COMPARED:
    default:
      return RuntimeCheckNotRun(RuntimeCheckVerdict::kFailed, comparison.error());
  }
  if (comparison.outputs_size() == 0) return RuntimeCheckNotRun(RuntimeCheckVerdict::kFailed, "no output compared");
  RuntimeCheck check;
  std::vector<std::string> failures;
  for (const profiler::OutputDifference& d : comparison.outputs()) {
    check.outputs.push_back(d);
    if (d.mismatch().empty()) {
      // NaN figures (none finite) stay out of the maxima; the failure says so.
      if (d.max_abs_error() > check.max_abs_diff) check.max_abs_diff = d.max_abs_error();
      if (d.max_rel_error() > check.max_rel_diff) check.max_rel_diff = d.max_rel_error();
    }
    if (std::string why = OutputFailure(d, tolerance); !why.empty()) failures.push_back(std::move(why));
  }
  if (!failures.empty()) {
    check.verdict = RuntimeCheckVerdict::kDifferent;
    check.reason = absl::StrCat("ONNX Runtime computes different outputs for the output file: ",
                                absl::StrJoin(failures, "; "));
    return check;
  }
  check.verdict = RuntimeCheckVerdict::kEqual;
  check.reason = absl::StrFormat("equal in ONNX Runtime on %d output%s (max |diff| %g, max rel %g)",
                                 comparison.outputs_size(), comparison.outputs_size() == 1 ? "" : "s",
                                 check.max_abs_diff, check.max_rel_diff);
  return check;
}

RuntimeCheck RuntimeCheckNotRun(RuntimeCheckVerdict why, const std::string& reason) {
  RuntimeCheck check;
  check.verdict = why;
  check.reason = absl::StrCat("not run: ", reason);
  return check;
}

}  // namespace taso::optimizer
