#include "optimizer/search/progress.h"

namespace taso::optimizer {

const char* PhaseName(OptimizePhase phase) {
  switch (phase) {
    case OptimizePhase::kLoadingRules: return "loading rules";
    case OptimizePhase::kImport: return "importing the model";
    case OptimizePhase::kBaseline: return "costing the runtime baseline";
    case OptimizePhase::kSearch: return "searching";
    case OptimizePhase::kExtraction: return "extracting the best program";
    case OptimizePhase::kCheck: return "checking the result against the input";
    case OptimizePhase::kMeasure: return "measuring the result and the input end to end";
    case OptimizePhase::kDone: return "done";
  }
  return "?";
}

}  // namespace taso::optimizer
