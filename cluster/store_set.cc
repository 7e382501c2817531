#include "cluster/store_set.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::cluster {

std::vector<std::string> StoreDirs(const std::string& db) {
  std::vector<std::string> dirs;
  for (int i = 0;; ++i) {
    const std::string dir = absl::StrCat(db, "/store-", i);
    if (!std::filesystem::exists(dir)) break;
    dirs.push_back(dir);
  }
  return dirs;
}

absl::StatusOr<std::unique_ptr<StoreSet>> StoreSet::Open(const std::string& stores, const std::string& db,
                                                         const std::string& log_dir,
                                                         const std::vector<std::string>& extra_flags,
                                                         bool create_if_missing) {
  auto set = std::make_unique<StoreSet>();
  std::vector<std::string> addresses = records::SplitStoreList(stores);
  if (addresses.empty()) {
    std::vector<std::string> dirs = StoreDirs(db);
    if (dirs.empty()) {
      if (!create_if_missing) {
        return absl::FailedPreconditionError(absl::StrCat("no database at ", db, "/store-0"));
      }
      dirs.push_back(db + "/store-0");
    }
    for (size_t i = 0; i < dirs.size(); ++i) {
      std::vector<std::string> flags = extra_flags;
      // The directory's number is its index (as `taso generate` made it);
      // the store checks that against what it recorded.
      flags.push_back(absl::StrCat("--store_index=", i));
      flags.push_back(absl::StrCat("--store_count=", dirs.size()));
      auto store = StartLocalStore(dirs[i], absl::StrCat(log_dir, "/store-", i, ".log"), flags);
      if (!store.ok()) return store.status();
      set->local_.push_back(*store);
      addresses.push_back(store->address);
    }
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  args.SetMaxSendMessageSize(64 << 20);
  auto shards = records::ConnectStoreShards(addresses, args);
  if (!shards.ok()) return shards.status();
  set->shards_ = std::move(*shards);
  return set;
}

StoreSet::~StoreSet() {
  shards_.clear();
  for (LocalStore& store : local_) StopLocalStore(store);
}

std::vector<std::string> StoreSet::addresses() const {
  std::vector<std::string> out;
  for (const auto& s : shards_) out.push_back(s.address);
  return out;
}

std::string StoreSet::Describe() const {
  return absl::StrCat(shards_.size() == 1 ? "store " : "stores ", absl::StrJoin(addresses(), ","));
}

}  // namespace taso::cluster
