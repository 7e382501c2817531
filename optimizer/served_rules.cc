#include "optimizer/served_rules.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/grpc_status.h"
#include "optimizer/rule_source.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::optimizer {
namespace {

// Every finished job (verified and pruned) of every shard as
// "shard/id/updated" lines: changes when a job finishes (or is verified
// again), not while one is generating or verifying, when its rules are not
// final.
absl::StatusOr<std::string> JobsVersion(const std::string& address) {
  std::string version;
  for (absl::string_view one : absl::StrSplit(address, ',', absl::SkipEmpty())) {
    auto stub = rules_db::HashStore::NewStub(net::NewChannel(std::string(one), grpc::ChannelArguments()));
    rules_db::ListJobsRequest request;
    request.set_page_size(1000);
    while (true) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      rules_db::ListJobsResponse page;
      absl::Status s = net::FromGrpc(stub->ListJobs(&context, request, &page), absl::StrCat("rule database ", one));
      if (!s.ok()) return s;
      for (const rules_db::Job& job : page.jobs()) {
        if (job.state() != rules_db::JOB_STATE_DONE) continue;
        absl::StrAppend(&version, one, "/", job.id(), "/", job.updated_at().seconds(), ".", job.updated_at().nanos(),
                        "\n");
      }
      if (page.next_page_token().empty()) break;
      request.set_page_token(page.next_page_token());
    }
  }
  return version;
}

}  // namespace

ServedRules::StoreReader StoreRulesReader(const std::string& address, int max_ops, int64_t max_rules) {
  return {[address] { return JobsVersion(address); },
          [address, max_ops, max_rules] { return FetchRules(address, max_ops, max_rules); }};
}

ServedRules::ServedRules(RuleSet fixed) : rules_(std::make_shared<const RuleSet>(std::move(fixed))) {}

absl::StatusOr<std::unique_ptr<ServedRules>> ServedRules::FromStores(StoreReader reader, absl::Duration check_every,
                                                                     Log log) {
  std::unique_ptr<ServedRules> served(new ServedRules());
  served->reader_ = std::move(reader);
  served->check_every_ = check_every;
  served->log_ = std::move(log);
  auto version = served->reader_.jobs_version();
  if (!version.ok()) return version.status();
  if (absl::Status s = served->Refresh(*version); !s.ok()) return s;
  served->last_check_ = absl::Now();
  return served;
}

absl::Status ServedRules::Refresh(const std::string& version) {
  auto fetched = reader_.fetch();
  if (absl::IsResourceExhausted(fetched.status())) {
    // Too many to load until the job is pruned; its pruning changes the jobs.
    version_ = version;
    if (rules_ != nullptr) return fetched.status();
    if (log_) log_(absl::StrCat("warning: ", fetched.status().message(), "; serving the built-in set meanwhile"));
    fetched = LoadBuiltinRules();
  }
  if (!fetched.ok()) return fetched.status();
  if (fetched->provenance.proved_rules == 0) {
    // Nothing verified yet: the set every user gets without a store.
    auto builtin = LoadBuiltinRules();
    if (!builtin.ok()) return builtin.status();
    fetched = std::move(builtin);
  }
  if (log_) log_(absl::StrCat("rules: ", DescribeRules(fetched->provenance), " (", fetched->rewrites.size(),
                              " rewrites)"));
  rules_ = std::make_shared<const RuleSet>(std::move(*fetched));
  version_ = version;
  return absl::OkStatus();
}

std::shared_ptr<const RuleSet> ServedRules::Current() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!reader_.jobs_version || absl::Now() - last_check_ < check_every_) return rules_;
  last_check_ = absl::Now();
  auto version = reader_.jobs_version();
  if (!version.ok()) {
    if (log_) log_(absl::StrCat("warning: keeping the rules in hand: ", version.status().message()));
    return rules_;
  }
  if (*version == version_) return rules_;
  if (absl::Status s = Refresh(*version); !s.ok() && log_) {
    log_(absl::StrCat("warning: the stores' jobs changed but their rules could not be read; keeping the rules in "
                      "hand: ", s.message()));
  }
  return rules_;
}

}  // namespace taso::optimizer
