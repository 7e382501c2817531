// Store shards: which store owns which fingerprints, and how a client learns
// the order of a `--store` list from the stores themselves.
//
// Each taso_rules_db knows its index and the store count (fixed when its
// database was created). Clients ask every store (HashStore.GetStoreInfo) and
// order the list by those indices, so `--store b,a,c` and `--store a,b,c`
// route the same way; every batch carries the routing its sender used, and a
// store refuses one routed for another index or count.
#ifndef TASO_RECORDS_STORE_SHARDS_H_
#define TASO_RECORDS_STORE_SHARDS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "proto/rules_db.pb.h"

namespace taso::records {

// Which store shard owns a fingerprint (16 big-endian bytes).
int StoreShardFor(const std::string& fingerprint_bytes, int num_stores);

// OK when a batch routed as (batch_index of batch_count) belongs in the store
// `self`; FAILED_PRECONDITION naming both routings otherwise. A batch with
// count 0 (a client that predates routing) fits only a single store.
absl::Status CheckBatchRouting(const rules_db::StoreInfo& self, int batch_index, int batch_count);

// Puts `addresses` in store-index order given each one's StoreInfo (same
// positions). FAILED_PRECONDITION when the stores disagree on the count, the
// list is not exactly that many stores, or two claim the same index.
absl::StatusOr<std::vector<std::string>> OrderStores(const std::vector<std::string>& addresses,
                                                     const std::vector<rules_db::StoreInfo>& infos);

// "a,b,c" -> {"a","b","c"} (empty entries dropped).
std::vector<std::string> SplitStoreList(const std::string& list);

struct StoreShard {
  std::string address;
  std::shared_ptr<grpc::Channel> channel;
};

// Connects to every address, asks each store its index, and returns the
// stores in index order. UNAVAILABLE when a store does not answer (at once if
// nothing listens; callers retry) within `deadline`; FAILED_PRECONDITION as
// OrderStores.
absl::StatusOr<std::vector<StoreShard>> ConnectStoreShards(const std::vector<std::string>& addresses,
                                                           const grpc::ChannelArguments& args,
                                                           absl::Duration deadline = absl::Seconds(30));

}  // namespace taso::records

#endif  // TASO_RECORDS_STORE_SHARDS_H_
