// A generating job's graphs on their way to finalization: one append-only
// file per fingerprint bucket (the fingerprint's first byte), holding packed
// records (records/packed_records.h) as the batches brought them. Nothing is
// sorted until finalization reads a bucket, a 256th of the job, and sorts it
// in memory. The graphs were a RocksDB family before: every record was
// sorted at a memtable flush and merged again across hundreds of level-0
// files by the scan, which was half of size 4's finalization and a quarter
// of the store's CPU while it streamed.
//
// Durability is the caller's, through the lengths: Append returns with the
// files grown, and the store writes lengths() in the same RocksDB batch as
// the shard's progress; Open truncates each file to the lengths last written
// there, so what a crash left after the last acknowledged batch is dropped
// and the generator sends it again. Records stored twice (a generator that
// re-enumerates after a restart) are one graph: a bucket's reader skips
// repeats.
#ifndef TASO_RULES_DB_GRAPH_SPOOL_H_
#define TASO_RULES_DB_GRAPH_SPOOL_H_

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "records/packed_records.h"

namespace taso::rules_db {

class GraphSpool {
 public:
  static constexpr int kBuckets = records::kFingerprintBuckets;
  using Lengths = std::array<uint64_t, kBuckets>;

  // Opens the spool in directory `dir` (created if missing), each bucket's
  // file cut to `committed` (all zero for a new job). DATA_LOSS when a file
  // is shorter than committed: acknowledged graphs are gone.
  static absl::StatusOr<std::unique_ptr<GraphSpool>> Open(const std::string& dir, const Lengths& committed);
  ~GraphSpool();
  GraphSpool(const GraphSpool&) = delete;
  GraphSpool& operator=(const GraphSpool&) = delete;

  // The bucket of a 16-byte fingerprint (records/packed_records.h).
  static int BucketOf(std::string_view fingerprint) { return records::FingerprintBucket(fingerprint); }

  // Appends the records of a packed batch to their buckets: all or nothing
  // (InvalidArgument for a malformed batch, nothing written; on a write
  // error the files are cut back to their lengths before). One writer at a
  // time, and none while a bucket is read.
  absl::Status Append(std::string_view packed);
  // The bucket lengths after the last Append.
  const Lengths& lengths() const { return lengths_; }
  // Flushes the files the last Append wrote to the disk (sync_writes).
  absl::Status Sync();

  // Bucket `b`'s records, as appended (unsorted, maybe repeated).
  absl::StatusOr<std::string> ReadBucket(int b) const;

  // The lengths as a record of the store's meta family, and back.
  static std::string EncodeLengths(const Lengths& lengths);
  static absl::StatusOr<Lengths> DecodeLengths(std::string_view encoded);

  // Deletes a spool's directory and files (absent: OK).
  static absl::Status Remove(const std::string& dir);

 private:
  GraphSpool(std::string dir) : dir_(std::move(dir)) {}
  // Cuts every file back to lengths_ (after a failed Append).
  absl::Status Restore();

  std::string dir_;
  std::array<int, kBuckets> fds_;
  Lengths lengths_{};
  std::string scratch_;  // a batch not grouped by bucket, grouped
  std::array<bool, kBuckets> written_{};  // by the last Append
};

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_GRAPH_SPOOL_H_
