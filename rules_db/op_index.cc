#include "rules_db/op_index.h"

#include <memory>
#include <vector>

#include "absl/strings/str_format.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

constexpr char kCursorKey[] = "~cursor";
constexpr char kBuiltKey[] = "~built";
constexpr int kMaxKinds = 64;
constexpr size_t kValueBytes = 20;  // source mask, target mask (8 bytes each), max_ops (4)

std::string Prefix(int kind) { return absl::StrFormat("k%02x", kind); }

void PutFixed(uint64_t v, int bytes, std::string& out) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

uint64_t GetFixed(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

std::string EncodeKinds(const RuleKinds& k) {
  std::string out;
  PutFixed(k.source, 8, out);
  PutFixed(k.target, 8, out);
  PutFixed(static_cast<uint32_t>(k.max_ops), 4, out);
  return out;
}

// One posting list, positioned at its first id after `after`.
struct PostingList {
  std::unique_ptr<rocksdb::Iterator> it;
  std::string prefix;
  bool Valid() const { return it->Valid() && it->key().starts_with(prefix); }
  std::string Id() const { return it->key().ToString().substr(prefix.size()); }
};

}  // namespace

void OpIndex::Add(const rules::Rule& rule, rocksdb::WriteBatch& batch) const {
  const RuleKinds kinds = KindsOf(rule);
  const std::string value = EncodeKinds(kinds);
  for (int k = 0; k < kMaxKinds; ++k) {
    if (kinds.both() >> k & 1) batch.Put(family_, Prefix(k) + rule.id(), value);
  }
}

absl::Status OpIndex::ForEachCandidate(uint64_t kinds, const std::function<bool(const RuleKinds&)>& accept,
                                       const std::string& after,
                                       const std::function<bool(const std::string& id)>& visit) const {
  std::vector<PostingList> lists;
  for (int k = 0; k < kMaxKinds; ++k) {
    if (!(kinds >> k & 1)) continue;
    PostingList c{std::unique_ptr<rocksdb::Iterator>(db_->NewIterator(rocksdb::ReadOptions(), family_)), Prefix(k)};
    c.it->Seek(c.prefix + after);
    if (c.Valid() && !after.empty() && c.Id() == after) c.it->Next();
    lists.push_back(std::move(c));
  }
  // A merge of the sorted lists: the least id first, once however many
  // lists hold it.
  while (true) {
    std::string least;
    const PostingList* holder = nullptr;
    for (const PostingList& c : lists) {
      if (!c.Valid()) continue;
      std::string id = c.Id();
      if (holder == nullptr || id < least) {
        least = std::move(id);
        holder = &c;
      }
    }
    if (holder == nullptr) break;
    const rocksdb::Slice value = holder->it->value();
    if (value.size() != kValueBytes) return absl::DataLossError("operator index entry of rule " + least + " is corrupt");
    const RuleKinds rule_kinds{GetFixed(value.data(), 8), GetFixed(value.data() + 8, 8),
                               static_cast<int>(GetFixed(value.data() + 16, 4))};
    if (accept(rule_kinds) && !visit(least)) break;
    for (PostingList& c : lists) {
      if (c.Valid() && c.Id() == least) c.it->Next();
    }
  }
  for (const PostingList& c : lists) {
    if (absl::Status s = storage::FromRocks(c.it->status(), "reading the operator index"); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> OpIndex::Meta(const std::string& key) const {
  std::string value;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), family_, key, &value);
  if (s.IsNotFound()) return std::string();
  if (!s.ok()) return storage::FromRocks(s, "reading the operator index");
  return value;
}

absl::StatusOr<bool> OpIndex::Built() const {
  auto v = Meta(kBuiltKey);
  if (!v.ok()) return v.status();
  return !v->empty();
}

absl::StatusOr<std::string> OpIndex::Cursor() const { return Meta(kCursorKey); }

void OpIndex::SetCursor(const std::string& id, rocksdb::WriteBatch& batch) const { batch.Put(family_, kCursorKey, id); }

void OpIndex::MarkBuilt(rocksdb::WriteBatch& batch) const { batch.Put(family_, kBuiltKey, "1"); }

}  // namespace taso::rules_db
