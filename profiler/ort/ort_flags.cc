#include "profiler/ort/ort_flags.h"

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, ort_worker, "", "--backend ort: the worker script (default: $TASO_ORT_WORKER, else "
          "profiler/ort/worker.js in this binary's runfiles or beside it; its node_modules from deploy/setup.sh)");
ABSL_FLAG(int32_t, ort_threads, 0, "--backend ort: ONNX Runtime intra-op threads when a request names none (0: one per "
          "physical core, as ONNX Runtime picks)");
ABSL_FLAG(std::string, ort_level, "all", "--backend ort: ONNX Runtime graphOptimizationLevel (disabled, basic, "
          "extended, layout, all)");
ABSL_FLAG(int32_t, ort_weight_mb, 8, "--backend ort: an operator with weights is timed as copies with weights of "
          "their own until they total this many MiB, so they are as cold as a model's (0: one copy)");
ABSL_FLAG(int32_t, ort_timings, 2, "--backend ort: times each operator is timed, apart (the request that measures it "
          "times it again at its end); the fastest is kept. 1 halves a cold model's costing time, noisier");
ABSL_FLAG(int32_t, ort_timeout_s, 600, "--backend ort: longest wait for one answer of the worker, in seconds (it "
          "is restarted after)");

namespace taso::profiler {

absl::StatusOr<OrtBackendOptions> OrtBackendOptionsFromFlags(
    const std::function<std::string(const std::string&)>& resolve_path) {
  std::string worker = absl::GetFlag(FLAGS_ort_worker);
  if (!worker.empty() && resolve_path) worker = resolve_path(worker);
  return OrtBackendOptionsFromFlags(worker, absl::GetFlag(FLAGS_ort_threads), absl::GetFlag(FLAGS_ort_level),
                                    absl::GetFlag(FLAGS_ort_timeout_s), absl::GetFlag(FLAGS_ort_weight_mb),
                                    absl::GetFlag(FLAGS_ort_timings));
}

}  // namespace taso::profiler
