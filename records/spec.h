// A generation spec: the operator templates the enumerator may apply and the
// tensors it starts from. Users write it as a taso.generator.GenerationSpec
// text proto; DefaultSpec() reproduces TASO's generator (see default_spec.cc).
#ifndef TASO_RECORDS_SPEC_H_
#define TASO_RECORDS_SPEC_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "core/op.h"
#include "core/tensor_type.h"
#include "proto/generator.pb.h"

namespace taso::records {

struct Variable {
  std::string name;
  TensorType type;
  bool is_weight = false;  // spec `constants`: values known ahead of time
};

// One operator with one parameter setting.
struct Template {
  OpKind kind;
  OpParams params;
  int max_uses = 0;   // 0: no cap
  std::string label;  // "conv2d[stride=1x1,pad=same,act=relu]"
  bool unordered_operands = false;
  std::vector<std::pair<int, int>> kernels;  // conv2d: allowed (kh, kw); empty: any
  bool broadcast = false;                    // ewadd, ewmul: one operand may broadcast to the other
};

struct Spec {
  int max_ops = 3;
  uint64_t seed = 0;
  std::vector<Variable> variables;
  std::vector<Template> templates;
};

// Limits that keep a spec from asking for something this machine cannot hold.
inline constexpr int kMaxOpsLimit = 8;
// Generator shards per job: the store keeps a progress record for each.
inline constexpr int kMaxGeneratorShards = 4096;
inline constexpr int64_t kMaxTensorElements = 1 << 16;
// Which graphs a spec stands for (generator/enumerator.h). A derived job id
// hashes it, so a job started by a build that enumerated differently is
// not resumed by this one. 2: unordered_operands keeps renamings enumerated.
inline constexpr int kEnumerationVersion = 2;

// Validates and expands a spec; errors say which entry is wrong and why.
absl::StatusOr<Spec> SpecFromProto(const generator::GenerationSpec& proto);
// `source` names the text in errors (a file name), with line and column.
absl::StatusOr<Spec> ParseSpecText(const std::string& text, const std::string& source);
absl::StatusOr<Spec> LoadSpecFile(const std::string& path);

// TASO's default: its 20 input tensors and 26 operator templates, which are
// 20 here (conv kernels come from the weights, concat ranks from operands).
const std::string& DefaultSpecText();
Spec DefaultSpec();

}  // namespace taso::records

#endif  // TASO_RECORDS_SPEC_H_
