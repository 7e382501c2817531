#include "profiler/cost_cache.h"

#include <set>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "rocksdb/db.h"
#include "rocksdb/env.h"
#include "rocksdb/write_batch.h"
#include "storage/database.h"
#include "storage/rocks_status.h"

namespace taso::profiler {
namespace {

using storage::FromRocks;

// Key layout: "cost1" SEP backend-name SEP device SEP signature-key, where SEP
// is a byte that never appears in names, devices or signature keys. A device
// prefix scan lists one device's entries.
constexpr char kSep = '\x1f';
constexpr char kKeyVersion[] = "cost1";
// Whole graphs: "graph1" SEP backend-name SEP device SEP graph key.
constexpr char kGraphKeyVersion[] = "graph1";

std::string GraphKey(Backend backend, const std::string& device, const std::string& graph_key) {
  return absl::StrCat(kGraphKeyVersion, std::string(1, kSep), BackendName(backend), std::string(1, kSep), device,
                      std::string(1, kSep), graph_key);
}

std::optional<CacheKey> DecodeKey(const rocksdb::Slice& raw) {
  std::vector<std::string> parts = absl::StrSplit(std::string(raw.data(), raw.size()), absl::MaxSplits(kSep, 3));
  if (parts.size() != 4 || parts[0] != kKeyVersion) return std::nullopt;
  auto backend = BackendFromName(parts[1]);
  if (!backend) return std::nullopt;
  return CacheKey{*backend, parts[2], parts[3]};
}

bool Matches(const CacheKey& key, Backend backend, const std::string& device) {
  return (backend == BACKEND_UNSPECIFIED || key.backend == backend) && (device.empty() || key.device == device);
}

// The narrowest key prefix covering a (backend, device) filter.
std::string FilterPrefix(Backend backend, const std::string& device) {
  std::string prefix = absl::StrCat(kKeyVersion, std::string(1, kSep));
  if (backend == BACKEND_UNSPECIFIED) return prefix;
  absl::StrAppend(&prefix, BackendName(backend), std::string(1, kSep));
  if (!device.empty()) absl::StrAppend(&prefix, device, std::string(1, kSep));
  return prefix;
}

}  // namespace

std::string EncodeCacheKey(const CacheKey& k) {
  return absl::StrCat(kKeyVersion, std::string(1, kSep), BackendName(k.backend), std::string(1, kSep), k.device,
                      std::string(1, kSep), k.signature);
}

absl::StatusOr<std::unique_ptr<CostCache>> CostCache::Open(const std::string& path, WhenCacheInUse when_in_use) {
  storage::DatabaseOptions options;
  options.path = path;
  options.db.max_open_files = 64;
  options.name_in_errors = absl::StrCat("cost cache ", path);
  options.in_use_hint = "; stop it or point --cache_dir elsewhere";
  auto database = storage::Database::Open(options);
  if (database.ok()) return std::unique_ptr<CostCache>(new CostCache(std::move(*database), nullptr));
  if (when_in_use == WhenCacheInUse::kFail || database.status().code() != absl::StatusCode::kFailedPrecondition) {
    return database.status();
  }
  options.read_only = true;
  auto snapshot = storage::Database::Open(options);
  if (!snapshot.ok()) return database.status();  // the lock, the first cause, is what the user can act on
  auto overlay = OpenInMemory();
  if (!overlay.ok()) return overlay.status();
  std::unique_ptr<CostCache> cache(new CostCache(std::move(*snapshot), nullptr));
  cache->overlay_ = std::move(*overlay);
  cache->snapshot_note_ = absl::StrCat("cost cache ", path,
                                       " is in use by another process: reading what it holds now; costs measured "
                                       "by this run are kept in memory only and not saved");
  return cache;
}

absl::StatusOr<std::unique_ptr<CostCache>> CostCache::OpenInMemory() {
  std::unique_ptr<rocksdb::Env> env(rocksdb::NewMemEnv(rocksdb::Env::Default()));
  storage::DatabaseOptions options;
  options.path = "/in-memory-cost-cache";
  options.db.env = env.get();
  options.name_in_errors = "an in-memory cost cache";
  auto database = storage::Database::Open(options);
  if (!database.ok()) return database.status();
  return std::unique_ptr<CostCache>(new CostCache(std::move(*database), std::move(env)));
}

CostCache::CostCache(std::unique_ptr<storage::Database> database, std::unique_ptr<rocksdb::Env> env)
    : env_(std::move(env)), database_(std::move(database)), db_(database_->db()) {}

CostCache::~CostCache() = default;

absl::StatusOr<std::optional<CacheEntry>> CostCache::Get(const CacheKey& key) {
  if (overlay_ != nullptr) {
    auto fresh = overlay_->Get(key);
    if (!fresh.ok() || fresh->has_value()) return fresh;
  }
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), EncodeCacheKey(key), &value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "reading the cost cache");
  CacheEntry entry;
  if (!entry.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat("cost cache entry for ", key.signature, " is corrupt"));
  }
  return entry;
}

absl::Status CostCache::Put(const CacheKey& key, const CacheEntry& entry) {
  if (overlay_ != nullptr) return overlay_->Put(key, entry);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, EncodeCacheKey(key), entry.SerializeAsString()), "writing the cost cache");
}

absl::StatusOr<std::optional<GraphMeasurement>> CostCache::GetGraph(Backend backend, const std::string& device,
                                                                    const std::string& graph_key) {
  if (overlay_ != nullptr) {
    auto fresh = overlay_->GetGraph(backend, device, graph_key);
    if (!fresh.ok() || fresh->has_value()) return fresh;
  }
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), GraphKey(backend, device, graph_key), &value);
  if (s.IsNotFound()) return std::nullopt;
  if (!s.ok()) return FromRocks(s, "reading the cost cache");
  GraphMeasurement m;
  if (!m.ParseFromString(value)) {
    return absl::DataLossError(absl::StrCat("cost cache entry for graph ", graph_key, " is corrupt"));
  }
  return m;
}

absl::Status CostCache::PutGraph(Backend backend, const std::string& device, const std::string& graph_key,
                                 const GraphMeasurement& measurement) {
  if (overlay_ != nullptr) return overlay_->PutGraph(backend, device, graph_key, measurement);
  rocksdb::WriteOptions wo;
  wo.sync = true;
  return FromRocks(db_->Put(wo, GraphKey(backend, device, graph_key), measurement.SerializeAsString()),
                   "writing the cost cache");
}

absl::Status CostCache::ForEach(const std::function<bool(const CacheKey&, const CacheEntry&)>& fn) {
  bool stopped = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(kKeyVersion); it->Valid(); it->Next()) {
    auto key = DecodeKey(it->key());
    if (!key) continue;
    CacheEntry entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) continue;
    if (!fn(*key, entry)) {
      stopped = true;
      break;
    }
  }
  if (!it->status().ok()) return FromRocks(it->status(), "scanning the cost cache");
  return overlay_ != nullptr && !stopped ? overlay_->ForEach(fn) : absl::OkStatus();
}

absl::StatusOr<ListCacheResponse> CostCache::List(const ListCacheRequest& request) {
  const int page_size = request.page_size() > 0 ? std::min(request.page_size(), 10000) : 1000;
  std::string start;
  if (!request.page_token().empty() && !absl::WebSafeBase64Unescape(request.page_token(), &start)) {
    return absl::InvalidArgumentError("page_token is not one this server returned");
  }
  const std::string prefix = FilterPrefix(request.backend(), request.device());
  if (start.empty()) start = prefix;
  ListCacheResponse response;
  std::string last_key;
  bool more = false;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(start); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    if (!request.page_token().empty() && it->key() == rocksdb::Slice(start)) continue;
    auto key = DecodeKey(it->key());
    if (!key || !Matches(*key, request.backend(), request.device())) continue;
    CacheEntry entry;
    if (!entry.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) continue;
    if (request.kind() != ir::OP_UNSPECIFIED && entry.signature().kind() != request.kind()) continue;
    if (response.entries_size() == page_size) {
      more = true;
      break;
    }
    *response.add_entries() = std::move(entry);
    last_key = it->key().ToString();
  }
  if (!it->status().ok()) return FromRocks(it->status(), "listing the cost cache");
  // The token names the last key returned; the next page starts after it.
  if (more) response.set_next_page_token(absl::WebSafeBase64Escape(last_key));
  return response;
}

absl::StatusOr<int64_t> CostCache::Invalidate(const std::vector<std::string>& signature_keys, bool all,
                                              Backend backend, const std::string& device) {
  if (!snapshot_note_.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(snapshot_note_, "; invalidate through the process that holds it"));
  }
  if (!all && signature_keys.empty()) return 0;
  std::set<std::string> wanted(signature_keys.begin(), signature_keys.end());
  rocksdb::WriteBatch batch;
  int64_t removed = 0;
  const std::string prefix = FilterPrefix(backend, device);
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(prefix); it->Valid() && it->key().starts_with(prefix); it->Next()) {
    auto key = DecodeKey(it->key());
    if (!key || !Matches(*key, backend, device)) continue;
    if (!all && wanted.count(key->signature) == 0) continue;
    batch.Delete(it->key());
    ++removed;
  }
  if (!it->status().ok()) return FromRocks(it->status(), "scanning the cost cache");
  if (all) {
    std::string graphs = absl::StrCat(kGraphKeyVersion, std::string(1, kSep));
    if (backend != BACKEND_UNSPECIFIED) {
      absl::StrAppend(&graphs, BackendName(backend), std::string(1, kSep));
      if (!device.empty()) absl::StrAppend(&graphs, device, std::string(1, kSep));
    }
    std::unique_ptr<rocksdb::Iterator> g(db_->NewIterator(rocksdb::ReadOptions()));
    for (g->Seek(graphs); g->Valid() && g->key().starts_with(graphs); g->Next()) {
      std::vector<std::string> parts =
          absl::StrSplit(g->key().ToString(), absl::MaxSplits(kSep, 3));
      if (parts.size() == 4 && !device.empty() && parts[2] != device) continue;
      batch.Delete(g->key());
      ++removed;
    }
    if (!g->status().ok()) return FromRocks(g->status(), "scanning the cost cache");
  }
  rocksdb::WriteOptions wo;
  wo.sync = true;
  absl::Status s = FromRocks(db_->Write(wo, &batch), "removing cost cache entries");
  if (!s.ok()) return s;
  return removed;
}

}  // namespace taso::profiler
