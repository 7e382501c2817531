// The second check of a result, independent of our own ONNX code: where the
// never-slower step runs the input and output files in ONNX Runtime, their
// outputs on the same deterministic random inputs are compared there too
// (MeasureGraphRequest.compare_outputs; worker.js "compare"). Our own check
// (numeric_check.h) reads the exported bytes back with our importer and runs
// them in our interpreter, which stands in for opaque operators without
// reading their attributes: an export that changes what a runtime computes
// but not what our importer models passes it, and only a runtime sees it.
#ifndef TASO_OPTIMIZER_RUNTIME_CHECK_H_
#define TASO_OPTIMIZER_RUNTIME_CHECK_H_

#include <string>
#include <vector>

#include "proto/profiler.pb.h"

namespace taso::optimizer {

enum class RuntimeCheckVerdict {
  kNotReached,          // our own check failed first, or the input came back unmeasured
  kEqual,               // every output within the tolerance
  kDifferent,           // an output differs, or the output file does not run where the input does
  kSkippedUnavailable,  // no ONNX Runtime: node or onnxruntime-node missing, or a profiler without it
  kSkipped,             // the files were not run in ONNX Runtime (--no-measure, another measure backend)
  kFailed,              // ONNX Runtime ran but could not compare (the input does not run in it, ...)
};

struct RuntimeCheck {
  RuntimeCheckVerdict verdict = RuntimeCheckVerdict::kNotReached;
  // Over every output compared (OutputDifference's figures): the largest
  // |b - a| and |b - a| / (1 + |a|), a the input file's value; 0 when none ran.
  double max_abs_diff = 0;
  double max_rel_diff = 0;
  // Per graph output, as ONNX Runtime compared them.
  std::vector<profiler::OutputDifference> outputs;
  // E.g. "equal on 2 outputs (max |diff| 2.4e-07, max rel 1.1e-07)",
  // "output y differs: ...", or why it did not run.
  std::string reason;
};

// The verdict on ONNX Runtime's comparison of the output file with the
// input file: an output differs when it cannot be compared (missing, another
// type or shape), when an exact output has a differing element, or when a
// floating-point one has a non-finite mismatch or a relative error above
// `tolerance` (numeric_check.h's: |a - b| <= tolerance * (1 + |a|)).
RuntimeCheck JudgeRuntimeComparison(const profiler::ModelComparison& comparison, double tolerance);

// A check that did not run, for `why` (kSkippedUnavailable, kSkipped,
// kFailed or kNotReached); `reason` follows "not run: ".
RuntimeCheck RuntimeCheckNotRun(RuntimeCheckVerdict why, const std::string& reason);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_RUNTIME_CHECK_H_
