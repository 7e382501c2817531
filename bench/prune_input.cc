// A synthetic input for `taso rules prune` at scale, when no real large job
// is at hand: a store under --db (DIR/store-0) holding a verified job of
// --rules random proved rules (verifier/random_rules.h: up to --max-ops
// operators a side). The rules are not true equalities and are stored as
// proved through a checker that says so: only the pruner, which never asks
// whether a rule holds, may read this store.
//   bazel run -c opt //bench:prune_input -- --db DIR --rules 2800000
//   /usr/bin/time -v taso rules prune --db DIR
#include <filesystem>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "google/protobuf/text_format.h"
#include "proto/rules_db.pb.h"
#include "records/spec.h"
#include "rules_db/hash_store.h"
#include "rules_db/rule_store.h"
#include "verifier/random_rules.h"

ABSL_FLAG(std::string, db, "", "directory to create (its store-0 holds the job)");
ABSL_FLAG(int64_t, rules, 100000, "random proved rules to store");
ABSL_FLAG(int32_t, max_ops, 4, "operators per side, at most");
ABSL_FLAG(uint32_t, seed, 1, "random seed");
ABSL_FLAG(std::string, job, "synthetic", "job id");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::string db = absl::GetFlag(FLAGS_db);
  if (db.empty()) {
    std::cerr << "--db DIR is required\n";
    return 2;
  }
  std::error_code made;
  std::filesystem::create_directories(db, made);
  taso::rules_db::HashStoreOptions options;
  options.path = db + "/store-0";
  auto store = taso::rules_db::GraphHashStore::Open(options);
  if (!store.ok()) {
    std::cerr << store.status() << "\n";
    return 1;
  }
  const std::string job_id = absl::GetFlag(FLAGS_job);
  taso::rules_db::CreateJobRequest create;
  create.set_job_id(job_id);
  create.set_num_shards(1);
  if (!google::protobuf::TextFormat::ParseFromString(taso::records::DefaultSpecText(), create.mutable_spec())) {
    std::cerr << "the default spec does not parse\n";
    return 1;
  }
  create.mutable_spec()->set_max_ops(absl::GetFlag(FLAGS_max_ops));
  if (auto job = (*store)->CreateJob(create); !job.ok()) {
    std::cerr << job.status() << "\n";
    return 1;
  }
  taso::rules_db::RuleStoreOptions rule_options;
  // The synthetic rules are proved by fiat (see above).
  rule_options.checker = [](taso::rules::Rule& rule) {
    rule.set_status(taso::rules::RULE_STATUS_PROVED);
    return absl::OkStatus();
  };
  taso::rules_db::RuleStore rules(store->get(), rule_options);
  taso::verifier::RandomRules random(absl::GetFlag(FLAGS_seed), absl::GetFlag(FLAGS_max_ops), /*all_proved=*/true);
  const int64_t total = absl::GetFlag(FLAGS_rules);
  for (int64_t done = 0; done < total;) {
    taso::rules_db::PutRulesRequest put;
    for (int i = 0; i < 1000 && done < total; ++i, ++done) {
      taso::rules::Rule r = random.Next(static_cast<int>(done));
      r.clear_id();
      r.mutable_provenance()->set_job_id(job_id);
      *put.add_rules() = std::move(r);
    }
    if (auto stored = rules.PutRules(put); !stored.ok()) {
      std::cerr << stored.status() << "\n";
      return 1;
    }
  }
  taso::rules_db::Verification v;
  v.set_rules_proved(total);
  v.set_note("synthetic: random rules, not pruned");
  if (absl::Status s = (*store)->UpdateVerification(job_id, taso::rules_db::JOB_STATE_DONE, v); !s.ok()) {
    std::cerr << s << "\n";
    return 1;
  }
  std::cout << "stored " << total << " random proved rules as job " << job_id << " in " << options.path << "\n";
  return 0;
}
