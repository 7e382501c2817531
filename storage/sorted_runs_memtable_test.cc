#include "storage/sorted_runs_memtable.h"

#include <algorithm>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/test_dir.h"

namespace taso::storage {
namespace {

// Keys of a memtable as RocksDB lays them out: a one-byte length (keys here
// are shorter than 128 bytes), then the bytes.
class LengthPrefixedBytewise : public rocksdb::MemTableRep::KeyComparator {
 public:
  int operator()(const char* a, const char* b) const override { return decode_key(a).compare(decode_key(b)); }
  int operator()(const char* a, const rocksdb::Slice& b) const override { return decode_key(a).compare(b); }
};

std::string Prefixed(const std::string& key) { return std::string(1, static_cast<char>(key.size())) + key; }

std::vector<std::string> ReadAll(rocksdb::MemTableRep::Iterator& it) {
  std::vector<std::string> keys;
  for (it.SeekToFirst(); it.Valid(); it.Next()) keys.push_back(LengthPrefixedBytewise().decode_key(it.key()).ToString());
  return keys;
}

// Runs of sorted keys, some runs out of order with each other, some keys
// unsorted: the order a store's memtable sees from two generators.
std::vector<std::string> RunsOfKeys(int runs, int per_run, int unsorted, std::mt19937& random) {
  std::vector<std::string> all;
  for (int r = 0; r < runs; ++r) {
    std::vector<std::string> run;
    for (int i = 0; i < per_run; ++i) run.push_back("k" + std::to_string(random() % 1000000000));
    std::sort(run.begin(), run.end());
    run.erase(std::unique(run.begin(), run.end()), run.end());
    all.insert(all.end(), run.begin(), run.end());
  }
  for (int i = 0; i < unsorted; ++i) all.push_back("u" + std::to_string(random() % 1000000000));
  std::set<std::string> seen;
  std::vector<std::string> distinct;
  for (const std::string& k : all) {
    if (seen.insert(k).second) distinct.push_back(k);
  }
  return distinct;
}

TEST(SortedRunsMemTable, IteratesInOrderBeforeAndAfterBeingMadeReadOnly) {
  for (int runs : {0, 1, 2, 3, 7, 16}) {
    std::mt19937 random(runs);
    const std::vector<std::string> keys = RunsOfKeys(runs, 200, runs == 7 ? 50 : 0, random);
    std::vector<std::string> encoded;
    for (const std::string& k : keys) encoded.push_back(Prefixed(k));
    LengthPrefixedBytewise compare;
    SortedRunsMemTableFactory factory;
    std::unique_ptr<rocksdb::MemTableRep> rep(factory.CreateMemTableRep(compare, nullptr, nullptr, nullptr));
    for (std::string& e : encoded) rep->Insert(e.data());
    std::vector<std::string> expected = keys;
    std::sort(expected.begin(), expected.end());

    std::unique_ptr<rocksdb::MemTableRep::Iterator> writable(rep->GetIterator(nullptr));
    EXPECT_EQ(ReadAll(*writable), expected) << runs << " runs, writable";
    rep->MarkReadOnly();
    std::unique_ptr<rocksdb::MemTableRep::Iterator> read_only(rep->GetIterator(nullptr));
    EXPECT_EQ(ReadAll(*read_only), expected) << runs << " runs, read-only";
    EXPECT_EQ(ReadAll(*writable), expected) << "an earlier reader keeps its view";
    if (!keys.empty()) {
      EXPECT_TRUE(rep->Contains(encoded.back().data()));
      const std::string absent = Prefixed("zz-absent");
      EXPECT_FALSE(rep->Contains(absent.data()));
    }
  }
}

TEST(SortedRunsMemTable, SeeksBothWays) {
  LengthPrefixedBytewise compare;
  SortedRunsMemTableFactory factory;
  std::unique_ptr<rocksdb::MemTableRep> rep(factory.CreateMemTableRep(compare, nullptr, nullptr, nullptr));
  std::vector<std::string> encoded = {Prefixed("b"), Prefixed("d"), Prefixed("f"), Prefixed("a"), Prefixed("e")};
  for (std::string& e : encoded) rep->Insert(e.data());
  rep->MarkReadOnly();
  std::unique_ptr<rocksdb::MemTableRep::Iterator> it(rep->GetIterator(nullptr));
  auto at = [&]() { return it->Valid() ? compare.decode_key(it->key()).ToString() : std::string("<end>"); };
  it->Seek("c", nullptr);
  EXPECT_EQ(at(), "d");
  const std::string memtable_key = Prefixed("d");
  it->Seek("", memtable_key.data());
  EXPECT_EQ(at(), "d");
  it->SeekForPrev("c", nullptr);
  EXPECT_EQ(at(), "b");
  it->SeekForPrev("d", nullptr);
  EXPECT_EQ(at(), "d");
  it->SeekForPrev("0", nullptr);
  EXPECT_EQ(at(), "<end>");
  it->Seek("g", nullptr);
  EXPECT_EQ(at(), "<end>");
  it->SeekToLast();
  EXPECT_EQ(at(), "f");
  it->Prev();
  EXPECT_EQ(at(), "e");
  it->SeekToFirst();
  it->Prev();
  EXPECT_EQ(at(), "<end>");
}

std::vector<std::string> Scan(rocksdb::DB& db, bool backwards) {
  std::vector<std::string> keys;
  std::unique_ptr<rocksdb::Iterator> it(db.NewIterator(rocksdb::ReadOptions()));
  if (backwards) {
    for (it->SeekToLast(); it->Valid(); it->Prev()) keys.push_back(it->key().ToString());
    std::reverse(keys.begin(), keys.end());
  } else {
    for (it->SeekToFirst(); it->Valid(); it->Next()) keys.push_back(it->key().ToString());
  }
  EXPECT_TRUE(it->status().ok()) << it->status().ToString();
  return keys;
}

// Through RocksDB itself: sorted write batches (and a key written again, and
// one deleted), read from the writable memtable, after a flush, and reopened.
TEST(SortedRunsMemTable, ADatabaseReadsWhatItWroteInOrder) {
  const std::string dir = FreshTestDir("sorted_runs_db");
  rocksdb::Options options;
  options.create_if_missing = true;
  options.memtable_factory = std::make_shared<SortedRunsMemTableFactory>();
  options.write_buffer_size = 256 << 10;  // several memtables flushed on the way
  options.allow_concurrent_memtable_write = false;
  std::mt19937 random(7);
  std::set<std::string> expected;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  for (int batch = 0; batch < 40; ++batch) {
    std::vector<std::string> run = RunsOfKeys(1, 500, 0, random);
    rocksdb::WriteBatch wb;
    for (const std::string& k : run) {
      wb.Put(k, "v" + k);
      expected.insert(k);
    }
    ASSERT_TRUE(db->Write(rocksdb::WriteOptions(), &wb).ok());
  }
  const std::string again = *expected.begin(), gone = *expected.rbegin();
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), again, "newer").ok());
  ASSERT_TRUE(db->Delete(rocksdb::WriteOptions(), gone).ok());
  expected.erase(gone);
  const std::vector<std::string> in_order(expected.begin(), expected.end());

  EXPECT_EQ(Scan(*db, false), in_order);
  EXPECT_EQ(Scan(*db, true), in_order);
  std::string value;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), again, &value).ok());
  EXPECT_EQ(value, "newer");
  EXPECT_TRUE(db->Get(rocksdb::ReadOptions(), gone, &value).IsNotFound());

  ASSERT_TRUE(db->Flush(rocksdb::FlushOptions()).ok());
  EXPECT_EQ(Scan(*db, false), in_order);
  db.reset();
  ASSERT_TRUE(rocksdb::DB::Open(options, dir, &raw).ok());
  db.reset(raw);
  EXPECT_EQ(Scan(*db, false), in_order);
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), again, &value).ok());
  EXPECT_EQ(value, "newer");
}

}  // namespace
}  // namespace taso::storage
