// The optimizer's options have one type from flag to search: the request's
// OptimizeOptions (proto/optimizer.proto). `taso optimize` fills it from its
// flags and either sends it to a taso_optimizer or resolves it here itself;
// the service resolves what it receives here too. So a new option is a field
// of OptimizeOptions, the flag that sets it, and the line below that reads
// it, nothing else.
#ifndef TASO_OPTIMIZER_OPTIMIZE_OPTIONS_H_
#define TASO_OPTIMIZER_OPTIMIZE_OPTIONS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "optimizer/optimize.h"
#include "proto/optimizer.pb.h"

namespace taso::optimizer {

// What a request does not choose: the defaults for the fields it leaves
// unset, and the caps no request can raise. A taso_optimizer takes them
// from its flags; `taso optimize` embedded uses its own.
struct OptionDefaults {
  // Its set fields are the defaults of a request's unset ones (a request's
  // set fields win field by field: OptimizeOptions::MergeFrom).
  OptimizeOptions options;
  absl::Duration max_time_limit = absl::InfiniteDuration();
  bool measure = true;  // never slower, unless a request skips it
  double measure_tolerance = 0.01;
  int64_t max_model_bytes = OnnxImportOptions().max_model_bytes;
  int64_t max_check_bytes = NumericCheckOptions().max_bytes;
  int64_t max_check_flops = NumericCheckOptions().max_flops;
  int64_t ilp_memory_mb = EqsatOptions().ilp_memory_mb;
};

// A --max-check-gflop value as OptionDefaults::max_check_flops; InvalidArgument
// naming `flag` (as the command spells it) unless it is above 0 and below 1e9
// (so the count fits).
absl::StatusOr<int64_t> MaxCheckFlopsFromGflop(double gflop, absl::string_view flag);

// The optimizer's options for `request` over `defaults`. A negative number,
// a min_gain outside [0, 1) or an input shape that does not parse is
// InvalidArgument naming the field.
absl::StatusOr<OptimizerOptions> ResolveOptimizeOptions(const OptimizeOptions& request,
                                                        const OptionDefaults& defaults);

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_OPTIMIZE_OPTIONS_H_
