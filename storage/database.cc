#include "storage/database.h"

#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "storage/rocks_status.h"

namespace taso::storage {

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  std::unique_ptr<Database> database(new Database(options));
  if (absl::Status s = database->Init(); !s.ok()) return s;
  return database;
}

absl::Status Database::Init() {
  rocksdb::DBOptions db_options = options_.db;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;

  std::map<std::string, rocksdb::ColumnFamilyOptions> to_open = options_.families;
  to_open.emplace(rocksdb::kDefaultColumnFamilyName, options_.family_defaults);
  // A new database has no families to list; that is not an error.
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(db_options, options_.path, &existing).ok()) {
    for (const std::string& name : existing) to_open.emplace(name, options_.family_defaults);
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& [name, family_options] : to_open) descriptors.emplace_back(name, family_options);

  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  rocksdb::Status s = options_.read_only
                          ? rocksdb::DB::OpenForReadOnly(db_options, options_.path, descriptors, &handles, &db)
                          : rocksdb::DB::Open(db_options, options_.path, descriptors, &handles, &db);
  if (!s.ok()) {
    if (s.IsIOError() && absl::StrContains(s.ToString(), "lock")) {
      return absl::FailedPreconditionError(absl::StrCat(options_.name_in_errors, " is in use by another process (",
                                                        s.ToString(), ")", options_.in_use_hint));
    }
    return FromRocks(s, absl::StrCat("opening ", options_.name_in_errors));
  }
  db_.reset(db);
  for (size_t i = 0; i < handles.size(); ++i) families_[descriptors[i].name] = handles[i];
  return absl::OkStatus();
}

Database::~Database() {
  // Handles must go before the database they belong to.
  for (auto& [name, handle] : families_) db_->DestroyColumnFamilyHandle(handle);
  db_.reset();
}

absl::StatusOr<rocksdb::ColumnFamilyHandle*> Database::Family(const std::string& name) {
  std::lock_guard<std::mutex> lock(families_mu_);
  auto it = families_.find(name);
  if (it != families_.end()) return it->second;
  if (options_.read_only) {
    return absl::FailedPreconditionError(
        absl::StrCat(options_.name_in_errors, " is open read-only and has no column family ", name));
  }
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  if (absl::Status s = FromRocks(db_->CreateColumnFamily(options_.family_defaults, name, &handle),
                                 absl::StrCat("creating column family ", name));
      !s.ok()) {
    return s;
  }
  families_[name] = handle;
  return handle;
}

}  // namespace taso::storage
