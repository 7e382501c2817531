// GraphHashStore's finalization of a job once every shard has reported:
// the graphs scanned by fingerprint, each class of more than one graph
// checked and stored with its candidate pairs, the graphs dropped and the
// figures recorded (hash_store.h).
#include <algorithm>
#include <condition_variable>
#include <cstdio>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "records/encoding.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/form_instances.h"
#include "rules_db/hash_store.h"
#include "rules_db/hash_store_internal.h"
#include "storage/database.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

using internal::U32;

}  // namespace

// Called with jobs_mu_ held.
void GraphHashStore::StartFinalize(JobState* state) {
  state->job.set_state(JOB_STATE_FINALIZING);
  finalizers_.Start([this, state] {
    absl::Status s = Finalize(state);
    std::lock_guard<std::mutex> lock(jobs_mu_);
    if (!s.ok() && !closing_) {
      state->job.set_state(JOB_STATE_FAILED);
      state->job.set_error(absl::StrCat("finalizing: ", s.message()));
      (void)PersistJob(state->job);
    }
  });
}

// What finalizing a job found, for its Job record and the log.
struct GraphHashStore::FinalizeTally {
  int64_t graphs = 0;
  int64_t fingerprints = 0;
  int64_t multi_graph_classes = 0;
  int64_t stored_classes = 0;
  int64_t pairs = 0;
  int64_t rejected = 0;
  int64_t taso_kept = 0;
  int64_t renamings = 0;  // pairs given renaming_of a rule of their form
  int64_t instances = 0;  // pairs given renaming_of a rule of a more general form
  int64_t from_smaller_rules = 0;  // first pairs of forms given renaming_of a smaller rule
  // The first surviving pair of each form, by a 128-bit hash of its renaming
  // key: its rule id. A hash collision only costs a proof: the derivation,
  // once every class is verified, compares the forms.
  absl::flat_hash_map<FormInstances::FormHash, std::string> first_of_form;
  // Each form's first pair and every pair's place, to find the forms that
  // are instances of others once all are known.
  FormInstances forms;
  // The forms whose pairs were given renaming_of a more general form's rule.
  absl::flat_hash_set<FormInstances::FormHash> instance_forms;
  // First pairs of forms that may follow from a smaller form's rule: the
  // pair, its form, its size (operators in the larger side) and the hashes
  // and readings of the keys of the smaller pairs it follows from.
  struct Reduction {
    FormInstances::FormHash form;
    FormInstances::Reading reading;
  };
  struct Reducible {
    int size = 0;
    std::string fingerprint;
    int index = 0;
    FormInstances::FormHash form;
    std::vector<Reduction> reductions;
  };
  std::vector<Reducible> reducible;
};

// A class of two or more graphs on its way from the scan to the classes family.
struct GraphHashStore::PendingClass {
  std::string fingerprint;
  std::vector<std::string> members;
  records::ClassCheck check;
};

namespace {

// A form by a hash of its renaming key.
FormInstances::FormHash FormHashOf(const std::string& renaming_key) {
  Hasher h(0x666f726dULL);  // "form"
  h.AddString(renaming_key);
  const Hash128 key = h.Finish();
  return {key.hi, key.lo};
}

}  // namespace

absl::Status GraphHashStore::Finalize(JobState* state) {
  Job job;
  {
    std::lock_guard<std::mutex> lock(jobs_mu_);
    job = state->job;
  }
  const absl::Time started = absl::Now();
  if (!options_.class_checker) {
    return absl::FailedPreconditionError("this store was opened without a class checker, so it cannot finalize jobs");
  }
  auto spec = records::SpecFromProto(job.spec());
  if (!spec.ok()) return spec.status();
  const records::ClassChecker checker = options_.class_checker(*spec);
  const std::string prefix = U32(state->number);
  const std::string next_prefix = U32(state->number + 1);
  const rocksdb::Status cleared = db_->DeleteRange(rocksdb::WriteOptions(), classes_, prefix, next_prefix);
  if (absl::Status s = storage::FromRocks(cleared, "clearing classes"); !s.ok()) return s;
  // Sealed, the spool takes no batch: from here on it is only read.
  GraphSpool* spool = nullptr;
  {
    std::lock_guard<std::mutex> lock(state->spool_mu);
    state->spool_sealed = true;
    auto opened = SpoolOf(*state);
    if (!opened.ok()) return opened.status();
    spool = *opened;
  }
  // The graphs are read, sorted and checked a spool bucket (a range of
  // fingerprints) at a time on finalize_threads threads. This thread stores
  // the buckets in fingerprint order, as the renaming ids need (a form's
  // first pair is the first in fingerprint order), and is the only one
  // touching the tally. Workers stay at most a few buckets ahead of it.
  const int threads = std::max(1, options_.finalize_threads);
  const int slices = GraphSpool::kBuckets;
  const int ahead = 2 * threads;
  struct Slice {
    std::vector<PendingClass> classes;  // those with pairs, checked
    FinalizeTally counts;               // graphs, fingerprints, multi-graph classes
    absl::Status status;
    bool done = false;
  };
  std::vector<Slice> done_slices(slices);
  std::mutex mu;
  std::condition_variable changed;
  int next_slice = 0, stored = 0;
  bool stop = false;
  auto work = [&] {
    while (true) {
      int i;
      {
        std::unique_lock<std::mutex> lock(mu);
        changed.wait(lock, [&] { return stop || next_slice >= slices || next_slice < stored + ahead; });
        if (stop || next_slice >= slices) return;
        i = next_slice++;
      }
      Slice slice;
      auto bucket = spool->ReadBucket(i);
      slice.status = bucket.status();
      if (bucket.ok()) {
        slice.status = ScanClasses(*bucket, slice.counts, [&](PendingClass pending) -> absl::Status {
          pending.check = checker(pending.members);
          if (!pending.check.pairs.empty()) slice.classes.push_back(std::move(pending));
          return absl::OkStatus();
        });
      }
      std::lock_guard<std::mutex> lock(mu);
      slice.done = true;
      done_slices[i] = std::move(slice);
      changed.notify_all();
    }
  };
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) workers.emplace_back(work);
  FinalizeTally tally;
  absl::Status status;
  for (int i = 0; i < slices && status.ok(); ++i) {
    Slice slice;
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] { return done_slices[i].done; });
      slice = std::move(done_slices[i]);
    }
    status = slice.status;
    if (status.ok()) status = StoreClasses(job.id(), prefix, slice.classes, tally);
    tally.graphs += slice.counts.graphs;
    tally.fingerprints += slice.counts.fingerprints;
    tally.multi_graph_classes += slice.counts.multi_graph_classes;
    std::lock_guard<std::mutex> lock(mu);
    stored = i + 1;
    changed.notify_all();
  }
  {
    std::lock_guard<std::mutex> lock(mu);
    stop = true;
    changed.notify_all();
  }
  for (std::thread& t : workers) t.join();
  if (!status.ok()) return status;
  if (absl::Status s = MarkInstances(prefix, tally); !s.ok()) return s;
  if (absl::Status s = MarkFromSmallerRules(prefix, tally); !s.ok()) return s;
  if (absl::Status s = RecordFinalized(state, tally, absl::Now() - started); !s.ok()) return s;
  if (absl::Status s = DropGraphs(*state); !s.ok()) {
    // The job is GENERATED already: a failure here costs disk, not the job.
    std::fprintf(stderr, "taso_rules_db: job %s: its graphs stay on disk: %s\n", job.id().c_str(),
                 std::string(s.message()).c_str());
  }
  return absl::OkStatus();
}

absl::Status GraphHashStore::ScanClasses(std::string_view bucket, FinalizeTally& counts,
                                         const std::function<absl::Status(PendingClass)>& on_class) {
  std::vector<records::PackedRecordRef> sorted;
  if (absl::Status s = records::SortPackedRecords(bucket, sorted); !s.ok()) {
    return absl::DataLossError(absl::StrCat("a graph spool bucket does not parse: ", s.message()));
  }
  std::string_view current, previous;
  std::vector<std::string_view> members;  // the current fingerprint's encodings
  auto close_class = [&]() -> absl::Status {
    absl::Status s;
    if (members.size() >= 2) {
      ++counts.multi_graph_classes;
      s = on_class(PendingClass{std::string(current), std::vector<std::string>(members.begin(), members.end()), {}});
    }
    members.clear();
    return s;
  };
  constexpr size_t kFingerprint = records::kFingerprintBytes;
  for (const records::PackedRecordRef& ref : sorted) {
    if (closing_) return absl::CancelledError("store shutting down");
    const std::string_view record = ref.In(bucket);
    const std::string_view fp = record.substr(0, kFingerprint);
    const std::string_view encoding = record.substr(kFingerprint + 1);
    if (fp != current) {
      if (absl::Status s = close_class(); !s.ok()) return s;
      current = fp;
      ++counts.fingerprints;
    } else if (record == previous) {
      continue;  // stored twice: one graph
    }
    previous = record;
    // Most fingerprints have one graph and no class (at size 4, 612M of
    // them): only a class's members are copied.
    members.push_back(encoding);
    ++counts.graphs;
  }
  return close_class();
}

absl::Status GraphHashStore::StoreClasses(const std::string& job_id, const std::string& prefix,
                                          const std::vector<PendingClass>& checked, FinalizeTally& tally) {
  rocksdb::WriteBatch wb;
  for (const PendingClass& p : checked) {
    if (p.check.pairs.empty()) continue;
    CandidateClass c;
    c.set_fingerprint(p.fingerprint);
    c.set_job_id(job_id);
    std::vector<int> op_counts;
    for (size_t m = 0; m < p.members.size(); ++m) {
      GraphRecord* r = c.add_members();
      r->set_canonical(p.members[m]);
      auto parsed = records::ParseEncoding(p.members[m]);
      op_counts.push_back(parsed.ok() ? static_cast<int>(parsed->size()) : 0);
      r->set_op_count(op_counts.back());
      r->set_canonical_order(p.check.canonical[m]);
    }
    for (const records::PairCheck& pc : p.check.pairs) {
      const int index = c.pairs_size();
      CandidatePair* out = c.add_pairs();
      out->set_source_member(pc.source);
      out->set_target_member(pc.target);
      out->set_rejected(pc.rejected);
      out->set_reason(pc.reason);
      for (int m : pc.output_mapping) out->add_output_mapping(m);
      out->set_taso_would_drop(pc.taso_would_drop);
      if (!pc.rejected) out->set_rule_id(pc.rule_id);
      if (!pc.rejected && !pc.renaming_key.empty() && !pc.rule_id.empty()) {
        const FormInstances::FormHash form = FormHashOf(pc.renaming_key);
        auto [first, inserted] = tally.first_of_form.try_emplace(form, pc.rule_id);
        if (!inserted && first->second != pc.rule_id) {
          out->set_renaming_of(first->second);
          ++tally.renamings;
        }
        // A form whose keys do not parse is never found an instance: proved as it is.
        if (!inserted || tally.forms.AddForm(form, pc.renaming_key, pc.reversed_key, pc.rule_id)) {
          tally.forms.AddPair(form, p.fingerprint, index);
        }
        if (inserted && !pc.smaller_rule_keys.empty()) {
          FinalizeTally::Reducible r{std::max(op_counts[static_cast<size_t>(pc.source)],
                                              op_counts[static_cast<size_t>(pc.target)]),
                                     p.fingerprint, index, form, {}};
          for (const std::string& key : pc.smaller_rule_keys) {
            if (auto reading = FormInstances::ReadingOf(key)) {
              r.reductions.push_back(FinalizeTally::Reduction{FormHashOf(key), *std::move(reading)});
            }
          }
          tally.reducible.push_back(std::move(r));
        }
      }
      ++tally.pairs;
      if (pc.rejected) ++tally.rejected;
      if (!pc.rejected && !pc.taso_would_drop) ++tally.taso_kept;
    }
    ++tally.stored_classes;
    wb.Put(classes_, prefix + p.fingerprint, c.SerializeAsString());
  }
  return storage::FromRocks(db_->Write(rocksdb::WriteOptions(), &wb), "storing candidate classes");
}

absl::Status GraphHashStore::MarkInstances(const std::string& prefix, FinalizeTally& tally) {
  const PairRewrites rewrites = tally.forms.Resolve(&tally.instance_forms);
  return RewritePairs(prefix, rewrites, "marking instance pairs",
                      [&tally](CandidatePair& pair, const std::string& general) {
                        if (!pair.renaming_of().empty()) --tally.renamings;
                        pair.set_renaming_of(general);
                        ++tally.instances;
                      });
}

absl::Status GraphHashStore::MarkFromSmallerRules(const std::string& prefix, FinalizeTally& tally) {
  // Smallest first, and only from a leased rule: a smaller rule that is
  // itself derived has its verdict only after this one would need it.
  using Reducible = FinalizeTally::Reducible;
  std::stable_sort(tally.reducible.begin(), tally.reducible.end(),
                   [](const Reducible& x, const Reducible& y) { return x.size < y.size; });
  absl::flat_hash_set<FormInstances::FormHash> derived = std::move(tally.instance_forms);
  auto leased = [&derived](const FormInstances::FormHash& form) { return !derived.contains(form); };
  PairRewrites rewrites;
  for (const Reducible& r : tally.reducible) {
    if (derived.contains(r.form)) continue;
    for (const FinalizeTally::Reduction& reduction : r.reductions) {
      // The smaller pair's own form, if a pair of the job has it and it is
      // leased; else a leased form it is an instance of (its variables
      // merged): at size 3, 142 of the 400 leased forms pruning later
      // dropped whole followed from a smaller rule only that way.
      std::optional<FormInstances::FormHash> smaller;
      if (tally.first_of_form.contains(reduction.form) && leased(reduction.form)) {
        smaller = reduction.form;
      } else {
        smaller = tally.forms.GeneralOf(reduction.reading, leased);
      }
      if (!smaller) continue;
      rewrites[r.fingerprint].emplace_back(r.index, tally.first_of_form.at(*smaller));
      derived.insert(r.form);
      break;
    }
  }
  std::vector<Reducible>().swap(tally.reducible);
  return RewritePairs(prefix, rewrites, "marking pairs that follow from smaller rules",
                      [&tally](CandidatePair& pair, const std::string& smaller) {
                        pair.set_renaming_of(smaller);
                        pair.set_derivation(DERIVATION_FROM_SMALLER_RULE);
                        ++tally.from_smaller_rules;
                      });
}

absl::Status GraphHashStore::RewritePairs(const std::string& prefix, const PairRewrites& rewrites, const char* what,
                                          const std::function<void(CandidatePair&, const std::string&)>& edit) {
  rocksdb::WriteBatch wb;
  std::string value;
  for (const auto& [fingerprint, pairs] : rewrites) {
    const std::string key = prefix + fingerprint;
    rocksdb::Status got = db_->Get(rocksdb::ReadOptions(), classes_, key, &value);
    if (absl::Status s = storage::FromRocks(got, "reading a candidate class"); !s.ok()) return s;
    CandidateClass c;
    if (!c.ParseFromString(value)) return absl::DataLossError("a candidate class just stored does not parse");
    for (const auto& [index, rule_id] : pairs) {
      if (index < 0 || index >= c.pairs_size()) return absl::InternalError("a pair's index is out of range");
      edit(*c.mutable_pairs(index), rule_id);
    }
    wb.Put(classes_, key, c.SerializeAsString());
    if (wb.Count() >= 1000) {
      if (absl::Status s = storage::FromRocks(db_->Write(rocksdb::WriteOptions(), &wb), what); !s.ok()) return s;
      wb.Clear();
    }
  }
  return storage::FromRocks(db_->Write(rocksdb::WriteOptions(), &wb), what);
}

absl::Status GraphHashStore::DropGraphs(JobState& state) {
  {
    std::lock_guard<std::mutex> lock(state.spool_mu);
    state.spool.reset();  // its files closed
  }
  if (options_.keep_graphs) return absl::OkStatus();
  if (absl::Status s = GraphSpool::Remove(SpoolDir(state.number)); !s.ok()) return s;
  return database_->FlushAll();  // the spool lengths and progress: the log then goes
}

absl::Status GraphHashStore::RecordFinalized(JobState* state, const FinalizeTally& tally, absl::Duration took) {
  std::fprintf(stderr,
               "taso_rules_db: job %s finalized in %.1f s: %lld graphs, %lld fingerprints, %lld classes, "
               "%lld pairs (%lld rejected, %lld renamings of another, %lld instances of a more general one, "
               "%lld following from a smaller one)\n",
               state->job.id().c_str(), absl::ToDoubleSeconds(took), (long long)tally.graphs,
               (long long)tally.fingerprints, (long long)tally.stored_classes, (long long)tally.pairs,
               (long long)tally.rejected, (long long)tally.renamings, (long long)tally.instances,
               (long long)tally.from_smaller_rules);
  std::lock_guard<std::mutex> lock(jobs_mu_);
  state->job.set_state(JOB_STATE_GENERATED);
  state->job.set_graphs(tally.graphs);
  state->job.set_distinct_fingerprints(tally.fingerprints);
  state->job.set_multi_graph_classes(tally.multi_graph_classes);
  state->job.set_candidate_classes(tally.stored_classes);
  state->job.set_candidate_pairs(tally.pairs - tally.rejected);
  state->job.set_rejected_pairs(tally.rejected);
  state->job.set_pairs_after_taso_checks(tally.taso_kept);
  state->job.set_renaming_pairs(tally.renamings);
  state->job.set_instance_pairs(tally.instances);
  state->job.set_from_smaller_rule_pairs(tally.from_smaller_rules);
  return PersistJob(state->job);
}

}  // namespace taso::rules_db
