// A RocksDB memtable for bulk loads whose writes arrive as sorted runs: each
// generator batch is sorted before it is sent (records/packed_records.h), so
// a memtable holds a few dozen runs of tens of thousands of keys each.
//
// Like RocksDB's vector memtable it appends on insert and orders the keys only
// when they are read (by the flush, once), but it remembers where each run
// starts and merges the runs instead of sorting every key: about log2(runs)
// comparisons a key rather than log2(keys). Sorting the vector memtable at
// flush was a third of the hash store's CPU while size 4 generated.
//
// Keys inserted out of order only make shorter runs; the merge is then a
// merge sort, no worse than the vector memtable's sort.
#ifndef TASO_STORAGE_SORTED_RUNS_MEMTABLE_H_
#define TASO_STORAGE_SORTED_RUNS_MEMTABLE_H_

#include "rocksdb/memtablerep.h"

namespace taso::storage {

class SortedRunsMemTableFactory : public rocksdb::MemTableRepFactory {
 public:
  using rocksdb::MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                          rocksdb::Allocator* allocator, const rocksdb::SliceTransform* prefix,
                                          rocksdb::Logger* logger) override;
  const char* Name() const override { return "TasoSortedRunsMemTableFactory"; }
};

}  // namespace taso::storage

#endif  // TASO_STORAGE_SORTED_RUNS_MEMTABLE_H_
