// RuleStore's end of a job's verification, once every class has verdicts:
// the verdicts of the pairs not leased derived from their forms' first
// pairs, the proved rules pruned, the figures recorded and the job DONE
// (rule_store.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/parallel_for.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/rule_store.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

absl::Status Closing() {
  return absl::CancelledError("the store is closing; a restarted store finishes the job");
}

// A pair whose verdict ProveRenamings derives, kept compactly (a size-4 job
// has 3M): the rule it derives from, and the pair as a class of its two
// members (pair 0), both in the bytes of one thread's arena.
struct PendingDerivation {
  int64_t class_index = 0;  // in the job's class fingerprints
  int32_t pair_index = 0;
  uint16_t arena = 0;
  bool from_smaller = false;  // DERIVATION_FROM_SMALLER_RULE: derived in the first round
  uint16_t renaming_of_size = 0;
  uint64_t renaming_of_at = 0;
  uint64_t pair_class_at = 0;
  uint64_t pair_class_size = 0;
};

PendingDerivation Pending(const CandidateClass& c, int pair_index, int64_t class_index, uint16_t arena_index,
                          std::string& arena) {
  const CandidatePair& pair = c.pairs(pair_index);
  // The mapping names outputs, not members, so two members are all it reads.
  CandidateClass two;
  *two.add_members() = c.members(pair.source_member());
  *two.add_members() = c.members(pair.target_member());
  for (GraphRecord& member : *two.mutable_members()) member.clear_fingerprint();
  CandidatePair* copy = two.add_pairs();
  *copy = pair;
  copy->set_source_member(0);
  copy->set_target_member(1);
  copy->clear_renaming_of();
  PendingDerivation out;
  out.class_index = class_index;
  out.pair_index = pair_index;
  out.arena = arena_index;
  out.from_smaller = pair.derivation() == DERIVATION_FROM_SMALLER_RULE;
  out.renaming_of_size = static_cast<uint16_t>(pair.renaming_of().size());
  out.renaming_of_at = arena.size();
  arena += pair.renaming_of();
  out.pair_class_at = arena.size();
  two.AppendToString(&arena);
  out.pair_class_size = arena.size() - out.pair_class_at;
  return out;
}

}  // namespace

void RuleStore::StartFinish(const std::string& job_id, const JobQueue& queue, Verification v) {
  // Recorded before the thread starts: a client never reads the failure of
  // an earlier attempt once this one is under way. Should the write fail,
  // so does the job's, and that is recorded (best effort) below.
  RecordFinishStage(job_id, v, options_.renaming_prover ? FINISH_STAGE_DERIVING : FINISH_STAGE_PRUNING)
      .IgnoreError();
  finishers_.Start([this, job_id, &queue, v] {
    absl::Status s = FinishJob(job_id, queue, v);
    if (s.ok() || closing_) return;
    const std::string error = absl::StrCat("finishing job ", job_id, " failed: ", s.message());
    if (options_.log) options_.log(absl::StrCat(error, " (restart the store to finish it; no verdict is lost)"));
    // Best effort: a store that cannot write (a full disk) cannot record it either.
    RecordFinishStage(job_id, v, FINISH_STAGE_FAILED, error).IgnoreError();
  });
}

absl::Status RuleStore::RecordFinishStage(const std::string& job_id, Verification v, FinishStage stage,
                                          const std::string& error) {
  v.set_finish_stage(stage);
  v.set_finish_error(error);
  return hash_store_->UpdateVerification(job_id, JOB_STATE_VERIFYING, v);
}

absl::Status RuleStore::ProveRenamings(const std::string& job_id, const JobQueue& queue, Verification& v) {
  auto fingerprints = hash_store_->ClassFingerprints(job_id);
  if (!fingerprints.ok()) return fingerprints.status();
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  const absl::Time now = absl::Now();
  // The first error stops every thread at its next step.
  const int threads = std::max(1, options_.finish_threads);
  std::mutex error_mu;
  absl::Status error;
  std::atomic<bool> failed{false};
  auto fail = [&](absl::Status s) {
    std::lock_guard<std::mutex> lock(error_mu);
    if (error.ok()) error = std::move(s);
    failed = true;
  };

  // 1. The pairs to derive, each with the two members it reads, grouped by
  // the rule they derive from. A rule's renamings lie in classes all over
  // the key space (about six a rule at size 4); in its group, the rule is
  // read, decoded and given its form once for all of them.
  std::vector<std::string> arenas(static_cast<size_t>(threads));
  std::vector<std::vector<PendingDerivation>> found(static_cast<size_t>(threads));
  ParallelFor(fingerprints->size(), threads, [&](int thread, size_t i) {
    if (failed) return;
    if (closing_) return fail(Closing());
    auto c = hash_store_->GetCandidateClass(job_id, (*fingerprints)[i]);
    if (!c.ok()) return fail(c.status());
    for (int p = 0; p < c->pairs_size(); ++p) {
      const CandidatePair& pair = c->pairs(p);
      if (Leased(pair) || pair.rejected()) continue;
      if (pair.renaming_of().size() > UINT16_MAX) {
        return fail(absl::DataLossError(absl::StrCat("class ", absl::BytesToHexString((*fingerprints)[i]),
                                                     ": a pair names a rule id of ", pair.renaming_of().size(),
                                                     " bytes")));
      }
      found[static_cast<size_t>(thread)].push_back(Pending(*c, p, static_cast<int64_t>(i),
                                                           static_cast<uint16_t>(thread),
                                                           arenas[static_cast<size_t>(thread)]));
    }
  });
  if (!error.ok()) return error;
  std::vector<PendingDerivation> pending;
  for (auto& part : found) {
    pending.insert(pending.end(), part.begin(), part.end());
    std::vector<PendingDerivation>().swap(part);
  }
  auto renaming_of = [&arenas](const PendingDerivation& d) {
    return std::string_view(arenas[d.arena]).substr(d.renaming_of_at, d.renaming_of_size);
  };
  // Those that follow from a smaller rule first: their forms' other pairs
  // derive from them.
  std::sort(pending.begin(), pending.end(), [&renaming_of](const PendingDerivation& x, const PendingDerivation& y) {
    if (x.from_smaller != y.from_smaller) return x.from_smaller;
    const int c = renaming_of(x).compare(renaming_of(y));
    if (c != 0) return c < 0;
    return std::tie(x.class_index, x.pair_index) < std::tie(y.class_index, y.pair_index);
  });
  std::vector<size_t> groups;  // where each rule's group begins
  size_t first_round_groups = 0;
  for (size_t i = 0; i < pending.size(); ++i) {
    if (i == 0 || renaming_of(pending[i]) != renaming_of(pending[i - 1]) ||
        pending[i].from_smaller != pending[i - 1].from_smaller) {
      groups.push_back(i);
      if (pending[i].from_smaller) first_round_groups = groups.size();
    }
  }

  // 2. Each thread derives whole groups into a batch of its own; the first
  // round's verdicts are written before the second round reads them.
  struct Share {
    rocksdb::WriteBatch batch;
    int64_t proved_as_renaming = 0;
    int64_t proved_alone = 0;
    int64_t proved_from_smaller = 0;  // of proved_as_renaming, from_smaller
  };
  std::vector<Share> shares(static_cast<size_t>(threads));
  constexpr int kRulesPerWrite = 5000;
  auto flush = [&](Share& share) -> absl::Status {
    absl::Status s = storage::FromRocks(f.db->Write(rocksdb::WriteOptions(), &share.batch), "storing derived verdicts");
    share.batch.Clear();
    return s;
  };
  auto derive_groups = [&](size_t first_group, size_t end_group) {
    ParallelFor(end_group - first_group, threads, [&](int thread, size_t k) {
      if (failed) return;
      if (closing_) return fail(Closing());
      const size_t g = first_group + k;
      Share& share = shares[static_cast<size_t>(thread)];
      const size_t begin = groups[g];
      const size_t end = g + 1 < groups.size() ? groups[g + 1] : pending.size();
      // Its rule was leased, or derived in the first round, and has a
      // verdict, unless the store lost it: then nothing is derived and the
      // rules are proved here.
      rules::Rule other;
      if (auto stored = GetRule(std::string(renaming_of(pending[begin]))); stored.ok()) {
        other = *std::move(stored);
      } else if (!absl::IsNotFound(stored.status())) {
        return fail(stored.status());
      }
      const records::PairProver prove = options_.renaming_prover(other);
      for (size_t i = begin; i < end && !failed; ++i) {
        const PendingDerivation& d = pending[i];
        const std::string& fp = (*fingerprints)[static_cast<size_t>(d.class_index)];
        CandidateClass two;
        if (!two.ParseFromArray(arenas[d.arena].data() + d.pair_class_at, static_cast<int>(d.pair_class_size))) {
          return fail(absl::InternalError(absl::StrCat("class ", absl::BytesToHexString(fp), ": pair ", d.pair_index,
                                                       " did not parse back")));
        }
        const int64_t derived_before = share.proved_as_renaming;
        if (absl::Status s = DerivePair(f, job_id, queue, fp, two, other, prove, now, share.batch,
                                        share.proved_as_renaming, share.proved_alone);
            !s.ok()) {
          return fail(std::move(s));
        }
        if (d.from_smaller) share.proved_from_smaller += share.proved_as_renaming - derived_before;
      }
      if (share.batch.Count() >= kRulesPerWrite) {
        if (absl::Status s = flush(share); !s.ok()) fail(std::move(s));
      }
    });
  };
  derive_groups(0, first_round_groups);
  for (Share& share : shares) {
    if (absl::Status s = flush(share); !s.ok()) fail(std::move(s));
  }
  derive_groups(first_round_groups, groups.size());
  if (!error.ok()) return error;
  for (Share& share : shares) {
    if (absl::Status s = flush(share); !s.ok()) return s;
    v.set_rules_proved_as_renaming(v.rules_proved_as_renaming() + share.proved_as_renaming);
    v.set_renamings_proved_alone(v.renamings_proved_alone() + share.proved_alone);
    v.set_rules_proved_from_smaller(v.rules_proved_from_smaller() + share.proved_from_smaller);
  }
  return absl::OkStatus();
}

absl::Status RuleStore::DerivePair(const Families& f, const std::string& job_id, const JobQueue& queue,
                                   const std::string& fp, const CandidateClass& two, const rules::Rule& other,
                                   const records::PairProver& prove, absl::Time now, rocksdb::WriteBatch& batch,
                                   int64_t& proved_as_renaming, int64_t& proved_alone) {
  auto verdict = prove(queue.spec, two, two.pairs(0));
  if (!verdict.ok()) {
    return absl::DataLossError(absl::StrCat("class ", absl::BytesToHexString(fp), ": ", verdict.status().message()));
  }
  rules::Rule rule = std::move(verdict->rule);
  if (rule.id().empty()) {
    auto id = RuleId(rule);
    if (!id.ok()) return id.status();
    rule.set_id(*id);
  }
  const std::string id = rule.id();
  if (verdict->outcome == records::RenamingOutcome::kNotDerived) {
    ++proved_alone;
    if (!options_.checker) {
      rule.set_status(rules::RULE_STATUS_UNKNOWN);
      rule.set_status_detail(absl::StrCat("not proved: this store has no rule checker (", verdict->why_not, ")"));
    } else {
      // The other rule's axioms as the claim: the check tries them first.
      if (IsProvedStatus(other.status())) {
        rule.set_status(rules::RULE_STATUS_PROVED);
        *rule.mutable_proof() = other.proof();
      }
      if (absl::Status s = options_.checker(rule); !s.ok()) {
        return absl::DataLossError(absl::StrCat("rule ", id, ": ", s.message()));
      }
    }
  } else if (verdict->outcome == records::RenamingOutcome::kProved) {
    ++proved_as_renaming;
  }
  // A derived verdict is the other rule's verifier's (as the store checked it).
  const std::string by = verdict->outcome == records::RenamingOutcome::kNotDerived
                             ? std::string(kStoreCheckerId)
                             : other.provenance().verifier_worker_id();
  StampVerdict(f, job_id, queue, fp, by, now, rule);
  PutRule(f, rule, batch);
  return absl::OkStatus();
}

Verification RuleStore::Progress(const JobQueue& queue) {
  Verification v;
  v.set_classes_total(queue.leases.total());
  v.set_classes_verified(queue.leases.verified());
  v.set_classes_given_up(queue.given_up);
  if (queue.started != absl::InfinitePast()) v.set_wall_seconds(absl::ToDoubleSeconds(absl::Now() - queue.started));
  return v;
}

absl::Status RuleStore::FinishJob(const std::string& job_id, const JobQueue& queue, Verification v) {
  int64_t count = 0;
  bool prune = true;
  std::vector<rules::Rule> rules;
  if (options_.renaming_prover) {
    const absl::Time start = absl::Now();
    if (absl::Status s = ProveRenamings(job_id, queue, v); !s.ok()) return s;
    v.set_derive_seconds(absl::ToDoubleSeconds(absl::Now() - start));
    if (absl::Status s = RecordFinishStage(job_id, v, FINISH_STAGE_PRUNING); !s.ok()) return s;
  }
  auto tally = [&v](const rules::Rule& r) {
    switch (r.status()) {
      case rules::RULE_STATUS_PROVED:
      case rules::RULE_STATUS_PRUNED: v.set_rules_proved(v.rules_proved() + 1); break;
      case rules::RULE_STATUS_REFUTED: v.set_rules_refuted(v.rules_refuted() + 1); break;
      case rules::RULE_STATUS_TIMEOUT: v.set_rules_timeout(v.rules_timeout() + 1); break;
      case rules::RULE_STATUS_UNKNOWN: v.set_rules_unknown(v.rules_unknown() + 1); break;
      case rules::RULE_STATUS_REJECTED_PRECHECK:
        v.set_rules_rejected_precheck(v.rules_rejected_precheck() + 1);
        break;
      default: break;
    }
  };
  // Keep the rules only when the job is small enough to prune here: keeping
  // them until the limit was passed held prune_max_rules parsed rules (~10 KB
  // each) for a job that is then not pruned, which took the store to about
  // 5 GiB on the size-4 job. A job has a rule per candidate pair (rejected
  // ones too), so its record says how many there are without a pass over
  // them; should more turn up, the read below stops keeping them.
  auto job = hash_store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  count = job->candidate_pairs() + job->rejected_pairs();
  prune = count <= options_.prune_max_rules;
  if (prune) rules.reserve(static_cast<size_t>(count));
  count = 0;
  bool closed = false;
  absl::Status s = ForEachRule([&](const rules::Rule& r) {
    if (closing_) {
      closed = true;
      return false;
    }
    if (r.provenance().job_id() != job_id) return true;
    ++count;
    if (prune && count > options_.prune_max_rules) {
      // More than the record said: tally what was kept, keep nothing more.
      for (const rules::Rule& kept : rules) tally(kept);
      rules = std::vector<rules::Rule>();
      prune = false;
    }
    if (prune) {
      rules.push_back(r);
    } else {
      tally(r);
    }
    return true;
  });
  if (!s.ok()) return s;
  if (closed) return Closing();
  if (!prune) {
    v.set_note(absl::StrCat("not pruned: ", count, " rules is more than --prune_max_rules=",
                            options_.prune_max_rules, " (prune them with `taso rules prune`)"));
    return hash_store_->UpdateVerification(job_id, JOB_STATE_DONE, v);
  }
  if (!options_.pruner) {
    for (const rules::Rule& kept : rules) tally(kept);
    v.set_note("not pruned: this store has no pruner");
    return hash_store_->UpdateVerification(job_id, JOB_STATE_DONE, v);
  }
  // Pruning is a function of the proved set: start from it afresh.
  std::vector<rules::RuleStatus> before;
  for (rules::Rule& r : rules) {
    before.push_back(r.status());
    if (r.status() == rules::RULE_STATUS_PRUNED) {
      r.set_status(rules::RULE_STATUS_PROVED);
      r.clear_status_detail();
    }
  }
  const PruneCounts pruned = options_.pruner(rules);
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  rocksdb::WriteBatch batch;
  for (size_t i = 0; i < rules.size(); ++i) {
    const rules::Rule& r = rules[i];
    if (r.status() != before[i]) PutPruningVerdict(*families, r, batch);
    tally(r);
  }
  s = storage::FromRocks(families->db->Write(rocksdb::WriteOptions(), &batch), "storing pruned rules");
  if (!s.ok()) return s;
  records::RecordReduction(pruned, v);
  return hash_store_->UpdateVerification(job_id, JOB_STATE_DONE, v);
}

}  // namespace taso::rules_db
