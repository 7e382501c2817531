#include "optimizer/optimize_front.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/proto_buffer_writer.h"
#include "net/grpc_status.h"

namespace taso::optimizer {
namespace {

constexpr char kOptimizeMethod[] = "/taso.optimizer.Optimizer/Optimize";

}  // namespace

// One Optimize call. The reactor's callbacks run on gRPC's threads, which
// must not block; waiting for a slot and the search run on a thread of the
// call's own, which ends the call with Finish as its last act (OnDone then
// deletes the reactor).
class OptimizeCall final : public grpc::ServerGenericBidiReactor {
 public:
  OptimizeCall(grpc::GenericCallbackServerContext* context, OptimizeFront* front)
      : context_(context), front_(front), service_(front->service_) {
    if (context->method() != kOptimizeMethod) {
      Finish(grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "unknown method"));
      return;
    }
    // Refusals are answered here, on gRPC's thread: nothing is read, so a
    // refused call costs no buffer and no thread.
    if (absl::Status busy = service_->RefuseIfFull(); !busy.ok()) {
      Finish(net::ToGrpc(busy));
      return;
    }
    if (front->threads_.fetch_add(1) >= front->max_threads_ && front->max_threads_ > 0) {
      front->threads_.fetch_sub(1);
      Finish(grpc::Status(grpc::StatusCode::RESOURCE_EXHAUSTED,
                          absl::StrCat("the server is busy: ", front->max_threads_,
                                       " calls hold its threads (taso_optimizer --max_threads); retry later")));
      return;
    }
    std::thread([this] {
      grpc::Status status = Run();
      front_->threads_.fetch_sub(1);
      if (status.ok()) {
        StartWriteAndFinish(&reply_, grpc::WriteOptions(), grpc::Status::OK);
      } else {
        Finish(status);
      }
    }).detach();
  }

  void OnReadDone(bool ok) override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      read_done_ = true;
      read_ok_ = ok;
    }
    changed_.notify_all();
  }
  void OnCancel() override {
    cancelled_ = true;
    changed_.notify_all();
  }
  void OnDone() override { delete this; }

 private:
  grpc::Status Run() {
    const absl::Time deadline = absl::FromChrono(context_->deadline());
    const std::function<bool()> cancelled = [this] { return cancelled_.load() || context_->IsCancelled(); };
    auto ticket = service_->Admit(deadline, cancelled);
    if (!ticket.ok()) return net::ToGrpc(ticket.status());
    // Admitted: now the model is read.
    StartRead(&request_bytes_);
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [this] { return read_done_; });  // a cancelled call's read completes with !ok
    }
    if (!read_ok_) return grpc::Status(grpc::StatusCode::CANCELLED, "the caller sent no request");
    OptimizeRequest request;
    {
      grpc::ProtoBufferReader reader(&request_bytes_);
      if (!request.ParseFromZeroCopyStream(&reader)) {
        return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "the request is not an OptimizeRequest");
      }
    }
    request_bytes_.Clear();
    OptimizeResponse response;
    grpc::Status status = service_->RunAdmitted(request, &response, deadline, cancelled);
    if (!status.ok()) return status;
    bool own_buffer = false;
    return grpc::SerializationTraits<OptimizeResponse>::Serialize(response, &reply_, &own_buffer);
  }

  grpc::GenericCallbackServerContext* context_;
  OptimizeFront* front_;
  OptimizerService* service_;
  grpc::ByteBuffer request_bytes_;
  grpc::ByteBuffer reply_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool read_done_ = false;
  bool read_ok_ = false;
  std::atomic<bool> cancelled_{false};
};

grpc::ServerGenericBidiReactor* OptimizeFront::CreateReactor(grpc::GenericCallbackServerContext* context) {
  return new OptimizeCall(context, this);
}

}  // namespace taso::optimizer
