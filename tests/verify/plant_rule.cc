// A client that skips the proof, for tests of the rule database's trust:
//   plant_rule ADDR put SEXPR         PutRules the rule as PROVED with a made-up proof
//   plant_rule ADDR report SEXPR JOB  lease a class of JOB, report the rule as its first pair's PROVED verdict
//   plant_rule ADDR widen JOB         lease a class of JOB, prove its first pair as a verifier would, and report
//                                     the proof with one of its side conditions widened to "any value"
// Exit 0 if the store took it, 1 if it refused (the reason on stderr), 2 for
// bad arguments or nothing to lease, 3 if the store is unreachable.
#include <chrono>
#include <iostream>
#include <optional>
#include <string>

#include "core/proof_signature.h"
#include "core/rule_sexpr.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/security_flags.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/spec.h"
#include "verifier/candidate.h"
#include "verifier/prover.h"

namespace {

constexpr int kLeaseMs = 1000;  // short, so a real verifier gets the class soon after

int Outcome(const grpc::Status& s, const std::string& address) {
  if (s.ok()) return 0;
  const absl::Status status = taso::net::FromGrpc(s, "store " + address);
  std::cerr << "refused: " << absl::StatusCodeToString(status.code()) << ": " << status.message() << "\n";
  return status.code() == absl::StatusCode::kUnavailable ? 3 : 1;
}

std::unique_ptr<grpc::ClientContext> Context() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  return context;
}

// The first pair of `lease`, proved here, with the first parameter of its
// first recorded signature opened to a fact variable: a proof that would hold
// "whatever that value is", which is not what was proved. Empty on failure.
std::optional<taso::rules::Rule> Widened(const std::string& address, const std::string& job_id,
                                         const taso::rules_db::Lease& lease) {
  auto jobs = taso::rules_db::HashStore::NewStub(taso::net::NewChannel(address));
  taso::rules_db::GetJobRequest get;
  get.set_job_id(job_id);
  taso::rules_db::Job job;
  if (grpc::Status s = jobs->GetJob(Context().get(), get, &job); !s.ok()) return std::nullopt;
  auto spec = taso::records::SpecFromProto(job.spec());
  if (!spec.ok()) return std::nullopt;
  const taso::rules_db::CandidateClass& c = lease.candidate_class();
  auto graphs = taso::verifier::DecodeCandidate(*spec, c, c.pairs(0));
  auto prover = taso::verifier::Prover::Create();
  if (!graphs.ok() || !prover.ok()) return std::nullopt;
  auto proof = (*prover)->Prove(graphs->source, graphs->target, graphs->outputs);
  if (!proof.ok() || proof->outcome != taso::verifier::ProofOutcome::kProved) return std::nullopt;
  taso::rules::Rule rule = taso::verifier::RuleFromGraphs(*graphs);
  taso::verifier::ApplyProofResult(*proof, taso::verifier::SolverName(), (*prover)->axiom_set_version(), rule);
  taso::rules::SideConditions* conditions = rule.mutable_conditions();
  if (conditions->source_size() == 0 || conditions->source(0).signatures_size() == 0) return std::nullopt;
  taso::rules::ProofSignature* sig = conditions->mutable_source(0)->mutable_signatures(0);
  if (sig->params_size() == 0) sig->add_params(0);
  // A variable of its own (another one, should the proof have opened this one).
  sig->set_params(0, sig->params(0) == taso::FactVariable(7) ? taso::FactVariable(8) : taso::FactVariable(7));
  return rule;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[2] : "";
  if (!((argc == 4 && mode == "put") || (argc == 5 && mode == "report") || (argc == 4 && mode == "widen"))) {
    std::cerr << "usage: plant_rule ADDR put SEXPR | plant_rule ADDR report SEXPR JOB | plant_rule ADDR widen JOB\n";
    return 2;
  }
  const std::string address = argv[1];
  if (absl::Status s = taso::net::ConfigureClientsFromFlags(); !s.ok()) {  // TASO_TLS_CA, TASO_TOKEN_FILE
    std::cerr << "error: " << s.message() << "\n";
    return 2;
  }
  auto parsed = taso::RulesFromSexpr(mode == "widen" ? "(relu ?x@2_4)=>(relu ?x@2_4)" : argv[3]);
  if (!parsed.ok() || parsed->size() != 1) {
    std::cerr << "error: " << (parsed.ok() ? "give exactly one rule" : parsed.status().message()) << "\n";
    return 2;
  }
  taso::rules::Rule rule = (*parsed)[0];
  rule.set_status(taso::rules::RULE_STATUS_PROVED);
  rule.set_status_detail("trust me");
  rule.mutable_proof()->add_axioms_used("forged");
  rule.mutable_provenance()->set_job_id("planted");
  auto stub = taso::rules_db::RuleDb::NewStub(taso::net::NewChannel(address));
  if (mode == "put") {
    taso::rules_db::PutRulesRequest put;
    *put.add_rules() = rule;
    taso::rules_db::PutRulesResponse response;
    const int code = Outcome(stub->PutRules(Context().get(), put, &response), address);
    if (code == 0) std::cout << "accepted " << response.ids(0) << "\n";
    return code;
  }
  taso::rules_db::LeaseCandidatesRequest lease_request;
  lease_request.set_worker_id("planter");
  const std::string job_id = mode == "widen" ? argv[3] : argv[4];
  lease_request.set_job_id(job_id);
  lease_request.set_max_classes(1);
  lease_request.set_lease_duration_ms(kLeaseMs);
  taso::rules_db::LeaseCandidatesResponse leases;
  if (grpc::Status s = stub->LeaseCandidates(Context().get(), lease_request, &leases); !s.ok()) {
    return Outcome(s, address);
  }
  if (leases.leases().empty() || leases.leases(0).candidate_class().pairs().empty()) {
    std::cerr << "error: job " << job_id << " has no class to lease\n";
    return 2;
  }
  const taso::rules_db::Lease& lease = leases.leases(0);
  taso::rules_db::ReportVerdictsRequest report;
  report.set_lease_id(lease.lease_id());
  report.set_worker_id("planter");
  report.set_complete(true);
  taso::rules_db::PairVerdict* verdict = report.add_verdicts();
  verdict->set_source_member(lease.candidate_class().pairs(0).source_member());
  verdict->set_target_member(lease.candidate_class().pairs(0).target_member());
  if (mode == "widen") {
    std::optional<taso::rules::Rule> widened = Widened(address, job_id, lease);
    if (!widened) {
      std::cerr << "error: the leased class's first pair could not be proved here\n";
      return 2;
    }
    rule = *widened;
  }
  *verdict->mutable_rule() = rule;
  taso::rules_db::ReportVerdictsResponse response;
  const int code = Outcome(stub->ReportVerdicts(Context().get(), report, &response), address);
  if (code == 0 && !response.accepted()) {
    std::cerr << "refused: the lease expired before the report\n";
    return 1;
  }
  if (code == 0) std::cout << "accepted\n";
  return code;
}
