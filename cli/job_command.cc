#include "cli/job_command.h"

#include <chrono>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/job_spec.h"
#include "cluster/job_states.h"
#include "cluster/store_set.h"
#include "core/json_text.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::cli {
namespace {

class Job {
 public:
  Job(const JobOptions& options, std::ostream& out, std::ostream& err) : options_(options), out_(out), err_(err) {}

  int Run() {
    const std::string& c = options_.subcommand;
    if (c != "create" && c != "status" && c != "cancel") {
      return Fail(2, absl::StrCat("unknown subcommand '", c, "': use create, status or cancel"));
    }
    if (options_.store.empty()) return Fail(2, "--store is required: every store of the job, comma-separated");
    if (c != "create" && options_.job_id.empty()) return Fail(2, "--job ID is required");
    auto stores = cluster::StoreSet::Open(options_.store, "", "");
    if (!stores.ok()) return FailStatus(stores.status());
    stores_ = std::move(*stores);
    for (const records::StoreShard& shard : stores_->shards()) {
      stubs_.push_back(rules_db::HashStore::NewStub(shard.channel));
    }
    if (c == "create") return Create();
    if (c == "cancel") {
      for (size_t i = 0; i < stubs_.size(); ++i) {
        rules_db::CancelJobRequest request;
        request.set_job_id(options_.job_id);
        rules_db::Job job;
        if (auto s = Rpc(i, [&](grpc::ClientContext* ctx) { return stubs_[i]->CancelJob(ctx, request, &job); });
            !s.ok()) {
          return FailStatus(s);
        }
      }
    }
    return Status();
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso job: " << message << "\n";
    return code;
  }
  int FailStatus(const absl::Status& s) {
    const bool bad = s.code() == absl::StatusCode::kNotFound || s.code() == absl::StatusCode::kInvalidArgument ||
                     s.code() == absl::StatusCode::kAlreadyExists;
    return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : bad ? 2 : 1, std::string(s.message()));
  }

  template <typename Call>
  absl::Status Rpc(size_t i, Call call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    return net::FromGrpc(call(&context), "store " + stores_->shards()[i].address);
  }

  int Create() {
    auto spec = BuildJobSpec(options_.spec_path, options_.max_ops, options_.shards);
    if (!spec.ok()) return FailStatus(spec.status());
    rules_db::CreateJobRequest request;
    request.set_job_id(JobIdFor(options_.job_id, *spec, options_.shards));
    *request.mutable_spec() = *spec;
    request.set_num_shards(options_.shards);
    rules_db::Job job;
    for (size_t i = 0; i < stubs_.size(); ++i) {
      if (auto s = Rpc(i, [&](grpc::ClientContext* ctx) { return stubs_[i]->CreateJob(ctx, request, &job); });
          !s.ok()) {
        return FailStatus(s);
      }
    }
    std::string text;
    google::protobuf::TextFormat::PrintToString(*spec, &text);
    if (options_.json) {
      out_ << JsonLine(Json{{"job", job.id()},
                            {"shards", job.num_shards()},
                            {"stores", stores_->size()},
                            {"spec", text}})
           << "\n";
      return 0;
    }
    out_ << "job " << job.id() << ": " << job.num_shards() << " shard(s) over " << stores_->size() << " store(s)\n"
         << "spec:\n" << text
         << "run shards with: taso generate --job " << job.id() << " --shards-here LIST --store "
         << absl::StrJoin(stores_->addresses(), ",") << "\n";
    return 0;
  }

  // Every store's view, merged (cluster/job_states.h): a shard is done when
  // every store has it done; the job is generated when every store has
  // finished its slice.
  int Status() {
    auto fetched = cluster::FetchJobViews(stores_->shards(), options_.job_id, absl::Seconds(30));
    if (!fetched.ok()) return FailStatus(fetched.status());
    const std::vector<rules_db::Job>& views = *fetched;
    const cluster::MergedJobStates merged = cluster::MergeJobStates(views);
    const int shards = merged.shards;
    const std::vector<int>& done = merged.done;
    const std::vector<int>& pending = merged.pending;
    const bool complete = merged.complete;
    std::vector<std::string> states;
    for (rules_db::JobState state : merged.states) states.push_back(rules_db::JobState_Name(state));
    std::string text;
    google::protobuf::TextFormat::PrintToString(views[0].spec(), &text);
    if (options_.json) {
      Json store_states = Json::array();
      for (const std::string& s : states) store_states.push_back(s);
      out_ << JsonLine(Json{{"job", options_.job_id},
                            {"shards", shards},
                            {"shards_done", done},
                            {"shards_pending", pending},
                            {"store_states", store_states},
                            {"complete", complete},
                            {"spec", text}})
           << "\n";
      return 0;
    }
    out_ << "job " << options_.job_id << ": " << (complete ? "complete" : "incomplete") << ", shards done "
         << done.size() << "/" << shards << (pending.empty() ? "" : " (pending: " + absl::StrJoin(pending, ",") + ")")
         << "\n  stores (by index): " << absl::StrJoin(states, ", ") << "\nspec:\n" << text;
    return 0;
  }

  const JobOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<cluster::StoreSet> stores_;
  std::vector<std::unique_ptr<rules_db::HashStore::Stub>> stubs_;
};

}  // namespace

int RunJob(const JobOptions& options, std::ostream& out, std::ostream& err) {
  Job job(options, out, err);
  return job.Run();
}

}  // namespace taso::cli
