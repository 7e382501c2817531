// IR graphs as protos (what services exchange; core/graph_proto.h), from
// binary and from text: any bytes decode to a valid graph or get an error,
// and a decoded graph survives a round trip through its proto.
#include <cstdint>
#include <string>

#include "core/graph_proto.h"
#include "fuzz/fuzz_check.h"
#include "proto/ir.pb.h"

namespace {

void CheckRoundTrip(const taso::Graph& g) {
  FUZZ_CHECK(g.Validate().ok(), "a decoded graph is not valid");
  auto again = taso::GraphFromProto(taso::GraphToProto(g));
  FUZZ_CHECK(again.ok(), "a decoded graph does not decode again from its own proto");
  FUZZ_CHECK(again->nodes().size() == g.nodes().size(), "the round trip changed the graph");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 65536) return 0;
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  taso::ir::Graph proto;
  if (proto.ParseFromString(bytes)) {
    if (auto g = taso::GraphFromProto(proto); g.ok()) CheckRoundTrip(*g);
  }
  if (auto g = taso::GraphFromText(bytes); g.ok()) CheckRoundTrip(*g);
  return 0;
}
