// For the rule store's tests: what a verifier worker does with one lease,
// in-process, with a real prover (verifier/worker.cc does it over gRPC).
#ifndef TASO_RULES_DB_VERIFY_TEST_UTIL_H_
#define TASO_RULES_DB_VERIFY_TEST_UTIL_H_

#include <string>

#include "gtest/gtest.h"
#include "proto/rules_db.pb.h"
#include "records/spec.h"
#include "rules_db/test_util.h"
#include "verifier/candidate.h"
#include "verifier/prover.h"

namespace taso::rules_db {

// Every pair of the lease gets a verdict (the re-check's rejection, or a
// proof attempt), reported complete. The job's spec is SmallSpec(max_ops).
inline ReportVerdictsRequest Verify(const Lease& lease, const std::string& worker, verifier::Prover& prover,
                                    int max_ops) {
  auto spec = records::SpecFromProto(SmallSpec(max_ops));
  ReportVerdictsRequest report;
  report.set_lease_id(lease.lease_id());
  report.set_worker_id(worker);
  report.set_complete(true);
  for (const CandidatePair& pair : lease.candidate_class().pairs()) {
    auto graphs = verifier::DecodeCandidate(*spec, lease.candidate_class(), pair);
    EXPECT_TRUE(graphs.ok()) << graphs.status();
    if (!graphs.ok()) continue;
    rules::Rule rule = verifier::RuleFromGraphs(*graphs);
    if (pair.rejected()) {
      rule.set_status(rules::RULE_STATUS_REJECTED_PRECHECK);
      rule.set_status_detail(pair.reason());
    } else {
      auto result = prover.Prove(graphs->source, graphs->target, graphs->outputs);
      EXPECT_TRUE(result.ok()) << result.status();
      if (result.ok()) verifier::ApplyProofResult(*result, "z3", prover.axiom_set_version(), rule);
    }
    PairVerdict* v = report.add_verdicts();
    v->set_source_member(pair.source_member());
    v->set_target_member(pair.target_member());
    *v->mutable_rule() = rule;
  }
  return report;
}

// One class of job "j" for `worker`.
inline LeaseCandidatesRequest LeaseRequest(const std::string& worker, int64_t ms = 60000) {
  LeaseCandidatesRequest r;
  r.set_worker_id(worker);
  r.set_job_id("j");
  r.set_max_classes(1);
  r.set_lease_duration_ms(ms);
  return r;
}

}  // namespace taso::rules_db

#endif  // TASO_RULES_DB_VERIFY_TEST_UTIL_H_
