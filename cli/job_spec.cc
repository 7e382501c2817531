#include "cli/job_spec.h"

#include <fstream>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "core/hash.h"
#include "google/protobuf/text_format.h"
#include "records/spec.h"

namespace taso::cli {

absl::StatusOr<generator::GenerationSpec> BuildJobSpec(const std::string& spec_path, int max_ops, int shards) {
  if (max_ops < 1 || max_ops > records::kMaxOpsLimit) {
    return absl::InvalidArgumentError(absl::StrCat("--max-ops must be in 1..", records::kMaxOpsLimit));
  }
  if (shards < 1 || shards > records::kMaxGeneratorShards) {
    return absl::InvalidArgumentError(absl::StrCat("--shards must be in 1..", records::kMaxGeneratorShards));
  }
  generator::GenerationSpec spec;
  std::string text;
  if (spec_path.empty()) {
    auto parsed = records::ParseSpecText(records::DefaultSpecText(), "default spec");
    if (!parsed.ok()) return absl::InternalError(parsed.status().message());
    text = records::DefaultSpecText();
  } else {
    auto loaded = records::LoadSpecFile(spec_path);
    if (!loaded.ok()) return absl::InvalidArgumentError(loaded.status().message());
    std::ifstream in(spec_path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  google::protobuf::TextFormat::ParseFromString(text, &spec);
  spec.set_max_ops(max_ops);
  return spec;
}

std::string JobIdFor(const std::string& job_id, const generator::GenerationSpec& spec, int shards) {
  if (!job_id.empty()) return job_id;
  Hasher h;
  h.AddString(spec.SerializeAsString());
  h.Add(static_cast<uint64_t>(shards));
  h.Add(static_cast<uint64_t>(records::kEnumerationVersion));
  return absl::StrCat("gen", spec.max_ops(), "-", shards, "s-", h.Finish().ToHex().substr(0, 8));
}

}  // namespace taso::cli
