// The ort backend's flags, defined once for every binary that can run it
// (taso_profiler, taso_optimizer's embedded profiler, taso):
//   --ort_worker FILE   the worker script (default $TASO_ORT_WORKER, else
//                       profiler/ort/worker.js beside the binary)
//   --ort_threads N     ONNX Runtime intra-op threads (0: one per physical core)
//   --ort_level L       graphOptimizationLevel: disabled|basic|extended|layout|all
//   --ort_weight_mb N   weights per timed operator, as cold as a model's (8)
//   --ort_timings N     timings of each operator, apart; the fastest kept (2)
//   --ort_timeout_s S   longest wait for one answer of the worker (600)
#ifndef TASO_PROFILER_ORT_ORT_FLAGS_H_
#define TASO_PROFILER_ORT_ORT_FLAGS_H_

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "profiler/ort/ort_backend.h"

namespace taso::profiler {

// The options the flags give; `resolve_path` maps a relative --ort_worker
// (e.g. against `bazel run`'s working directory). InvalidArgument naming
// the bad flag.
absl::StatusOr<OrtBackendOptions> OrtBackendOptionsFromFlags(
    const std::function<std::string(const std::string&)>& resolve_path = nullptr);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_ORT_ORT_FLAGS_H_
