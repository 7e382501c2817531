// What pruning a job's proved rules removed: the reduction table the
// verifier's pruner fills, a store records in the job and `taso rules`
// prints. Here, below the stages, so the store and the cluster client hold
// the pruner's result without including the verifier.
#ifndef TASO_RECORDS_REDUCTION_TABLE_H_
#define TASO_RECORDS_REDUCTION_TABLE_H_

#include <cstdint>

#include "proto/rules_db.pb.h"

namespace taso::records {

// Why a proved rule is redundant.
enum class PruneReason { kRenaming, kCommonSubgraph, kCommonSupergraph };

struct ReductionTable {
  int64_t proved = 0;                 // PROVED rules before pruning
  int64_t after_renaming = 0;         // left after renaming/instance pruning
  int64_t after_common_subgraph = 0;  // left after both common-subgraph forms
  int64_t pruned_renaming = 0;
  int64_t pruned_subgraph = 0;
  int64_t pruned_supergraph = 0;
  // One more rule pruned for `reason`; the "after" counts follow.
  void Count(PruneReason reason);
};

// The table's fields in a job's Verification (after_renaming ...
// pruned_common_supergraph), written and read back; `proved` is derived on
// the way back (after renaming + pruned as renamings), since Verification's
// rules_proved counts verdicts, not the pruned set.
void RecordReduction(const ReductionTable& table, rules_db::Verification& verification);
ReductionTable RecordedReduction(const rules_db::Verification& verification);

}  // namespace taso::records

#endif  // TASO_RECORDS_REDUCTION_TABLE_H_
