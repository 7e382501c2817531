#include "cli/rule_collection_writer.h"

#include "google/protobuf/wire_format_lite.h"

namespace taso::cli {
namespace {

using google::protobuf::internal::WireFormatLite;

constexpr uint32_t kFormatVersion = 1;

uint32_t Tag(int field, WireFormatLite::WireType type) { return WireFormatLite::MakeTag(field, type); }

}  // namespace

RuleCollectionWriter::RuleCollectionWriter(std::ostream& out)
    : out_(out),
      raw_(std::make_unique<google::protobuf::io::OstreamOutputStream>(&out)),
      coded_(std::make_unique<google::protobuf::io::CodedOutputStream>(raw_.get())) {
  coded_->WriteTag(Tag(rules::RuleCollection::kFormatVersionFieldNumber, WireFormatLite::WIRETYPE_VARINT));
  coded_->WriteVarint32(kFormatVersion);
}

void RuleCollectionWriter::Add(const rules::Rule& rule) {
  coded_->WriteTag(Tag(rules::RuleCollection::kRulesFieldNumber, WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  coded_->WriteVarint32(static_cast<uint32_t>(rule.ByteSizeLong()));
  rule.SerializeWithCachedSizes(coded_.get());
}

bool RuleCollectionWriter::Finish() {
  const bool encoded = !coded_->HadError();
  // The streams write what they buffer as they are destroyed.
  coded_.reset();
  raw_.reset();
  out_.flush();
  return encoded && out_.good();
}

}  // namespace taso::cli
