// The rule store's index by operator kind: a RocksDB column family
// (`rules_by_op`) with one key per (operator kind, rule) that uses it,
//   'k' <kind: 2 hex digits> <rule id>  ->  the rule's RuleKinds (fixed-width)
// so a query on operators reads the posting lists of the kinds it names,
// checks each rule's kinds from the index value, and reads only the rules
// that pass. A rule id names its graphs, so a rule's postings never change:
// every write of a rule puts them again (idempotent), in the same batch.
//
// Databases written before the index existed are indexed once, resumably:
// `~cursor` holds the last rule id indexed (committed with each chunk's
// postings) and `~built` marks the index complete; until then queries scan.
#ifndef TASO_RULES_DB_OP_INDEX_H_
#define TASO_RULES_DB_OP_INDEX_H_

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "proto/rules.pb.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/rule_filter.h"

namespace taso::rules_db {

class OpIndex {
 public:
  static constexpr char kFamily[] = "rules_by_op";

  OpIndex(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* family) : db_(db), family_(family) {}

  // Puts the postings of `rule` (which has its id) into `batch`.
  void Add(const rules::Rule& rule, rocksdb::WriteBatch& batch) const;

  // Visits, in id order and after `after` (all when empty), the ids of the
  // rules that use some kind in `kinds` (a bit set) and whose RuleKinds
  // `accept`, until `visit` returns false.
  absl::Status ForEachCandidate(uint64_t kinds, const std::function<bool(const RuleKinds&)>& accept,
                                const std::string& after,
                                const std::function<bool(const std::string& id)>& visit) const;

  // The one-time indexing of rules stored before the index existed.
  absl::StatusOr<bool> Built() const;
  absl::StatusOr<std::string> Cursor() const;  // last rule id indexed; "" at the start
  void SetCursor(const std::string& id, rocksdb::WriteBatch& batch) const;
  void MarkBuilt(rocksdb::WriteBatch& batch) const;

 private:
  absl::StatusOr<std::string> Meta(const std::string& key) const;

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* family_;
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_OP_INDEX_H_
