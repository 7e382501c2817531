#include "storage/sorted_runs_memtable.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <utility>
#include <vector>

namespace taso::storage {
namespace {

using Keys = std::vector<const char*>;
using KeyComparator = rocksdb::MemTableRep::KeyComparator;

// Merges the sorted runs of `keys` beginning at `starts`, two at a time, round
// by round: log2(runs) passes over the keys.
void MergeRuns(const KeyComparator& compare, std::vector<size_t> starts, Keys& keys) {
  auto less = [&compare](const char* a, const char* b) { return compare(a, b) < 0; };
  std::vector<size_t> bounds = std::move(starts);
  bounds.push_back(keys.size());
  Keys merged(keys.size());
  while (bounds.size() > 2) {
    std::vector<size_t> next = {bounds.front()};
    for (size_t i = 0; i + 1 < bounds.size(); i += 2) {
      const size_t begin = bounds[i], middle = bounds[i + 1];
      const size_t end = i + 2 < bounds.size() ? bounds[i + 2] : middle;  // an odd run out is copied
      std::merge(keys.begin() + begin, keys.begin() + middle, keys.begin() + middle, keys.begin() + end,
                 merged.begin() + begin, less);
      next.push_back(end);
    }
    keys.swap(merged);
    bounds = std::move(next);
  }
}

class SortedIterator : public rocksdb::MemTableRep::Iterator {
 public:
  SortedIterator(const KeyComparator& compare, std::shared_ptr<const Keys> keys)
      : compare_(compare), keys_(std::move(keys)), at_(keys_->end()) {}

  bool Valid() const override { return at_ != keys_->end(); }
  const char* key() const override { return *at_; }
  void Next() override { ++at_; }
  void Prev() override { at_ = at_ == keys_->begin() ? keys_->end() : at_ - 1; }
  void Seek(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    at_ = std::partition_point(keys_->begin(), keys_->end(),
                               [&](const char* k) { return Compare(k, internal_key, memtable_key) < 0; });
  }
  void SeekForPrev(const rocksdb::Slice& internal_key, const char* memtable_key) override {
    auto after = std::partition_point(keys_->begin(), keys_->end(),
                                      [&](const char* k) { return Compare(k, internal_key, memtable_key) <= 0; });
    at_ = after == keys_->begin() ? keys_->end() : after - 1;
  }
  void SeekToFirst() override { at_ = keys_->begin(); }
  void SeekToLast() override { at_ = keys_->empty() ? keys_->end() : keys_->end() - 1; }

 private:
  int Compare(const char* key, const rocksdb::Slice& internal_key, const char* memtable_key) const {
    return memtable_key != nullptr ? compare_(key, memtable_key) : compare_(key, internal_key);
  }

  const KeyComparator& compare_;
  std::shared_ptr<const Keys> keys_;
  Keys::const_iterator at_;
};

class SortedRunsRep : public rocksdb::MemTableRep {
 public:
  SortedRunsRep(const KeyComparator& compare, rocksdb::Allocator* allocator)
      : MemTableRep(allocator), compare_(compare), keys_(std::make_shared<Keys>()) {}

  // Inserts come one at a time (RocksDB serializes them for a memtable that
  // does not support concurrent inserts); readers may run meanwhile.
  void Insert(rocksdb::KeyHandle handle) override {
    const char* key = static_cast<const char*>(handle);
    std::unique_lock lock(mu_);
    if (keys_->empty() || compare_(key, keys_->back()) < 0) run_starts_.push_back(keys_->size());
    keys_->push_back(key);
  }

  bool Contains(const char* key) const override {
    std::shared_lock lock(mu_);
    return std::any_of(keys_->begin(), keys_->end(), [&](const char* k) { return compare_(k, key) == 0; });
  }

  void MarkReadOnly() override {
    std::unique_lock lock(mu_);
    read_only_ = true;
  }

  // The keys themselves are in the memtable's arena, which counts them.
  size_t ApproximateMemoryUsage() override {
    std::shared_lock lock(mu_);
    return sizeof(*this) + keys_->capacity() * sizeof(const char*) + run_starts_.capacity() * sizeof(size_t);
  }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    std::shared_ptr<const Keys> keys = SortedKeys();
    if (arena == nullptr) return new SortedIterator(compare_, std::move(keys));
    // RocksDB destroys an iterator it asked for in its arena without freeing
    // it, and the arena's type is not public: such iterators are placed in
    // storage this memtable frees, and a memtable outlives its iterators.
    std::lock_guard lock(iterator_storage_mu_);
    iterator_storage_.push_back(std::make_unique<IteratorStorage>());
    return new (iterator_storage_.back()->bytes) SortedIterator(compare_, std::move(keys));
  }

 private:
  struct IteratorStorage {
    alignas(SortedIterator) unsigned char bytes[sizeof(SortedIterator)];
  };

  // A writable memtable's keys are copied and merged for each reader, as the
  // vector memtable does; a read-only one's are merged once, in place.
  std::shared_ptr<const Keys> SortedKeys() {
    {
      std::shared_lock lock(mu_);
      if (!read_only_) {
        auto copy = std::make_shared<Keys>(*keys_);
        std::vector<size_t> starts = run_starts_;
        lock.unlock();
        MergeRuns(compare_, std::move(starts), *copy);
        return copy;
      }
      if (merged_) return keys_;
    }
    std::unique_lock lock(mu_);
    if (!merged_) {
      MergeRuns(compare_, std::move(run_starts_), *keys_);
      run_starts_ = {0};
      merged_ = true;
    }
    return keys_;
  }

  const KeyComparator& compare_;
  mutable std::shared_mutex mu_;
  std::shared_ptr<Keys> keys_;
  std::vector<size_t> run_starts_;  // where each sorted run of keys_ begins
  bool read_only_ = false;
  bool merged_ = false;
  std::mutex iterator_storage_mu_;
  std::vector<std::unique_ptr<IteratorStorage>> iterator_storage_;
};

}  // namespace

rocksdb::MemTableRep* SortedRunsMemTableFactory::CreateMemTableRep(const rocksdb::MemTableRep::KeyComparator& compare,
                                                                   rocksdb::Allocator* allocator,
                                                                   const rocksdb::SliceTransform*, rocksdb::Logger*) {
  return new SortedRunsRep(compare, allocator);
}

}  // namespace taso::storage
