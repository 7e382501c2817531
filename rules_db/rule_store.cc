#include "rules_db/rule_store.h"

#include <algorithm>
#include <deque>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "records/encoding.h"
#include "records/rule_id.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/match_response.h"
#include "rules_db/op_index.h"
#include "storage/database.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

constexpr int kDefaultPageSize = 100;
constexpr int kMaxPageSize = 1000;
constexpr int kMaxClassesPerLease = 100;
// MatchRules: sites listed per rule direction by default, and proved rules
// handed to the matcher at a time (bounding the memory a query holds).
constexpr int kDefaultMatchSites = 20;
constexpr size_t kMatchChunk = 5000;

// Column family names: part of the on-disk format.
constexpr char kRulesFamily[] = "rules";
constexpr char kVerifiedFamily[] = "verified";
constexpr char kPruneFamily[] = "prune";

// The rule id each pair of a class stands for, so a verdict can be matched
// to the pair it claims to be about. A pair the re-check rejected before it
// had an output mapping stands for a rule without output pairs.
absl::StatusOr<LeaseQueue::ExpectedPairs> ExpectedPairsOf(const records::Spec& spec, const CandidateClass& c) {
  std::map<int, Graph> members;
  auto member = [&](int m) -> absl::StatusOr<const Graph*> {
    if (m < 0 || m >= c.members_size()) {
      return absl::DataLossError(absl::StrCat("a pair names member ", m, " of a class of ", c.members_size()));
    }
    auto it = members.find(m);
    if (it == members.end()) {
      auto g = records::DecodeGraph(spec, c.members(m).canonical());
      if (!g.ok()) return absl::DataLossError(absl::StrCat("member ", m, ": ", g.status().message()));
      it = members.emplace(m, std::move(*g)).first;
    }
    return &it->second;
  };
  LeaseQueue::ExpectedPairs ids;
  for (const CandidatePair& pair : c.pairs()) {
    auto source = member(pair.source_member());
    if (!source.ok()) return source.status();
    auto target = member(pair.target_member());
    if (!target.ok()) return target.status();
    std::vector<std::pair<int, int>> outputs;
    for (int i = 0; i < pair.output_mapping_size(); ++i) outputs.emplace_back(i, pair.output_mapping(i));
    auto id = records::RuleIdOf(**source, **target, outputs);
    if (!id.ok()) return id.status();
    ids[{pair.source_member(), pair.target_member()}] = LeaseQueue::ExpectedPair{*id, pair.rejected()};
  }
  return ids;
}

}  // namespace

RuleStore::RuleStore(GraphHashStore* hash_store, const RuleStoreOptions& options)
    : hash_store_(hash_store), options_(options) {}

RuleStore::~RuleStore() {
  closing_ = true;
  WaitForFinishes();
}

void RuleStore::WaitForFinishes() { finishers_.JoinAll(); }

absl::Status RuleStore::ResumeFinishing() {
  ListJobsRequest request;
  request.set_page_size(1000);
  while (true) {
    auto jobs = hash_store_->ListJobs(request);
    if (!jobs.ok()) return jobs.status();
    for (const Job& job : jobs->jobs()) {
      const Verification& v = job.verification();
      const bool finishing = v.finish_stage() != FINISH_STAGE_NONE ||
                             (v.classes_total() > 0 && v.classes_verified() == v.classes_total());
      if (job.state() != JOB_STATE_VERIFYING || !finishing) continue;
      std::lock_guard<std::mutex> lock(mu_);
      // Loading the queue finds every class verified and starts finishing.
      if (auto queue = Queue(job.id()); !queue.ok()) return queue.status();
    }
    if (jobs->next_page_token().empty()) return absl::OkStatus();
    request.set_page_token(jobs->next_page_token());
  }
}

absl::StatusOr<RuleStore::Families> RuleStore::OwnFamilies() {
  storage::Database* database = hash_store_->database();
  auto rules = database->Family(kRulesFamily);
  if (!rules.ok()) return rules.status();
  auto verified = database->Family(kVerifiedFamily);
  if (!verified.ok()) return verified.status();
  auto prune = database->Family(kPruneFamily);
  if (!prune.ok()) return prune.status();
  auto by_op = database->Family(OpIndex::kFamily);
  if (!by_op.ok()) return by_op.status();
  return Families{database->db(), *rules, *verified, *prune, *by_op};
}

void RuleStore::PutRule(const Families& f, const rules::Rule& rule, rocksdb::WriteBatch& batch) {
  batch.Put(f.rules, rule.id(), rule.SerializeAsString());
  OpIndex(f.db, f.by_op).Add(rule, batch);
}

void RuleStore::PutPruningVerdict(const Families& f, const rules::Rule& rule, rocksdb::WriteBatch& batch) {
  batch.Put(f.rules, rule.id(), rule.SerializeAsString());
}

void RuleStore::StampVerdict(const Families& f, const std::string& job_id, const JobQueue& queue,
                             const std::string& fingerprint, const std::string& worker_id, absl::Time now,
                             rules::Rule& rule) {
  std::string existing;
  rules::Rule stored;
  rocksdb::Status s = f.db->Get(rocksdb::ReadOptions(), f.rules, rule.id(), &existing);
  if (s.ok() && stored.ParseFromString(existing)) {
    rule.set_revision(stored.revision() + 1);
    if (stored.provenance().has_discovered_at()) {
      *rule.mutable_provenance()->mutable_discovered_at() = stored.provenance().discovered_at();
    }
  } else {
    rule.set_revision(1);
  }
  rules::Provenance* p = rule.mutable_provenance();
  p->set_job_id(job_id);
  p->set_generator_max_ops(queue.max_ops);
  p->set_fingerprint(fingerprint);
  p->set_verifier_worker_id(worker_id);
  if (!p->has_discovered_at()) storage::SetTime(now, p->mutable_discovered_at());
  storage::SetTime(now, p->mutable_status_changed_at());
}

absl::StatusOr<std::string> RuleStore::PickJob(const std::string& job_id) {
  if (!job_id.empty()) return job_id;
  ListJobsRequest request;
  request.set_page_size(1000);
  auto jobs = hash_store_->ListJobs(request);
  if (!jobs.ok()) return jobs.status();
  for (const Job& job : jobs->jobs()) {
    if (job.state() != JOB_STATE_GENERATED && job.state() != JOB_STATE_VERIFYING) continue;
    auto queue = Queue(job.id());
    if (!queue.ok()) return queue.status();
    if ((*queue)->leases.HasWork()) return job.id();
  }
  return std::string();
}

absl::StatusOr<RuleStore::JobQueue*> RuleStore::Queue(const std::string& job_id) {
  auto it = queues_.find(job_id);
  if (it != queues_.end()) return it->second.get();
  auto job = hash_store_->GetJob(job_id);
  if (!job.ok()) return job.status();
  auto prefix = hash_store_->JobPrefix(job_id);
  if (!prefix.ok()) return prefix.status();
  auto spec = records::SpecFromProto(job->spec());
  if (!spec.ok()) return absl::DataLossError(absl::StrCat("job ", job_id, "'s spec: ", spec.status().message()));
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  // The verified markers are the truth: a restart forgets only the leases.
  // A class whose every pair takes its verdict from an earlier form's
  // (renaming_of) has nothing to lease: it counts as verified from the
  // start, and its rules are derived when the job finishes, like the rest.
  std::deque<std::string> pending;
  int64_t verified = 0;
  int64_t given_up = 0;
  std::string marker;
  absl::Status listed = hash_store_->ForEachClass(job_id, [&](const std::string& fp, const CandidateClass& c) {
    rocksdb::Status s = f.db->Get(rocksdb::ReadOptions(), f.verified, *prefix + fp, &marker);
    if (s.ok() && ClassEndOf(marker) == ClassEnd::kGivenUp) ++given_up;
    // Every pair derived from another's (none rejected: a rejected pair's
    // verdict comes from a verifier): nothing to lease.
    const bool nothing_to_lease = std::all_of(c.pairs().begin(), c.pairs().end(),
                                              [this](const CandidatePair& p) { return !p.rejected() && !Leased(p); });
    if (s.ok() || (s.IsNotFound() && options_.renaming_prover && nothing_to_lease)) {
      ++verified;
    } else if (s.IsNotFound()) {
      pending.push_back(fp);
    } else {
      return storage::FromRocks(s, "reading verification markers");
    }
    return absl::OkStatus();
  });
  if (!listed.ok()) return listed;
  auto queue = std::make_unique<JobQueue>(JobQueue{
      *prefix, static_cast<int>(job->max_ops()), std::move(*spec),
      LeaseQueue(job_id, std::move(pending), verified, &next_lease_number_,
                 options_.pair_rule ? options_.max_lease_expiries : 0)});
  JobQueue* raw = queue.get();
  raw->given_up = given_up;
  queues_[job_id] = std::move(queue);
  if (raw->leases.verified() == raw->leases.total() && job->state() != JOB_STATE_DONE) {
    StartFinish(job_id, *raw, Progress(*raw));  // a restart after the last verdict
  }
  return raw;
}

absl::StatusOr<LeaseCandidatesResponse> RuleStore::LeaseCandidates(const LeaseCandidatesRequest& request) {
  if (request.worker_id().empty()) return absl::InvalidArgumentError("worker_id is required");
  const int wanted = std::clamp(request.max_classes() <= 0 ? 1 : request.max_classes(), 1, kMaxClassesPerLease);
  const int64_t ms = request.lease_duration_ms() <= 0 ? options_.default_lease_ms
                                                      : std::min(request.lease_duration_ms(), options_.max_lease_ms);
  std::string job_id;
  JobQueue* queue = nullptr;  // never freed while the store is open
  std::vector<std::string> reserved;
  std::vector<std::pair<std::string, int>> given_up;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto picked = PickJob(request.job_id());
    if (!picked.ok()) return picked.status();
    if (picked->empty()) return LeaseCandidatesResponse();
    job_id = *std::move(picked);
    auto queue_or = Queue(job_id);
    if (!queue_or.ok()) return queue_or.status();
    queue = *queue_or;
    const absl::Time now = absl::Now();
    queue->leases.Expire(now);
    if (queue->started == absl::InfinitePast()) queue->started = now;
    if (!queue->verifying && queue->leases.pending() > 0) {
      if (absl::Status s = PersistProgress(job_id, *queue); !s.ok()) return s;
    }
    // Taken with the reserved classes: nothing returns before both are
    // settled or put back.
    given_up = queue->leases.TakeGivenUp();
    reserved = queue->leases.Reserve(wanted);
  }
  if (!given_up.empty()) {
    // Ended here, outside the lock like the reads below; the class that
    // completes the job may be one of them.
    size_t done = 0;
    absl::Status s = GiveUpClasses(job_id, *queue, given_up, done);
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = 0; i < done; ++i) queue->leases.Settled(given_up[i].first);
    queue->given_up += static_cast<int64_t>(done);
    if (!s.ok()) {
      queue->leases.Unsettle({given_up.begin() + static_cast<std::ptrdiff_t>(done), given_up.end()});
      queue->leases.Unreserve(reserved);
      return s;
    }
    if (queue->leases.verified() == queue->leases.total()) {
      StartFinish(job_id, *queue, Progress(*queue));
      return LeaseCandidatesResponse();
    }
  }
  // Each class is read as it is leased, outside the lock (the spec does not
  // change once loaded): its verdicts are checked against the store's copy,
  // and the worker gets that copy. Other workers' leases and reports do not
  // wait for the reads and the rule ids.
  std::vector<CandidateClass> classes;
  std::vector<LeaseQueue::ReadClass> read;
  absl::Status error;
  for (const std::string& fp : reserved) {
    auto c = hash_store_->GetCandidateClass(job_id, fp);
    if (!c.ok()) {
      error = c.status();
      break;
    }
    // Pairs of a form already leased are derived when the job finishes
    // (ProveRenamings): a verdict about one is refused as not leased.
    auto* candidates = c->mutable_pairs();
    candidates->erase(
        std::remove_if(candidates->begin(), candidates->end(), [this](const CandidatePair& p) { return !Leased(p); }),
        candidates->end());
    auto pairs = ExpectedPairsOf(queue->spec, *c);
    if (!pairs.ok()) {
      error = pairs.status();
      break;
    }
    classes.push_back(*std::move(c));
    read.push_back(LeaseQueue::ReadClass{fp, *std::move(pairs)});
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (!error.ok()) {
    // Every reserved class goes back in front of the line, in its order.
    queue->leases.Unreserve(reserved);
    return error;
  }
  // The lease runs from when it is granted, not from when its reads began.
  const std::vector<LeaseQueue::Granted> granted =
      queue->leases.Grant(request.worker_id(), std::move(read), absl::Milliseconds(ms), absl::Now());
  LeaseCandidatesResponse response;
  for (size_t i = 0; i < granted.size(); ++i) {
    auto* lease = response.add_leases();
    lease->set_lease_id(granted[i].lease_id);
    *lease->mutable_candidate_class() = std::move(classes[i]);
    lease->mutable_candidate_class()->set_job_id(job_id);
    storage::SetTime(granted[i].expires, lease->mutable_expires_at());
  }
  return response;
}

absl::StatusOr<ReportVerdictsResponse> RuleStore::ReportVerdicts(const ReportVerdictsRequest& request) {
  const size_t slash = request.lease_id().find('/');
  if (slash == std::string::npos) return absl::InvalidArgumentError("lease_id is not one this store issued");
  const std::string job_id = request.lease_id().substr(0, slash);
  ReportVerdictsResponse response;
  // Each verdict checked against its pair of the held lease first, so a
  // stale or foreign report costs no proof. The ids, a decoding and a
  // canonical text per rule, are computed before the lock is taken: leases
  // and other reports wait for nothing but the check.
  std::vector<rules::Rule> rules;
  std::vector<std::string> ids;
  for (const PairVerdict& v : request.verdicts()) {
    auto id = RuleId(v.rule());
    if (!id.ok()) return absl::InvalidArgumentError(absl::StrCat(VerdictName(v), ": ", id.status().message()));
    ids.push_back(*std::move(id));
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto queue_or = Queue(job_id);
    if (!queue_or.ok()) return queue_or.status();
    LeaseQueue& leases = (*queue_or)->leases;
    leases.Expire(absl::Now());
    const LeaseQueue::Lease* lease = leases.Held(request.lease_id(), request.worker_id());
    if (lease == nullptr) {
      response.set_accepted(false);  // expired and back in the queue (or never ours)
      return response;
    }
    for (int i = 0; i < request.verdicts_size(); ++i) {
      const PairVerdict& v = request.verdicts(i);
      if (absl::Status s = LeaseQueue::CheckVerdict(*lease, v, ids[i]); !s.ok()) return s;
      rules::Rule rule = v.rule();
      rule.set_id(ids[i]);
      rules.push_back(std::move(rule));
    }
  }
  // Proved again outside the lock: a proof takes a while, and other
  // workers' leases and reports must not wait for it.
  for (int i = 0; i < request.verdicts_size(); ++i) {
    if (rules[i].status() != rules::RULE_STATUS_PROVED) continue;
    if (absl::Status s = ReproveVerdict(request.verdicts(i), request.worker_id(), rules[i]); !s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto queue_or = Queue(job_id);
  if (!queue_or.ok()) return queue_or.status();
  JobQueue& queue = **queue_or;
  const absl::Time now = absl::Now();
  queue.leases.Expire(now);
  const LeaseQueue::Lease* lease = queue.leases.Held(request.lease_id(), request.worker_id());
  if (lease == nullptr) {
    response.set_accepted(false);  // it expired while the proofs ran
    return response;
  }
  const std::string fingerprint = lease->fingerprint;  // the lease may be released below
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  rocksdb::WriteBatch batch;
  for (rules::Rule& rule : rules) {
    StampVerdict(f, job_id, queue, fingerprint, request.worker_id(), now, rule);
    PutRule(f, rule, batch);
  }
  if (request.complete()) batch.Put(f.verified, queue.prefix + fingerprint, rocksdb::Slice());
  rocksdb::WriteOptions wo;
  if (absl::Status s = storage::FromRocks(f.db->Write(wo, &batch), "storing verdicts"); !s.ok()) return s;
  response.set_accepted(true);
  if (!request.complete()) {
    if (request.release()) {
      // Given back unfinished: the class is leased again now, not counted as an expiry.
      if (absl::Status s = queue.leases.Release(request.lease_id()); !s.ok()) return s;
      return response;
    }
    const absl::Time expires = now + absl::Milliseconds(options_.default_lease_ms);
    if (absl::Status s = queue.leases.Renew(request.lease_id(), expires); !s.ok()) return s;
    storage::SetTime(expires, response.mutable_expires_at());
    return response;
  }
  if (absl::Status s = queue.leases.Complete(request.lease_id()); !s.ok()) return s;
  if (queue.leases.verified() == queue.leases.total()) {
    // This report completed the last class: no lease is held any more, so
    // no other report gets here. Deriving and pruning a large job's rules
    // takes minutes: neither this report (whose worker's deadline is
    // seconds) nor leases (other jobs', pollers of this one) wait for it.
    StartFinish(job_id, queue, Progress(queue));
  } else if (now - queue.persisted >= absl::Seconds(1)) {
    // Progress for `taso verify` and stats; the verified markers are the truth.
    if (absl::Status s = PersistProgress(job_id, queue); !s.ok()) return s;
  }
  return response;
}

absl::StatusOr<ReportClassesResponse> RuleStore::ReportClasses(const ReportClassesRequest& request) {
  ReportClassesResponse response;
  for (int i = 0; i < request.reports_size(); ++i) {
    auto reply = ReportVerdicts(request.reports(i));
    if (!reply.ok()) {
      return absl::Status(reply.status().code(),
                          absl::StrCat("report ", i + 1, " of ", request.reports_size(), " (lease ",
                                       request.reports(i).lease_id(), "; the ones before it are stored): ",
                                       reply.status().message()));
    }
    *response.add_reports() = *std::move(reply);
  }
  return response;
}

absl::Status RuleStore::ReproveVerdict(const PairVerdict& verdict, const std::string& worker_id,
                                       rules::Rule& rule) const {
  const std::string name = VerdictName(verdict);
  if (!options_.checker) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, " is reported proved, but this store has no rule checker to prove it again, and takes no proof on trust"));
  }
  // The checker may use the claimed proof to find its own, but nothing the
  // verifier said survives: the check writes status, proof and conditions.
  rules::Rule checked = rule;
  if (absl::Status s = options_.checker(checked); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
  }
  if (checked.status() != rules::RULE_STATUS_PROVED) {
    // Not proved here: not proved in time (a busier machine, another Z3), or
    // refuted, or numerically different. The store's verdict is stored, never
    // the claim. Refusing the report instead would leave the class to be
    // leased, claimed and refused again, stopping every verifier in turn.
    checked.set_status_detail(absl::StrCat("reported proved by verifier ", worker_id,
                                           "; the store's own check: ", checked.status_detail()));
    rule = std::move(checked);
    return absl::OkStatus();
  }
  // The conditions say where a rule holds: a report that widens them (a
  // fact left open that the proof needs) would let the optimizer apply the
  // rule where it is false.
  if (checked.conditions().SerializeAsString() != rule.conditions().SerializeAsString()) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is proved, but its side conditions are not the ones the store's own proof derives (verifier's axiom set ",
        rule.proof().axiom_set_version(), ", the store's ", checked.proof().axiom_set_version(),
        "); nothing of this report was stored"));
  }
  rule = std::move(checked);
  return absl::OkStatus();
}

absl::Status RuleStore::PersistProgress(const std::string& job_id, JobQueue& queue) {
  Verification v;
  v.set_classes_total(queue.leases.total());
  v.set_classes_verified(queue.leases.verified());
  queue.verifying = true;
  queue.persisted = absl::Now();
  return hash_store_->UpdateVerification(job_id, JOB_STATE_VERIFYING, v);
}

absl::Status RuleStore::ForEachRule(const std::function<bool(const rules::Rule&)>& visit, const std::string& after) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  std::unique_ptr<rocksdb::Iterator> it(f.db->NewIterator(rocksdb::ReadOptions(), f.rules));
  rules::Rule rule;
  for (it->Seek(after); it->Valid(); it->Next()) {
    if (!after.empty() && it->key() == rocksdb::Slice(after)) continue;
    if (!rule.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return absl::DataLossError(absl::StrCat("stored rule ", it->key().ToString(), " is corrupt"));
    }
    if (!visit(rule)) break;
  }
  return storage::FromRocks(it->status(), "reading rules");
}

absl::StatusOr<bool> RuleStore::ForEachCandidate(uint64_t index_kinds,
                                                 const std::function<bool(const RuleKinds&)>& accept,
                                                 const std::string& after,
                                                 const std::function<bool(const rules::Rule&)>& visit, int64_t& read) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const OpIndex index(families->db, families->by_op);
  if (!op_index_built_ && index_kinds != 0) {
    auto built = index.Built();
    if (!built.ok()) return built.status();
    op_index_built_ = *built;
  }
  if (index_kinds == 0 || !op_index_built_) {
    absl::Status s = ForEachRule(
        [&](const rules::Rule& rule) {
          ++read;
          return !accept(KindsOf(rule)) || visit(rule);
        },
        after);
    if (!s.ok()) return s;
    return false;
  }
  absl::Status inner;
  absl::Status s = index.ForEachCandidate(index_kinds, accept, after, [&](const std::string& id) {
    auto rule = GetRule(id);
    if (!rule.ok()) {
      inner = rule.status().code() == absl::StatusCode::kNotFound
                  ? absl::DataLossError(absl::StrCat("the operator index names rule ", id, ", which is not stored"))
                  : rule.status();
      return false;
    }
    ++read;
    return visit(*rule);
  });
  if (!s.ok()) return s;
  if (!inner.ok()) return inner;
  return true;
}

absl::StatusOr<ListRulesResponse> RuleStore::ListRules(const ListRulesRequest& request) {
  const int page = request.page_size() <= 0 ? kDefaultPageSize : std::min(request.page_size(), kMaxPageSize);
  auto filter = RuleFilter::Create(request);
  if (!filter.ok()) return filter.status();
  ListRulesResponse response;
  int64_t read = 0;
  auto used_index = ForEachCandidate(
      filter->IndexKinds(), [&](const RuleKinds& kinds) { return filter->KindsPass(kinds); }, request.page_token(),
      [&](const rules::Rule& rule) {
        if (!filter->Matches(rule)) return true;
        if (response.rules_size() == page) {
          response.set_next_page_token(response.rules(page - 1).id());
          return false;
        }
        *response.add_rules() = rule;
        return true;
      },
      read);
  if (!used_index.ok()) return used_index.status();
  response.set_rules_read(read);
  response.set_used_op_index(*used_index);
  return response;
}

absl::StatusOr<MatchRulesResponse> RuleStore::MatchRules(const MatchRulesRequest& request) {
  if (!options_.matcher) {
    return absl::UnimplementedError("this store was started without a rule matcher (taso_rules_db has one)");
  }
  if (request.max_sites() > options_.max_match_sites) {
    return absl::InvalidArgumentError(absl::StrCat("max_sites ", request.max_sites(), " is over this store's limit of ",
                                                   options_.max_match_sites, " (taso_rules_db --max_match_sites)"));
  }
  if (request.graph().nodes_size() > options_.max_match_graph_nodes) {
    return absl::InvalidArgumentError(absl::StrCat("the graph has ", request.graph().nodes_size(),
                                                   " nodes, over this store's limit of ", options_.max_match_graph_nodes,
                                                   " (taso_rules_db --max_match_graph_nodes)"));
  }
  const absl::Time deadline = absl::Now() + options_.match_time_limit;
  ListRulesRequest only_proved = request.filter();
  only_proved.clear_statuses();  // the default: PROVED
  auto filter = RuleFilter::Create(only_proved);
  if (!filter.ok()) return filter.status();
  // A rule can match only if one of its sides uses nothing but operators
  // the graph has; every such rule uses one of them.
  const uint64_t graph_kinds = GraphKinds(request.graph());
  auto fits = [&](const RuleKinds& k) { return filter->KindsPass(k) && CanMatchKinds(k, graph_kinds); };
  const int max_sites = request.max_sites() > 0 ? request.max_sites() : kDefaultMatchSites;
  MatchRulesResponse response;
  std::vector<rules::Rule> chunk;
  absl::Status matched;
  auto flush = [&] {
    if (chunk.empty()) return true;
    auto part = options_.matcher(request.graph(), chunk, max_sites);
    chunk.clear();
    if (!part.ok()) {
      matched = part.status();
      return false;
    }
    MergeMatchResponse(*std::move(part), response);
    return true;
  };
  int64_t read = 0;
  auto used_index = ForEachCandidate(graph_kinds, fits, "", [&](const rules::Rule& rule) {
    if (absl::Now() >= deadline) {
      matched = absl::ResourceExhaustedError(absl::StrCat(
          "MatchRules ran past this store's limit of ", absl::FormatDuration(options_.match_time_limit),
          " (taso_rules_db --match_time_limit_s): narrow the filter or send a smaller graph"));
      return false;
    }
    if (!filter->Matches(rule)) return true;
    chunk.push_back(rule);
    return chunk.size() < kMatchChunk || flush();
  }, read);
  if (!used_index.ok()) return used_index.status();
  if (matched.ok()) flush();
  if (!matched.ok()) return matched;
  response.set_rules_read(read);  // the matcher's parts leave these unset
  response.set_used_op_index(*used_index);
  return response;
}

absl::Status RuleStore::BuildOpIndex(const std::atomic<bool>* stop) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  const OpIndex index(f.db, f.by_op);
  auto built = index.Built();
  if (!built.ok()) return built.status();
  auto cursor = index.Cursor();
  if (!cursor.ok()) return cursor.status();
  std::string after = *cursor;
  const int chunk = std::max(1, options_.op_index_chunk);
  while (!*built) {
    rocksdb::WriteBatch batch;
    int n = 0;
    std::string last;
    absl::Status s = ForEachRule(
        [&](const rules::Rule& rule) {
          index.Add(rule, batch);
          last = rule.id();
          return ++n < chunk;
        },
        after);
    if (!s.ok()) return s;
    if (n < chunk) {
      index.MarkBuilt(batch);
      *built = true;
    } else {
      index.SetCursor(last, batch);
      after = last;
    }
    s = storage::FromRocks(f.db->Write(rocksdb::WriteOptions(), &batch), "building the operator index");
    if (!s.ok()) return s;
    if (!*built && stop != nullptr && *stop) return absl::OkStatus();
  }
  op_index_built_ = true;
  return absl::OkStatus();
}

absl::StatusOr<rules::Rule> RuleStore::GetRule(const std::string& id) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  std::string value;
  rocksdb::Status s = f.db->Get(rocksdb::ReadOptions(), f.rules, id, &value);
  if (s.IsNotFound()) return absl::NotFoundError(absl::StrCat("no rule '", id, "'"));
  if (!s.ok()) return storage::FromRocks(s, "reading a rule");
  rules::Rule rule;
  if (!rule.ParseFromString(value)) return absl::DataLossError(absl::StrCat("stored rule ", id, " is corrupt"));
  return rule;
}

absl::Status RuleStore::AdmitRule(int index, rules::Rule& rule) const {
  auto computed = RuleId(rule);
  if (!computed.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("rule ", index, ": ", computed.status().message()));
  }
  // Ids name content: a rule under another rule's id would replace it.
  if (!rule.id().empty() && rule.id() != *computed) {
    return absl::InvalidArgumentError(absl::StrCat("rule ", index, ": id ", rule.id(), " is not the id of its graphs (",
                                                   *computed, "); leave the id empty or use the one GetRule returns"));
  }
  rule.set_id(*computed);
  const std::string name = absl::StrCat("rule ", index, " (", rule.id(), ")");
  if (rule.status() == rules::RULE_STATUS_PRUNED) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is submitted as pruned, which only the store sets when it prunes a job: submit it as proved"));
  }
  if (rule.status() != rules::RULE_STATUS_PROVED) return absl::OkStatus();
  if (!options_.checker) {
    return absl::PermissionDeniedError(absl::StrCat(
        name, " is submitted as proved, but this store has no rule checker to prove it again: submit it as candidate"));
  }
  // Nothing the client said about the proof survives: the check writes it.
  rule.set_status(rules::RULE_STATUS_CANDIDATE);
  rule.clear_status_detail();
  rule.clear_proof();
  if (absl::Status s = options_.checker(rule); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat(name, ": ", s.message()));
  }
  if (rule.status() != rules::RULE_STATUS_PROVED) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is submitted as proved, but the store's own check did not prove it (",
        rules::RuleStatus_Name(rule.status()), ": ", rule.status_detail(),
        "); only rules the store proves are stored as proved: submit it with another status"));
  }
  rule.mutable_provenance()->set_verifier_worker_id(kStoreCheckerId);
  return absl::OkStatus();
}

absl::StatusOr<PutRulesResponse> RuleStore::PutRules(const PutRulesRequest& request) {
  // Checked before the lock: a proof takes a while, and verifiers' leases and
  // reports must not wait for it.
  std::vector<rules::Rule> rules(request.rules().begin(), request.rules().end());
  for (size_t i = 0; i < rules.size(); ++i) {
    if (absl::Status s = AdmitRule(static_cast<int>(i), rules[i]); !s.ok()) return s;
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  rocksdb::WriteBatch batch;
  PutRulesResponse response;
  const absl::Time now = absl::Now();
  for (rules::Rule& rule : rules) {
    std::string existing;
    rocksdb::Status s = f.db->Get(rocksdb::ReadOptions(), f.rules, rule.id(), &existing);
    rules::Rule stored;
    if (s.ok() && stored.ParseFromString(existing)) {
      if (rule.revision() != 0 && rule.revision() != stored.revision()) {
        return absl::AbortedError(absl::StrCat("rule ", rule.id(), " changed since it was read (revision ",
                                               stored.revision(), ", request has ", rule.revision(),
                                               "): read it again and retry"));
      }
      rule.set_revision(stored.revision() + 1);
      response.set_updated(response.updated() + 1);
    } else if (s.ok() || s.IsNotFound()) {
      rule.set_revision(1);
      response.set_created(response.created() + 1);
    } else {
      return storage::FromRocks(s, "reading a rule");
    }
    storage::SetTime(now, rule.mutable_provenance()->mutable_status_changed_at());
    if (!rule.provenance().has_discovered_at()) {
      storage::SetTime(now, rule.mutable_provenance()->mutable_discovered_at());
    }
    response.add_ids(rule.id());
    PutRule(f, rule, batch);
  }
  absl::Status stored = storage::FromRocks(f.db->Write(rocksdb::WriteOptions(), &batch), "storing rules");
  if (!stored.ok()) return stored;
  return response;
}

absl::StatusOr<StatsResponse> RuleStore::Stats(const StatsRequest& request) {
  std::map<int, int64_t> counts;
  absl::Status s = ForEachRule([&](const rules::Rule& r) {
    if (request.job_id().empty() || r.provenance().job_id() == request.job_id()) ++counts[r.status()];
    return true;
  });
  if (!s.ok()) return s;
  StatsResponse response;
  for (const auto& [status, n] : counts) {
    auto* c = response.add_rules_by_status();
    c->set_status(static_cast<rules::RuleStatus>(status));
    c->set_count(n);
  }
  ListJobsRequest jobs_request;
  jobs_request.set_page_size(1000);
  auto jobs = hash_store_->ListJobs(jobs_request);
  if (!jobs.ok()) return jobs.status();
  std::lock_guard<std::mutex> lock(mu_);
  for (const Job& job : jobs->jobs()) {
    if (!request.job_id().empty() && job.id() != request.job_id()) continue;
    response.set_graphs(response.graphs() + job.graphs());
    response.set_candidate_classes(response.candidate_classes() + job.candidate_classes());
    auto q = queues_.find(job.id());
    if (q != queues_.end()) {
      response.set_classes_leased(response.classes_leased() + q->second->leases.leased());
      response.set_classes_pending(response.classes_pending() + q->second->leases.pending());
    } else if (job.state() == JOB_STATE_GENERATED) {
      response.set_classes_pending(response.classes_pending() + job.candidate_classes());
    }
  }
  return response;
}

}  // namespace taso::rules_db
