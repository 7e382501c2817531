#include "storage/database.h"

#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rocksdb/listener.h"
#include "storage/rocks_status.h"

namespace taso::storage {

// RocksDB 7.8 as Debian ships it is built with assertions on, and its writers
// assert that nothing is written to a file after a write to it failed. Two
// of its own paths do exactly that on a full disk, so a full disk would abort
// the service: its info LOG (the next line after one that failed) and its
// automatic recovery once space looks free (which writes through the WAL
// writer that failed; fixed upstream in 9.x). Hence our own LOG writer, which
// drops lines it cannot write, and no automatic recovery: after a disk error
// the database stays stopped, writes fail with the error (RESOURCE_EXHAUSTED
// to clients), reads go on, and a restart recovers from a WAL that holds every
// write acknowledged before the failure.
// It also keeps the first background error (every one reaches
// OnBackgroundError; only some offer recovery), for Database::WriteHealth.
class NoAutomaticRecovery : public rocksdb::EventListener {
 public:
  void OnBackgroundError(rocksdb::BackgroundErrorReason, rocksdb::Status* bg_error) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (error_.ok() && bg_error != nullptr) error_ = *bg_error;
  }
  void OnErrorRecoveryBegin(rocksdb::BackgroundErrorReason, rocksdb::Status bg_error, bool* auto_recovery) override {
    bg_error.PermitUncheckedError();
    *auto_recovery = false;
  }
  rocksdb::Status error() const {
    std::lock_guard<std::mutex> lock(mu_);
    return error_;
  }

 private:
  mutable std::mutex mu_;
  rocksdb::Status error_;
};

namespace {

class TolerantLogFile : public rocksdb::Logger {
 public:
  explicit TolerantLogFile(std::FILE* file) : rocksdb::Logger(rocksdb::InfoLogLevel::INFO_LEVEL), file_(file) {}
  ~TolerantLogFile() override { std::fclose(file_); }

  using rocksdb::Logger::Logv;
  void Logv(const char* format, va_list ap) override {
    char line[2048];
    std::vsnprintf(line, sizeof(line), format, ap);
    const std::string stamp = absl::FormatTime("%Y/%m/%d-%H:%M:%E6S", absl::Now(), absl::LocalTimeZone());
    std::lock_guard<std::mutex> lock(mu_);
    // Errors ignored on purpose: a log line is not worth stopping the database.
    std::fprintf(file_, "%s %s\n", stamp.c_str(), line);
    std::fflush(file_);
  }

 private:
  std::FILE* file_;
  std::mutex mu_;
};

// The database's LOG, started afresh once it passes 64 MiB; null (RocksDB's
// own logger) if the file cannot be opened.
std::shared_ptr<rocksdb::Logger> OpenLogFile(const std::string& db_path) {
  std::error_code ignored;
  std::filesystem::create_directories(db_path, ignored);
  const std::string path = db_path + "/LOG";
  const bool too_big = std::filesystem::file_size(path, ignored) > (64u << 20) && !ignored;
  std::FILE* file = std::fopen(path.c_str(), too_big ? "w" : "a");
  if (file == nullptr) return nullptr;
  return std::make_shared<TolerantLogFile>(file);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Database>> Database::Open(const DatabaseOptions& options) {
  std::unique_ptr<Database> database(new Database(options));
  if (absl::Status s = database->Init(); !s.ok()) return s;
  return database;
}

absl::Status Database::Init() {
  rocksdb::DBOptions db_options = options_.db;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  stopped_by_ = std::make_shared<NoAutomaticRecovery>();
  db_options.listeners.push_back(stopped_by_);
  // A read-only opener leaves the writer's LOG alone.
  if (!options_.read_only && db_options.info_log == nullptr) db_options.info_log = OpenLogFile(options_.path);

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

absl::Status Database::FlushAll() {
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  {
    std::lock_guard<std::mutex> lock(families_mu_);
    for (const auto& [name, handle] : families_) handles.push_back(handle);
  }
  rocksdb::FlushOptions options;
  options.wait = true;
  return FromRocks(db_->Flush(options, handles), absl::StrCat("flushing ", options_.name_in_errors));
}

absl::StatusOr<rocksdb::ColumnFamilyHandle*> Database::RecreateFamily(const std::string& name) {
  std::lock_guard<std::mutex> lock(families_mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return absl::NotFoundError(absl::StrCat(options_.name_in_errors, " has no family ", name));
  const auto own = options_.families.find(name);
  const rocksdb::ColumnFamilyOptions& family_options =
      own != options_.families.end() ? own->second : options_.family_defaults;
  if (absl::Status s = FromRocks(db_->DropColumnFamily(it->second), absl::StrCat("dropping family ", name)); !s.ok()) {
    return s;
  }
  (void)db_->DestroyColumnFamilyHandle(it->second);
  families_.erase(it);
  rocksdb::ColumnFamilyHandle* handle = nullptr;
  if (absl::Status s = FromRocks(db_->CreateColumnFamily(family_options, name, &handle),
                                 absl::StrCat("creating family ", name));
      !s.ok()) {
    return s;
  }
  families_[name] = handle;
  return handle;
}

absl::Status Database::WriteHealth() const {
  rocksdb::Status error = stopped_by_->error();
  if (error.ok()) return absl::OkStatus();
  return FromRocks(error, absl::StrCat(options_.name_in_errors, " stopped taking writes"));
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
