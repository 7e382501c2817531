// The persistent cost cache: RocksDB keyed by (backend, device identity,
// canonical signature). A cost is never reused on another device or backend.
// Storage sits behind this small interface so the profiler does not know it
// is RocksDB.
#ifndef TASO_PROFILER_COST_CACHE_H_
#define TASO_PROFILER_COST_CACHE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "costs/backend.h"
#include "proto/profiler.pb.h"

namespace rocksdb {
class DB;
class Env;
}  // namespace rocksdb
namespace taso::storage {
class Database;
}  // namespace taso::storage

namespace taso::profiler {

// Where a cached cost belongs.
struct CacheKey {
  Backend backend = BACKEND_UNSPECIFIED;
  std::string device;
  std::string signature;  // CanonicalSignature::key
};

// What Open does when another process holds the cache (RocksDB allows one
// writer): fail saying so, or read what that process has written so far and
// keep this process's new entries in memory (two `taso optimize` runs from
// parallel CI jobs on one machine).
enum class WhenCacheInUse { kFail, kReadSnapshot };

class CostCache {
 public:
  // Opens (creating if missing) the cache in directory `path`. A directory
  // that is not a cache is an error; so is one another process holds, unless
  // `when_in_use` is kReadSnapshot (then snapshot_note() says so).
  static absl::StatusOr<std::unique_ptr<CostCache>> Open(const std::string& path,
                                                         WhenCacheInUse when_in_use = WhenCacheInUse::kFail);
  // A cache that lives in memory only (the same code over RocksDB's memory
  // environment), for callers that want no files.
  static absl::StatusOr<std::unique_ptr<CostCache>> OpenInMemory();
  ~CostCache();

  // Non-empty when Open fell back to a read-only snapshot: what happened and
  // what it means, for the caller's warning.
  const std::string& snapshot_note() const { return snapshot_note_; }

  absl::StatusOr<std::optional<CacheEntry>> Get(const CacheKey& key);
  // Durable when it returns: written with the write-ahead log synced.
  absl::Status Put(const CacheKey& key, const CacheEntry& entry);

  // Whole-graph measurements, under their own key prefix (List and ForEach,
  // which serve `taso profile cache list`, do not see them). `graph_key`
  // identifies the graph (GraphMeasurement::graph_key).
  absl::StatusOr<std::optional<GraphMeasurement>> GetGraph(Backend backend, const std::string& device,
                                                           const std::string& graph_key);
  absl::Status PutGraph(Backend backend, const std::string& device, const std::string& graph_key,
                        const GraphMeasurement& measurement);

  // A page of entries matching the request's filters, in key order (on a
  // snapshot: the snapshot's only).
  absl::StatusOr<ListCacheResponse> List(const ListCacheRequest& request);
  // Removes entries matching the filters and, unless `all`, whose signature
  // key is one of `signature_keys`; `all` drops whole-graph entries too.
  // Returns how many were removed.
  absl::StatusOr<int64_t> Invalidate(const std::vector<std::string>& signature_keys, bool all,
                                     Backend backend, const std::string& device);
  // Every entry, in key order (on a snapshot: the snapshot's, then this
  // process's new ones); stops early when `fn` returns false.
  absl::Status ForEach(const std::function<bool(const CacheKey&, const CacheEntry&)>& fn);

 private:
  CostCache(std::unique_ptr<storage::Database> database, std::unique_ptr<rocksdb::Env> env);
  std::unique_ptr<rocksdb::Env> env_;  // the memory environment, if any; outlives database_
  std::unique_ptr<storage::Database> database_;
  rocksdb::DB* db_;  // database_'s
  // On a read-only snapshot: where new entries go (memory), and why.
  std::unique_ptr<CostCache> overlay_;
  std::string snapshot_note_;
};

// The key's bytes in the cache (also how concurrent requests for one
// measurement find each other).
std::string EncodeCacheKey(const CacheKey& key);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_COST_CACHE_H_
