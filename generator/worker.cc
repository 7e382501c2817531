#include "generator/worker.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "generator/enumerator.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "net/retry.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/packed_records.h"
#include "records/spec.h"
#include "records/store_shards.h"

namespace taso::generator {
namespace {

using rules_db::HashStore;

bool Retryable(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kCancelled:
      return true;
    default:
      return false;
  }
}

struct Store {
  std::string address;
  std::unique_ptr<HashStore::Stub> stub;
  int64_t sequence = 0;
  std::unique_ptr<grpc::ClientContext> context;
  rules_db::StreamAck ack;
  std::unique_ptr<grpc::ClientWriter<rules_db::GraphBatch>> writer;
  std::string buffer;
  std::string Name() const { return "store " + address; }
};

class StreamingSink : public GraphSink {
 public:
  StreamingSink(const WorkerOptions& options, std::vector<Store>& stores, int64_t enumerated_before)
      : options_(options), stores_(stores), enumerated_before_(enumerated_before) {
    started_ = absl::Now();
    last_report_ = started_;
  }

  void OnGraph(const Fingerprint& fingerprint, std::string_view encoding, int) override {
    std::string bytes = fingerprint.ToBytes();
    Store& store = stores_[records::StoreShardFor(bytes, static_cast<int>(stores_.size()))];
    records::AppendPackedRecord(bytes, encoding, store.buffer);
    ++buffered_;
    ++graphs_;
  }

  bool OnCheckpoint(int64_t next_cursor, double done_fraction) override {
    fraction_ = done_fraction;
    if (options_.counters) options_.counters->done_fraction = done_fraction;
    if (buffered_ >= options_.batch_records) {
      if (!Flush(next_cursor)) return false;
    }
    if (absl::Now() - last_report_ >= options_.progress_interval) {
      last_report_ = absl::Now();
      if (absl::Status s = Report(false); !s.ok()) {
        error_ = s;
        return false;
      }
    }
    return true;
  }

  // Sends every buffer as one batch per store, each with the cursor.
  bool Flush(int64_t cursor) {
    for (size_t index = 0; index < stores_.size(); ++index) {
      Store& store = stores_[index];
      rules_db::GraphBatch batch;
      batch.set_store_index(static_cast<int>(index));
      batch.set_store_count(static_cast<int>(stores_.size()));
      batch.set_job_id(options_.job_id);
      batch.set_shard(options_.shard);
      batch.set_sequence(++store.sequence);
      batch.set_resume_cursor(cursor);
      // By bucket, the store writes each bucket's records at once
      // (packed_records.h); the buffer keeps its memory for the next batch.
      if (absl::Status s = records::GroupPackedRecordsInto(store.buffer, *batch.mutable_packed()); !s.ok()) {
        error_ = s;
        return false;
      }
      store.buffer.clear();
      if (!store.writer->Write(batch)) {
        error_ = absl::UnavailableError(absl::StrCat(store.Name(), " closed the stream"));
        return false;
      }
      if (options_.counters) ++options_.counters->batches_sent;
    }
    if (options_.counters) options_.counters->records_sent += buffered_;
    buffered_ = 0;
    return true;
  }

  absl::Status Report(bool done) {
    double seconds = absl::ToDoubleSeconds(absl::Now() - started_);
    for (Store& store : stores_) {
      rules_db::ProgressReport report;
      report.set_job_id(options_.job_id);
      report.set_shard(options_.shard);
      report.set_graphs_enumerated(enumerated_before_ + graphs_);
      report.set_graphs_emitted(enumerated_before_ + graphs_);
      report.set_done_fraction(done ? 1.0 : fraction_);
      report.set_graphs_per_second(seconds > 0 ? graphs_ / seconds : 0);
      report.set_done(done);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      rules_db::ProgressAck ack;
      absl::Status s = net::FromGrpc(store.stub->ReportProgress(&context, report, &ack), store.Name());
      if (!s.ok()) return s;
      if (ack.cancel()) return absl::CancelledError(absl::StrCat("job ", options_.job_id, " was cancelled"));
    }
    return absl::OkStatus();
  }

  const absl::Status& error() const { return error_; }
  int64_t graphs() const { return graphs_; }

 private:
  const WorkerOptions& options_;
  std::vector<Store>& stores_;
  int64_t enumerated_before_;
  int64_t buffered_ = 0;
  int64_t graphs_ = 0;
  double fraction_ = 0;
  absl::Time started_, last_report_;
  absl::Status error_;
};

class Worker {
 public:
  explicit Worker(const WorkerOptions& options) : options_(options) {}

  absl::Status Run() {
    if (options_.stores.empty()) return absl::InvalidArgumentError("no store address given");
    grpc::ChannelArguments args;
    args.SetMaxSendMessageSize(64 << 20);
    args.SetMaxReceiveMessageSize(64 << 20);
    net::RetryPolicy policy;
    policy.retry_for = options_.retry_for;
    policy.retryable = Retryable;
    policy.on_retry = [this](const absl::Status& s, absl::Duration backoff) {
      Log(absl::StrCat("shard ", options_.shard, ": ", s.message(), "; retrying in ", absl::FormatDuration(backoff)));
    };
    // Route by the stores' own indices, whatever order they were listed in.
    absl::Status connected = net::RetryWithBackoff(policy, [&](bool& progressed) {
      auto shards = records::ConnectStoreShards(options_.stores, args, absl::Seconds(10));
      if (!shards.ok()) return shards.status();
      progressed = true;
      for (records::StoreShard& shard : *shards) {
        Store store;
        store.address = shard.address;
        store.stub = HashStore::NewStub(shard.channel);
        stores_.push_back(std::move(store));
      }
      return absl::OkStatus();
    });
    if (!connected.ok()) return connected;
    absl::Status s = net::RetryWithBackoff(policy, [this](bool& progressed) { return Attempt(progressed); });
    if (s.ok()) return s;
    if (!Retryable(s)) {
      ReportError(s);
      return s;
    }
    return absl::UnavailableError(absl::StrCat(s.message(), " (gave up after ", absl::FormatDuration(options_.retry_for),
                                               "; rerun with the same job id to resume)"));
  }

 private:
  void Log(const std::string& line) {
    if (options_.log) options_.log(line);
  }

  void ReportError(const absl::Status& error) {
    for (Store& store : stores_) {
      rules_db::ProgressReport report;
      report.set_job_id(options_.job_id);
      report.set_shard(options_.shard);
      report.set_error(std::string(error.message()));
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
      rules_db::ProgressAck ack;
      (void)store.stub->ReportProgress(&context, report, &ack);
    }
  }

  absl::Status Attempt(bool& progressed) {
    // Where does each store stand?
    int64_t cursor = -1;
    bool all_done = true;
    records::Spec spec;
    for (size_t i = 0; i < stores_.size(); ++i) {
      Store& store = stores_[i];
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
      rules_db::GetJobRequest request;
      request.set_job_id(options_.job_id);
      rules_db::Job job;
      absl::Status s = net::FromGrpc(store.stub->GetJob(&context, request, &job), store.Name());
      if (!s.ok()) return s;
      if (job.num_shards() != options_.num_shards) {
        return absl::FailedPreconditionError(absl::StrCat("job ", options_.job_id, " has ", job.num_shards(),
                                                          " shards, not ", options_.num_shards));
      }
      if (job.state() != rules_db::JOB_STATE_GENERATING) {
        if (job.state() == rules_db::JOB_STATE_FINALIZING || job.state() == rules_db::JOB_STATE_GENERATED ||
            job.state() == rules_db::JOB_STATE_VERIFYING || job.state() == rules_db::JOB_STATE_DONE) {
          continue;  // this store has everything
        }
        return absl::FailedPreconditionError(absl::StrCat("job ", options_.job_id, " is ",
                                                          rules_db::JobState_Name(job.state()), " on ",
                                                          store.Name(), ": ", job.error()));
      }
      const rules_db::ShardProgress& progress = job.shards(options_.shard);
      all_done = all_done && progress.done();
      cursor = cursor < 0 ? progress.resume_cursor() : std::min(cursor, progress.resume_cursor());
      store.sequence = progress.acked_sequence();
      if (i == 0 || spec.templates.empty()) {
        auto parsed = records::SpecFromProto(job.spec());
        if (!parsed.ok()) return absl::FailedPreconditionError(absl::StrCat("job spec: ", parsed.status().message()));
        spec = *parsed;
        spec.max_ops = job.spec().max_ops();
      }
    }
    progressed = true;
    if (all_done) return absl::OkStatus();
    if (spec.templates.empty()) return absl::OkStatus();  // every store finished the job
    if (cursor > 0) Log(absl::StrCat("shard ", options_.shard, ": resuming at subtree ", cursor));

    if (options_.counters) ++options_.counters->attempts;
    for (Store& store : stores_) {
      store.context = std::make_unique<grpc::ClientContext>();
      store.ack.Clear();
      store.writer = store.stub->StreamGraphs(store.context.get(), &store.ack);
      store.buffer.clear();
    }
    StreamingSink sink(options_, stores_, enumerated_);
    EnumerationOptions enumeration;
    enumeration.max_ops = spec.max_ops;
    enumeration.shard = options_.shard;
    enumeration.num_shards = options_.num_shards;
    enumeration.start_cursor = std::max<int64_t>(0, cursor);
    auto stats = Enumerate(spec, enumeration, sink);
    enumerated_ += sink.graphs();
    if (!stats.ok()) return stats.status();

    absl::Status failure = sink.error();
    if (failure.ok() && !stats->cancelled && !sink.Flush(stats->cursor)) failure = sink.error();
    // Close every stream; a store's own error explains a broken stream best.
    for (Store& store : stores_) {
      store.writer->WritesDone();
      absl::Status s = net::FromGrpc(store.writer->Finish(), store.Name());
      if (!s.ok() && (failure.ok() || failure.code() == absl::StatusCode::kUnavailable)) failure = s;
    }
    if (!failure.ok()) return failure;
    if (options_.counters) options_.counters->done_fraction = 1.0;
    return sink.Report(true);
  }

  const WorkerOptions& options_;
  std::vector<Store> stores_;
  int64_t enumerated_ = 0;
};

}  // namespace

absl::Status RunWorker(const WorkerOptions& options) {
  Worker worker(options);
  return worker.Run();
}

}  // namespace taso::generator
