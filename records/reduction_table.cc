#include "records/reduction_table.h"

namespace taso::records {

void ReductionTable::Count(PruneReason reason) {
  switch (reason) {
    case PruneReason::kRenaming: ++pruned_renaming; break;
    case PruneReason::kCommonSubgraph: ++pruned_subgraph; break;
    case PruneReason::kCommonSupergraph: ++pruned_supergraph; break;
  }
  after_renaming = proved - pruned_renaming;
  after_common_subgraph = after_renaming - pruned_subgraph - pruned_supergraph;
}

}  // namespace taso::records
