// RuleStore's end of classes no verifier got through: a class whose lease
// expired RuleStoreOptions::max_lease_expiries times is not leased again
// (lease_queue.h) but given up here, with a verdict for every pair of it
// that has none, so that the job finishes and says what was not proved.
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "rules_db/rule_store.h"
#include "storage/rocks_status.h"

namespace taso::rules_db {
namespace {

bool HasVerdict(const rules::Rule& rule) {
  return rule.status() != rules::RULE_STATUS_UNSPECIFIED && rule.status() != rules::RULE_STATUS_CANDIDATE;
}

}  // namespace

absl::Status RuleStore::GiveUpClasses(const std::string& job_id, const JobQueue& queue,
                                      const std::vector<std::pair<std::string, int>>& classes, size_t& done) {
  auto families = OwnFamilies();
  if (!families.ok()) return families.status();
  const Families& f = *families;
  const absl::Time now = absl::Now();
  for (const auto& [fp, expiries] : classes) {
    auto c = hash_store_->GetCandidateClass(job_id, fp);
    if (!c.ok()) return c.status();
    rocksdb::WriteBatch batch;
    for (const CandidatePair& pair : c->pairs()) {
      // Pairs of a form leased elsewhere get their verdicts when the job
      // finishes, from that form's first pair (as if this class were reported).
      if (!Leased(pair)) continue;
      auto rule = options_.pair_rule(queue.spec, *c, pair);
      if (!rule.ok()) {
        return absl::DataLossError(absl::StrCat("class ", absl::BytesToHexString(fp), ": ", rule.status().message()));
      }
      auto id = RuleId(*rule);
      if (!id.ok()) return id.status();
      rule->set_id(*id);
      // A verdict a partial report stored stays; so does a proof another
      // job found for the same rule (a proved rule is never demoted).
      if (auto stored = GetRule(*id); stored.ok()) {
        if (HasVerdict(*stored) && (stored->provenance().job_id() == job_id || IsProvedStatus(stored->status()))) continue;
      } else if (!absl::IsNotFound(stored.status())) {
        return stored.status();
      }
      if (pair.rejected()) {
        rule->set_status(rules::RULE_STATUS_REJECTED_PRECHECK);
        rule->set_status_detail(pair.reason());
      } else {
        rule->set_status(rules::RULE_STATUS_TIMEOUT);
        rule->set_status_detail(absl::StrCat(
            "not proved: the lease of its class expired ", expiries,
            " times without a report (each verifier holding it died, stalled in a proof or was stopped), so the "
            "store gave the class up (taso_rules_db --max_lease_expiries)"));
      }
      StampVerdict(f, job_id, queue, fp, kStoreCheckerId, now, *rule);
      PutRule(f, *rule, batch);
    }
    batch.Put(f.verified, queue.prefix + fp, std::string(1, static_cast<char>(ClassEnd::kGivenUp)));
    if (absl::Status s = storage::FromRocks(f.db->Write(rocksdb::WriteOptions(), &batch), "storing a given-up class");
        !s.ok()) {
      return s;
    }
    ++done;
    if (options_.log) {
      options_.log(absl::StrCat("job ", job_id, ": gave up class ", absl::BytesToHexString(fp),
                                " after its lease expired ", expiries, " times; its unreported pairs are stored TIMEOUT"));
    }
  }
  return absl::OkStatus();
}

}  // namespace taso::rules_db
