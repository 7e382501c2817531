#include "verifier/streaming_pruning.h"

#include <algorithm>
#include <future>
#include <map>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/hash.h"
#include "core/parallel_for.h"

namespace taso::verifier {
namespace {

constexpr char kCheckpointFormat[] = "taso-prune/1";
// A prepared rule in a batch, for the memory check: its proto, graphs and form.
constexpr int64_t kBytesPerFetchedRule = 16 << 10;

// A rule's place in pruning order: 12 bytes, plus its id in the arena.
struct Entry {
  uint32_t id_offset;
  uint8_t id_length;
  uint8_t size;
  uint8_t distinct_variables;
  uint8_t unused = 0;
  uint16_t source;
};

bool Pruneable(const rules::Rule& r) {
  return r.status() == rules::RULE_STATUS_PROVED || r.status() == rules::RULE_STATUS_PRUNED;
}

// Where a run stopped: the set it was pruning, how far it got in pruning
// order, and the counts so far.
struct Checkpoint {
  std::string digest;
  int64_t total = 0;  // rules in pruning order
  int64_t done = 0;   // judged, statuses stored
  ReductionTable table;

  std::string Encode() const {
    return absl::StrCat(kCheckpointFormat, " ", digest, " ", total, " ", done, " ", table.proved, " ",
                        table.pruned_renaming, " ", table.pruned_subgraph, " ", table.pruned_supergraph);
  }
  static std::optional<Checkpoint> Decode(const std::string& text) {
    std::vector<std::string> f = absl::StrSplit(text, ' ');
    if (f.size() != 8 || f[0] != kCheckpointFormat) return std::nullopt;
    Checkpoint c;
    c.digest = f[1];
    int64_t* numbers[] = {&c.total, &c.done, &c.table.proved, &c.table.pruned_renaming, &c.table.pruned_subgraph,
                          &c.table.pruned_supergraph};
    for (int i = 0; i < 6; ++i) {
      if (!absl::SimpleAtoi(f[i + 2], numbers[i])) return std::nullopt;
    }
    c.table.after_renaming = c.table.proved - c.table.pruned_renaming;
    c.table.after_common_subgraph =
        c.table.after_renaming - c.table.pruned_subgraph - c.table.pruned_supergraph;
    return c;
  }
};

// Pass 1's result: every pruneable rule's place, in pruning order.
struct Order {
  std::string ids;  // arena
  std::vector<Entry> entries;
  std::map<int, std::vector<std::string>> undecodable_pruned;  // source -> ids: set back to proved
  int64_t proved = 0;
  std::string digest;

  std::string Id(const Entry& e) const { return ids.substr(e.id_offset, e.id_length); }
  int64_t Bytes() const {
    return static_cast<int64_t>(ids.capacity() + entries.capacity() * sizeof(Entry));
  }
};

absl::StatusOr<Order> Survey(PruneSource& source, PruneEngine& engine) {
  Order order;
  uint64_t sum_hi = 0, sum_lo = 0;  // order-independent digest of (source, id)
  for (int s = 0; s < source.source_count(); ++s) {
    absl::Status status = source.ForEach(s, [&](const rules::Rule& rule) -> absl::Status {
      if (!Pruneable(rule)) return absl::OkStatus();
      ++order.proved;
      Hasher h(0x6469676573ULL);  // "diges"
      h.AddSigned(s);
      h.AddString(rule.id());
      const Hash128 k = h.Finish();
      sum_hi += k.hi;
      sum_lo += k.lo;
      const PruneOrderKey key = engine.Survey(rule);
      if (!key.decodes) {
        if (rule.status() == rules::RULE_STATUS_PRUNED) order.undecodable_pruned[s].push_back(rule.id());
        return absl::OkStatus();
      }
      if (rule.id().size() > 255 || order.ids.size() > (uint64_t{1} << 32) - 256 || key.size > 255 ||
          key.distinct_variables > 255) {
        return absl::ResourceExhaustedError(
            absl::StrCat("rule ", rule.id(), " does not fit the streaming pruner's compact entry (id of ",
                         rule.id().size(), " characters, ", key.size, " operators, ", key.distinct_variables,
                         " variables; or more than 4 GB of ids)"));
      }
      order.entries.push_back(Entry{static_cast<uint32_t>(order.ids.size()), static_cast<uint8_t>(rule.id().size()),
                                    static_cast<uint8_t>(key.size), static_cast<uint8_t>(key.distinct_variables), 0,
                                    static_cast<uint16_t>(s)});
      order.ids += rule.id();
      return absl::OkStatus();
    });
    if (!status.ok()) return status;
  }
  std::sort(order.entries.begin(), order.entries.end(), [&order](const Entry& x, const Entry& y) {
    const PruneOrderKey kx{true, x.size, x.distinct_variables}, ky{true, y.size, y.distinct_variables};
    if (PrunedBefore(kx, ky)) return true;
    if (PrunedBefore(ky, kx)) return false;
    const int c = std::string_view(order.ids).substr(x.id_offset, x.id_length)
                      .compare(std::string_view(order.ids).substr(y.id_offset, y.id_length));
    return c != 0 ? c < 0 : x.source < y.source;
  });
  // The same rule on two sources (imported into both) is one rule of the
  // set, judged where it sorts first, as the in-memory union counts it.
  auto same = [&order](const Entry& x, const Entry& y) { return order.Id(x) == order.Id(y); };
  const size_t before = order.entries.size();
  order.entries.erase(std::unique(order.entries.begin(), order.entries.end(), same), order.entries.end());
  order.proved -= static_cast<int64_t>(before - order.entries.size());
  order.entries.shrink_to_fit();
  order.digest = absl::StrCat(Hash128{sum_hi, sum_lo}.ToHex(), "-", order.proved, "-", order.entries.size());
  return order;
}

// Pass 2's batch: the rules of entries [begin, end) in pruning order, each
// read from its source, and prepared for judging.
struct FetchedBatch {
  absl::Status status;
  std::vector<rules::Rule> rules;
  std::vector<PreparedRule> prepared;
};

absl::Status FetchBatch(PruneSource& source, const Order& order, int64_t begin, int64_t end,
                        std::vector<rules::Rule>& rules) {
  std::map<int, std::vector<std::string>> ids;
  std::map<int, std::vector<int64_t>> positions;
  for (int64_t i = begin; i < end; ++i) {
    ids[order.entries[i].source].push_back(order.Id(order.entries[i]));
    positions[order.entries[i].source].push_back(i);
  }
  rules.resize(static_cast<size_t>(end - begin));
  for (const auto& [s, list] : ids) {
    std::vector<rules::Rule> fetched;
    if (absl::Status f = source.Fetch(s, list, fetched); !f.ok()) return f;
    if (fetched.size() != list.size()) {
      return absl::DataLossError(absl::StrCat("source ", s, " returned ", fetched.size(), " of ", list.size(),
                                              " rules: the store changed while it was pruned; rerun"));
    }
    for (size_t k = 0; k < fetched.size(); ++k) rules[positions[s][k] - begin] = std::move(fetched[k]);
  }
  return absl::OkStatus();
}

// Where to start: the least advanced source's checkpoint, if every source
// has one for this set.
absl::StatusOr<Checkpoint> Resume(PruneSource& source, const Order& order) {
  Checkpoint fresh;
  fresh.digest = order.digest;
  fresh.total = static_cast<int64_t>(order.entries.size());
  fresh.table.proved = fresh.table.after_renaming = fresh.table.after_common_subgraph = order.proved;
  std::optional<Checkpoint> least;
  for (int s = 0; s < source.source_count(); ++s) {
    auto text = source.Checkpoint(s);
    if (!text.ok()) return text.status();
    auto c = Checkpoint::Decode(*text);
    if (!c || c->digest != order.digest || c->total != fresh.total || c->done > c->total) return fresh;
    if (!least || c->done < least->done) least = c;
  }
  return least ? *least : fresh;
}

}  // namespace

absl::StatusOr<StreamingPruneResult> PruneStreaming(PruneSource& source, const StreamingPruneOptions& options) {
  const int64_t batch = std::max<int64_t>(1, options.batch_rules);
  const int64_t limit = options.memory_limit_mb << 20;
  PruneEngine engine;
  auto order_or = Survey(source, engine);
  if (!order_or.ok()) return order_or.status();
  const Order& order = *order_or;
  engine.Seal();
  auto start = Resume(source, order);
  if (!start.ok()) return start.status();
  Checkpoint at = *start;
  StreamingPruneResult result;
  result.resumed_at = at.done;
  const int64_t total = at.total;

  // Rules left pruned by an earlier pass whose graphs no longer decode are
  // proved again, as PruneRules' callers leave them.
  for (const auto& [s, ids] : order.undecodable_pruned) {
    std::vector<rules::Rule> rules;
    if (absl::Status f = source.Fetch(s, ids, rules); !f.ok()) return f;
    for (rules::Rule& r : rules) {
      r.set_status(rules::RULE_STATUS_PROVED);
      r.clear_status_detail();
    }
    if (absl::Status c = source.Commit(s, rules, at.Encode()); !c.ok()) return c;
    result.rules_written += static_cast<int64_t>(rules.size());
  }

  // Batch k+1 is fetched and prepared (decoded, its forms and side keys
  // made) on a thread of its own while batch k is judged and committed:
  // judging has to stay in order on one thread, which also stores the
  // verdicts, so the rest of each rule's work is done beside it.
  auto fetch = [&source, &order](int64_t begin, int64_t end) {
    FetchedBatch fetched;
    fetched.status = FetchBatch(source, order, begin, end, fetched.rules);
    if (!fetched.status.ok()) return fetched;
    // On every core: with nothing to store, judging outpaces one preparing thread.
    fetched.prepared.resize(fetched.rules.size());
    ParallelFor(fetched.rules.size(), HardwareThreads(),
                [&fetched](int, size_t i) { fetched.prepared[i] = PrepareRule(fetched.rules[i]); });
    return fetched;
  };
  // A return below waits for the batch in flight: a future of std::async
  // joins its thread when it goes, before `order` and `source` do.
  std::future<FetchedBatch> next;
  if (total > 0) next = std::async(std::launch::async, fetch, int64_t{0}, std::min(total, batch));
  for (int64_t begin = 0; begin < total; begin += batch) {
    const int64_t end = std::min(total, begin + batch);
    const int64_t following = std::min(total, end + batch) - end;  // rules in the batch fetched beside this one
    const int64_t needed = order.Bytes() + engine.ApproxBytes() + (end - begin + following) * kBytesPerFetchedRule;
    if (needed > limit) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "pruning needs about ", needed >> 20, " MiB at rule ", begin, " of ", total, ", more than the ",
          options.memory_limit_mb, " MiB limit: raise the memory limit or lower the batch size (",
          at.done, " rules are done and kept; a rerun resumes there)"));
    }
    FetchedBatch fetched = next.get();
    if (!fetched.status.ok()) return fetched.status;
    if (following > 0) next = std::async(std::launch::async, fetch, end, end + following);
    std::vector<rules::Rule>& rules = fetched.rules;
    std::map<int, std::vector<rules::Rule>> changed;
    for (int64_t i = begin; i < end; ++i) {
      rules::Rule& rule = rules[i - begin];
      const rules::RuleStatus stored_status = rule.status();
      const std::string stored_detail = rule.status_detail();
      // Pruning is a function of the proved set: start from it afresh.
      if (stored_status == rules::RULE_STATUS_PRUNED) {
        rule.set_status(rules::RULE_STATUS_PROVED);
        rule.clear_status_detail();
      }
      if (i < at.done) {
        engine.Learn(rule, fetched.prepared[i - begin]);
        continue;
      }
      if (auto verdict = engine.Judge(rule, fetched.prepared[i - begin])) {
        rule.set_status(rules::RULE_STATUS_PRUNED);
        rule.set_status_detail(verdict->detail);
        at.table.Count(verdict->reason);
      }
      if (rule.status() != stored_status || rule.status_detail() != stored_detail) {
        changed[order.entries[i].source].push_back(std::move(rule));
      }
    }
    if (end <= at.done) continue;  // learned only: nothing new to store
    at.done = end;
    const std::string checkpoint = at.Encode();
    for (int s = 0; s < source.source_count(); ++s) {
      const std::vector<rules::Rule>& list = changed[s];
      if (absl::Status c = source.Commit(s, list, checkpoint); !c.ok()) return c;
      result.rules_written += static_cast<int64_t>(list.size());
    }
    ++result.batches;
    if (options.progress) options.progress(end, total);
  }
  result.table = at.table;
  result.state_bytes = order.Bytes() + engine.ApproxBytes();
  return result;
}

}  // namespace taso::verifier
