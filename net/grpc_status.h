// absl::Status <-> grpc::Status. The codes are numbered alike; messages pass
// through unchanged so a user sees the server's explanation.
#ifndef TASO_NET_GRPC_STATUS_H_
#define TASO_NET_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace taso::net {

inline grpc::Status ToGrpc(const absl::Status& s) {
  if (s.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(s.code()), std::string(s.message()));
}

// `peer` names the other side in the message ("store 127.0.0.1:7070").
inline absl::Status FromGrpc(const grpc::Status& s, const std::string& peer) {
  if (s.ok()) return absl::OkStatus();
  std::string message = s.error_message();
  if (s.error_code() == grpc::StatusCode::UNAVAILABLE) {
    message = peer + " is unreachable: " + message;
  } else {
    message = peer + ": " + message;
  }
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), message);
}

}  // namespace taso::net

#endif  // TASO_NET_GRPC_STATUS_H_
