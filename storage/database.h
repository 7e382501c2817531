// A RocksDB database and its column families, owned in one place: opened
// with the options each named family needs, handing a family out by name to
// whichever store uses it, and closing everything in the right order.
//
// Families a database already holds are opened whether or not they are
// named (RocksDB refuses to open a database otherwise), and a family asked
// for by name is created if missing, so each store declares only its own
// families and stores sharing one database need not know each other's.
#ifndef TASO_STORAGE_DATABASE_H_
#define TASO_STORAGE_DATABASE_H_

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "absl/status/statusor.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"

namespace taso::storage {

class NoAutomaticRecovery;

struct DatabaseOptions {
  std::string path;
  // create_if_missing and create_missing_column_families are always set.
  rocksdb::DBOptions db;
  // For the default family and every family without its own entry below.
  rocksdb::ColumnFamilyOptions family_defaults;
  // Families with options of their own, by name.
  std::map<std::string, rocksdb::ColumnFamilyOptions> families;
  // The database as errors name it: "database /x", "cost cache /y".
  std::string name_in_errors = "database";
  // Appended to the error when another process holds the database's lock.
  std::string in_use_hint;
  // Opens what is on disk now without taking the lock (RocksDB's read-only
  // mode), so it works while another process writes; writes and new
  // families fail. The database must exist.
  bool read_only = false;
};

class Database {
 public:
  static absl::StatusOr<std::unique_ptr<Database>> Open(const DatabaseOptions& options);
  ~Database();
  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  rocksdb::DB* db() const { return db_.get(); }
  // The family `name`, created with the family defaults if the database does
  // not hold it yet. Safe to call from several threads.
  absl::StatusOr<rocksdb::ColumnFamilyHandle*> Family(const std::string& name);

  // OK while the database takes writes. After a write failed in a way that
  // stops it (a full disk), that error, as FromRocks gives it: the database
  // then serves reads only until it is reopened.
  absl::Status WriteHealth() const;

  // Writes every family's memtables to files and waits: the write-ahead log
  // then holds nothing unflushed and is dropped, so the next open replays
  // nothing (after a bulk load, that replay took seconds).
  absl::Status FlushAll();

  // Drops family `name` with all it holds (its memtables are discarded, its
  // files deleted: no rewrite) and creates it again, empty, with its
  // options. The old handle is destroyed: the caller makes sure nothing
  // uses it meanwhile.
  absl::StatusOr<rocksdb::ColumnFamilyHandle*> RecreateFamily(const std::string& name);

 private:
  explicit Database(const DatabaseOptions& options) : options_(options) {}
  absl::Status Init();

  DatabaseOptions options_;
  std::shared_ptr<NoAutomaticRecovery> stopped_by_;  // its first background error
  std::unique_ptr<rocksdb::DB> db_;
  std::mutex families_mu_;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> families_;
};

}  // namespace taso::storage

#endif  // TASO_STORAGE_DATABASE_H_
