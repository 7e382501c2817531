// What a generation job is made of, as `taso generate` and `taso job create`
// both build it: the spec (TASO's default or a file) at a size, and the job
// id derived from it when none is given (so a rerun resumes the same job).
#ifndef TASO_CLI_JOB_SPEC_H_
#define TASO_CLI_JOB_SPEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/generator.pb.h"

namespace taso::cli {

// InvalidArgument for a bad size, shard count or spec file.
absl::StatusOr<generator::GenerationSpec> BuildJobSpec(const std::string& spec_path, int max_ops, int shards);

// `job_id` when given, else "gen<size>-<shards>s-<hash of spec and shards>".
std::string JobIdFor(const std::string& job_id, const generator::GenerationSpec& spec, int shards);

}  // namespace taso::cli

#endif  // TASO_CLI_JOB_SPEC_H_
