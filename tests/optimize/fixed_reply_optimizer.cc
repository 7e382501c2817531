// A test double of taso_optimizer for the client's own check: an Optimizer
// service that answers every call with the model in a file (a faulty or
// hostile server's answer) and an otherwise empty report.
//   fixed_reply_optimizer MODEL.onnx PORT_FILE
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "grpcpp/grpcpp.h"
#include "proto/optimizer.grpc.pb.h"

namespace {

class FixedReply final : public taso::optimizer::Optimizer::Service {
 public:
  explicit FixedReply(std::string model) : model_(std::move(model)) {}
  grpc::Status Optimize(grpc::ServerContext*, const taso::optimizer::OptimizeRequest*,
                        taso::optimizer::OptimizeResponse* response) override {
    response->set_model(model_);
    response->mutable_report()->set_verified_numerically(true);  // a claim the client does not take
    return grpc::Status::OK;
  }

 private:
  std::string model_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: fixed_reply_optimizer MODEL.onnx PORT_FILE\n";
    return 2;
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::cerr << "fixed_reply_optimizer: cannot read " << argv[1] << "\n";
    return 2;
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  FixedReply service(bytes.str());
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  builder.SetMaxReceiveMessageSize(64 << 20);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) return 1;
  std::ofstream(argv[2]) << port;
  server->Wait();
  return 0;
}
