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

void RecordReduction(const ReductionTable& table, rules_db::Verification& verification) {
  verification.set_after_renaming(table.after_renaming);
  verification.set_after_common_subgraph(table.after_common_subgraph);
  verification.set_pruned_renaming(table.pruned_renaming);
  verification.set_pruned_common_subgraph(table.pruned_subgraph);
  verification.set_pruned_common_supergraph(table.pruned_supergraph);
}

ReductionTable RecordedReduction(const rules_db::Verification& verification) {
  ReductionTable table;
  table.proved = verification.after_renaming() + verification.pruned_renaming();
  table.after_renaming = verification.after_renaming();
  table.after_common_subgraph = verification.after_common_subgraph();
  table.pruned_renaming = verification.pruned_renaming();
  table.pruned_subgraph = verification.pruned_common_subgraph();
  table.pruned_supergraph = verification.pruned_common_supergraph();
  return table;
}

}  // namespace taso::records
