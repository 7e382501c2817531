// A RuleCollection written a rule at a time, so an export of millions of
// rules (`taso rules export --format proto`) is never held whole: the same
// bytes as the message serialized, its fields in number order
// (format_version, then each rule).
#ifndef TASO_CLI_RULE_COLLECTION_WRITER_H_
#define TASO_CLI_RULE_COLLECTION_WRITER_H_

#include <memory>
#include <ostream>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "proto/rules.pb.h"

namespace taso::cli {

class RuleCollectionWriter {
 public:
  explicit RuleCollectionWriter(std::ostream& out);
  void Add(const rules::Rule& rule);
  // Writes out what the streams buffer; false if a write failed. Nothing
  // may be added after.
  bool Finish();

 private:
  std::ostream& out_;
  std::unique_ptr<google::protobuf::io::OstreamOutputStream> raw_;
  std::unique_ptr<google::protobuf::io::CodedOutputStream> coded_;
};

}  // namespace taso::cli

#endif  // TASO_CLI_RULE_COLLECTION_WRITER_H_
