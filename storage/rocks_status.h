// What the stores (hash_store.cc, rule_store.cc) share about RocksDB and
// protobuf plumbing: turning a RocksDB status into one a user can act on, and
// stamping times.
#ifndef TASO_STORAGE_ROCKS_STATUS_H_
#define TASO_STORAGE_ROCKS_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "rocksdb/status.h"

namespace taso::storage {

// `what` says what was being done ("storing a batch"). A full disk (or a
// file-size limit, EFBIG, which is the same situation for the user) is
// ResourceExhausted with what to do about it. The database stays stopped
// until a restart (database.cc says why).
inline absl::Status FromRocks(const rocksdb::Status& s, const std::string& what) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNoSpace() || absl::StrContains(s.ToString(), "No space left") ||
      absl::StrContains(s.ToString(), "File too large")) {
    return absl::ResourceExhaustedError(absl::StrCat(
        what, ": the disk is full (", s.ToString(),
        "); free space and restart the service (every write acknowledged before this one is kept); "
        "a rerun resumes from what it holds"));
  }
  return absl::InternalError(absl::StrCat(what, ": RocksDB: ", s.ToString()));
}

inline void SetTime(absl::Time t, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(t);
  out->set_seconds(nanos / 1000000000);
  out->set_nanos(static_cast<int32_t>(nanos % 1000000000));
}

}  // namespace taso::storage

#endif  // TASO_STORAGE_ROCKS_STATUS_H_
