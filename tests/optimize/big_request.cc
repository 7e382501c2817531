// Sends taso_optimizer one Optimize call carrying MIB mebibytes of model
// bytes (zeros: a call that is refused is never parsed) and prints its
// status code's name and how long the answer took.
//   big_request ADDRESS MIB
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include "grpcpp/grpcpp.h"
#include "proto/optimizer.grpc.pb.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: big_request ADDRESS MIB\n";
    return 2;
  }
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(-1);
  args.SetMaxReceiveMessageSize(-1);
  auto stub = taso::optimizer::Optimizer::NewStub(
      grpc::CreateCustomChannel(argv[1], grpc::InsecureChannelCredentials(), args));
  taso::optimizer::OptimizeRequest request;
  request.mutable_model()->assign(static_cast<size_t>(std::atoll(argv[2])) << 20, '\0');
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(120));
  taso::optimizer::OptimizeResponse response;
  const auto start = std::chrono::steady_clock::now();
  const grpc::Status status = stub->Optimize(&context, request, &response);
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  static const char* kNames[] = {"OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT", "DEADLINE_EXCEEDED",
                                 "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
                                 "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL",
                                 "UNAVAILABLE", "DATA_LOSS", "UNAUTHENTICATED"};
  const int code = static_cast<int>(status.error_code());
  std::cout << (code >= 0 && code <= 16 ? kNames[code] : "?") << " " << ms << " ms " << status.error_message()
            << "\n";
  return 0;
}
