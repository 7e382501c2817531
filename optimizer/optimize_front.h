// The Optimize RPC admitted before its request is read.
//
// gRPC's synchronous API reads a whole request (up to --max_model_mb +
// 16 MiB) before any handler runs: a call refused because every search slot
// and queue place was taken had been buffered first, and every call waiting
// in the queue held its model in memory. Served through gRPC's callback
// generic API, a call is admitted from its headers alone: refused with
// RESOURCE_EXHAUSTED before its message is read (only what HTTP/2 flow
// control let in is buffered), and a queued call reads its model only when
// its search may start. Memory then follows the running searches, not the
// queue.
#ifndef TASO_OPTIMIZER_OPTIMIZE_FRONT_H_
#define TASO_OPTIMIZER_OPTIMIZE_FRONT_H_

#include <atomic>

#include "grpcpp/generic/async_generic_service.h"
#include "optimizer/optimizer_service.h"
#include "proto/optimizer.grpc.pb.h"

namespace taso::optimizer {

class OptimizeFront final : public grpc::CallbackGenericService {
 public:
  // `service` runs the searches; it must outlive the server. A call waiting
  // for a slot or searching has a thread of its own: beyond `max_threads`
  // of them (the server's --max_threads; 0: no limit) a call is refused with
  // RESOURCE_EXHAUSTED, as the synchronous servers refuse past theirs.
  OptimizeFront(OptimizerService* service, int max_threads) : service_(service), max_threads_(max_threads) {}

  grpc::ServerGenericBidiReactor* CreateReactor(grpc::GenericCallbackServerContext* context) override;

  // Register this beside the front (RunServer's services): the Optimizer
  // service with Optimize left to the front, so reflection still describes it.
  grpc::Service* described_service() { return &described_; }

 private:
  friend class OptimizeCall;
  OptimizerService* service_;
  const int max_threads_;
  std::atomic<int> threads_{0};
  Optimizer::WithGenericMethod_Optimize<Optimizer::Service> described_;
};

}  // namespace taso::optimizer

#endif  // TASO_OPTIMIZER_OPTIMIZE_FRONT_H_
