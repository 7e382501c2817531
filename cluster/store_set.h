// The store shards a reader (`taso verify`, `taso rules`) fans out to: the
// addresses given with --store (every shard, any order), or a local store
// started on each `store-N` directory under --db. In store-index order.
#ifndef TASO_CLUSTER_STORE_SET_H_
#define TASO_CLUSTER_STORE_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cluster/local_store.h"
#include "records/store_shards.h"

namespace taso::cluster {

class StoreSet {
 public:
  // `stores`: comma-separated addresses; empty: the `store-N` directories
  // under `db` (FAILED_PRECONDITION naming `db` when there is none, unless
  // `create_if_missing`, which starts store-0). `log_dir` holds the local
  // stores' logs; `extra_flags` go to each local store.
  static absl::StatusOr<std::unique_ptr<StoreSet>> Open(const std::string& stores, const std::string& db,
                                                        const std::string& log_dir,
                                                        const std::vector<std::string>& extra_flags = {},
                                                        bool create_if_missing = false);
  ~StoreSet();

  const std::vector<records::StoreShard>& shards() const { return shards_; }
  size_t size() const { return shards_.size(); }
  std::vector<std::string> addresses() const;
  // "store A" or "stores A,B,C", for messages.
  std::string Describe() const;

 private:
  std::vector<LocalStore> local_;
  std::vector<records::StoreShard> shards_;
};

// The `store-N` directories under `db`, N = 0, 1, ... while they exist.
std::vector<std::string> StoreDirs(const std::string& db);

}  // namespace taso::cluster

#endif  // TASO_CLUSTER_STORE_SET_H_
