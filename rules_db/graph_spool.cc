#include "rules_db/graph_spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/file_write.h"
#include "records/packed_records.h"

namespace taso::rules_db {
namespace {

std::string BucketPath(const std::string& dir, int b) { return absl::StrFormat("%s/bucket-%03d", dir, b); }

absl::Status Errno(const std::string& what) {
  const int e = errno;
  std::string message = absl::StrCat(what, ": ", std::strerror(e));
  if (IsDiskFullErrno(e)) {
    return absl::ResourceExhaustedError(absl::StrCat(
        message, ": the disk is full; free space and rerun (every batch acknowledged before this one is kept, ",
        "and a rerun resumes from what the store holds)"));
  }
  if (e == EMFILE || e == ENFILE) {
    return absl::ResourceExhaustedError(absl::StrCat(message, " (each generating job keeps ", GraphSpool::kBuckets,
                                                     " files open: raise the open-file limit, ulimit -n)"));
  }
  return absl::InternalError(message);
}

// Writes all of `data` at the end of `fd`, whose length is `length`.
absl::Status WriteAll(int fd, std::string_view data, uint64_t length, const std::string& path) {
  while (!data.empty()) {
    const ssize_t n = ::pwrite(fd, data.data(), data.size(), static_cast<off_t>(length));
    if (n < 0) {
      if (errno == EINTR) continue;
      return Errno(absl::StrCat("writing ", path));
    }
    data.remove_prefix(static_cast<size_t>(n));
    length += static_cast<uint64_t>(n);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<GraphSpool>> GraphSpool::Open(const std::string& dir, const Lengths& committed) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("creating ", dir, ": ", ec.message()));
  std::unique_ptr<GraphSpool> spool(new GraphSpool(dir));
  spool->fds_.fill(-1);
  for (int b = 0; b < kBuckets; ++b) {
    const std::string path = BucketPath(dir, b);
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return Errno(absl::StrCat("opening ", path));
    spool->fds_[b] = fd;
    struct stat st;
    if (::fstat(fd, &st) != 0) return Errno(absl::StrCat("reading the size of ", path));
    if (static_cast<uint64_t>(st.st_size) < committed[b]) {
      return absl::DataLossError(absl::StrCat(path, " holds ", st.st_size, " bytes, fewer than the ", committed[b],
                                              " acknowledged: the job's graphs are incomplete"));
    }
    if (static_cast<uint64_t>(st.st_size) > committed[b] &&
        ::ftruncate(fd, static_cast<off_t>(committed[b])) != 0) {
      return Errno(absl::StrCat("dropping unacknowledged graphs from ", path));
    }
  }
  spool->lengths_ = committed;
  return spool;
}

GraphSpool::~GraphSpool() {
  for (int fd : fds_) {
    if (fd >= 0) ::close(fd);
  }
}

namespace {

// Each bucket's records in `packed` as one run [begin, end); false when some
// bucket's records are not one run, or the runs are not in bucket order.
absl::StatusOr<bool> BucketRuns(std::string_view packed,
                                std::array<std::pair<size_t, size_t>, GraphSpool::kBuckets>& runs) {
  runs.fill({0, 0});
  bool grouped = true;
  int last = 0;
  absl::Status parsed =
      records::ForEachPackedRecord(packed, [&](std::string_view fingerprint, std::string_view encoding) {
        const int b = GraphSpool::BucketOf(fingerprint);
        const size_t begin = static_cast<size_t>(fingerprint.data() - packed.data());
        const size_t end = static_cast<size_t>(encoding.data() + encoding.size() - packed.data());
        if (b < last || (runs[b].second != 0 && runs[b].second != begin)) grouped = false;
        if (runs[b].second == 0) runs[b].first = begin;
        runs[b].second = end;
        last = b;
      });
  if (!parsed.ok()) return parsed;
  return grouped;
}

}  // namespace

absl::Status GraphSpool::Append(std::string_view packed) {
  // Generators group batches by bucket (records/packed_records.h), so each
  // bucket's records are one run of the batch, written as it is; a batch
  // that is not is grouped here first.
  std::array<std::pair<size_t, size_t>, kBuckets> runs;
  auto grouped = BucketRuns(packed, runs);
  if (!grouped.ok()) return grouped.status();
  if (!*grouped) {
    if (absl::Status s = records::GroupPackedRecordsInto(packed, scratch_); !s.ok()) return s;
    packed = scratch_;
    grouped = BucketRuns(packed, runs);
    if (!grouped.ok()) return grouped.status();
  }
  Lengths grown = lengths_;
  written_.fill(false);
  for (int b = 0; b < kBuckets; ++b) {
    const std::string_view data = packed.substr(runs[b].first, runs[b].second - runs[b].first);
    if (data.empty()) continue;
    if (absl::Status s = WriteAll(fds_[b], data, grown[b], BucketPath(dir_, b)); !s.ok()) {
      (void)Restore();
      return s;
    }
    grown[b] += data.size();
    written_[b] = true;
  }
  lengths_ = grown;
  return absl::OkStatus();
}

absl::Status GraphSpool::Sync() {
  for (int b = 0; b < kBuckets; ++b) {
    if (written_[b] && ::fdatasync(fds_[b]) != 0) return Errno(absl::StrCat("syncing ", BucketPath(dir_, b)));
  }
  return absl::OkStatus();
}

absl::Status GraphSpool::Restore() {
  absl::Status first;
  for (int b = 0; b < kBuckets; ++b) {
    if (::ftruncate(fds_[b], static_cast<off_t>(lengths_[b])) != 0 && first.ok()) {
      first = Errno(absl::StrCat("cutting back ", BucketPath(dir_, b)));
    }
  }
  return first;
}

absl::StatusOr<std::string> GraphSpool::ReadBucket(int b) const {
  if (b < 0 || b >= kBuckets) return absl::InvalidArgumentError(absl::StrCat("no bucket ", b));
  std::string data(lengths_[b], '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::pread(fds_[b], data.data() + done, data.size() - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Errno(absl::StrCat("reading ", BucketPath(dir_, b)));
    if (n == 0) {
      return absl::DataLossError(absl::StrCat(BucketPath(dir_, b), " ends at byte ", done, " of the ", data.size(),
                                              " acknowledged"));
    }
    done += static_cast<size_t>(n);
  }
  return data;
}

std::string GraphSpool::EncodeLengths(const Lengths& lengths) {
  std::string out;
  out.reserve(kBuckets * 8);
  for (uint64_t v : lengths) {
    for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
  }
  return out;
}

absl::StatusOr<GraphSpool::Lengths> GraphSpool::DecodeLengths(std::string_view encoded) {
  if (encoded.size() != kBuckets * 8) {
    return absl::DataLossError(absl::StrCat("a graph spool's lengths record holds ", encoded.size(), " bytes, not ",
                                            kBuckets * 8));
  }
  Lengths lengths{};
  for (int b = 0; b < kBuckets; ++b) {
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(encoded[b * 8 + i]);
    lengths[b] = v;
  }
  return lengths;
}

absl::Status GraphSpool::Remove(const std::string& dir) {
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  if (ec) return absl::InternalError(absl::StrCat("removing ", dir, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace taso::rules_db
