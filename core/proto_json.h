// A protobuf message as JSON for people's scripts: field names as in the
// .proto, every field printed, and 64-bit integers as JSON numbers (the
// proto3 mapping prints them as strings, "search_time_ms": "0", which jq and
// most scripts then compare as text). For reports, whose 64-bit fields are
// counts and times; interchange files keep the proto3 mapping.
#ifndef TASO_CORE_PROTO_JSON_H_
#define TASO_CORE_PROTO_JSON_H_

#include "core/json_text.h"
#include "google/protobuf/message.h"

namespace taso {

Json ProtoToJson(const google::protobuf::Message& message);

}  // namespace taso

#endif  // TASO_CORE_PROTO_JSON_H_
