#include "records/encoding.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace taso::records {

absl::StatusOr<std::vector<EncodedOp>> ParseEncoding(std::string_view encoding) {
  std::vector<EncodedOp> ops;
  size_t pos = 0;
  auto byte = [&](size_t at) { return static_cast<unsigned char>(encoding[at]); };
  while (pos < encoding.size()) {
    if (pos + 2 > encoding.size()) {
      return absl::InvalidArgumentError(absl::StrCat("graph encoding truncated at byte ", pos));
    }
    EncodedOp op;
    op.template_index = byte(pos);
    int n = byte(pos + 1);
    pos += 2;
    if (pos + n > encoding.size()) {
      return absl::InvalidArgumentError(absl::StrCat("graph encoding truncated at byte ", pos));
    }
    for (int i = 0; i < n; ++i) op.inputs.push_back(byte(pos + i));
    pos += n;
    ops.push_back(std::move(op));
  }
  return ops;
}

void AppendEncodedOp(int template_index, const int* inputs, int num_inputs, std::string& out) {
  out.push_back(static_cast<char>(template_index));
  out.push_back(static_cast<char>(num_inputs));
  for (int i = 0; i < num_inputs; ++i) out.push_back(static_cast<char>(inputs[i]));
}

absl::StatusOr<Graph> DecodeGraph(const Spec& spec, std::string_view encoding,
                                  const std::vector<int>& variable_renaming) {
  auto ops = ParseEncoding(encoding);
  if (!ops.ok()) return ops.status();
  const int num_variables = static_cast<int>(spec.variables.size());
  if (!variable_renaming.empty() && static_cast<int>(variable_renaming.size()) != num_variables) {
    return absl::InvalidArgumentError("variable renaming has the wrong size");
  }
  Graph graph;
  // Pool entry -> graph tensor; variables are added on first use.
  std::vector<TensorRef> pool(num_variables, TensorRef{});
  std::vector<int> consumers;
  std::vector<TensorRef> op_outputs;
  for (const EncodedOp& op : *ops) {
    if (op.template_index >= static_cast<int>(spec.templates.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph encoding names template ", op.template_index, ", but the spec has ",
                       spec.templates.size()));
    }
    std::vector<TensorRef> inputs;
    for (int p : op.inputs) {
      if (p >= static_cast<int>(pool.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("graph encoding reads pool entry ", p, " before it exists"));
      }
      if (p < num_variables && pool[p].node < 0) {
        int source = variable_renaming.empty() ? p : variable_renaming[p];
        if (source < 0 || source >= num_variables) {
          return absl::InvalidArgumentError("variable renaming out of range");
        }
        const Variable& v = spec.variables[source];
        pool[p] = v.is_weight ? graph.AddWeight(v.name, v.type) : graph.AddInput(v.name, v.type);
      }
      if (p >= num_variables) ++consumers[p - num_variables];
      inputs.push_back(pool[p]);
    }
    const Template& t = spec.templates[op.template_index];
    auto outs = graph.AddOp(t.kind, t.params, inputs);
    if (!outs.ok()) return outs.status();
    for (TensorRef r : *outs) {
      pool.push_back(r);
      consumers.push_back(0);
      op_outputs.push_back(r);
    }
  }
  int index = 0;
  for (size_t i = 0; i < op_outputs.size(); ++i) {
    if (consumers[i] == 0) graph.AddOutput(absl::StrCat("out", index++), op_outputs[i]);
  }
  return graph;
}

std::string DescribeEncoding(const Spec& spec, std::string_view encoding) {
  auto ops = ParseEncoding(encoding);
  if (!ops.ok()) return absl::StrCat("<", ops.status().message(), ">");
  const int num_variables = static_cast<int>(spec.variables.size());
  std::vector<std::string> pool_names;
  for (const Variable& v : spec.variables) pool_names.push_back(v.name);
  std::vector<std::string> parts;
  int op_index = 0;
  for (const EncodedOp& op : *ops) {
    std::vector<std::string> args;
    for (int p : op.inputs) {
      args.push_back(p < static_cast<int>(pool_names.size()) ? pool_names[p] : "?");
    }
    bool known = op.template_index < static_cast<int>(spec.templates.size());
    const std::string label = known ? spec.templates[op.template_index].label : "?";
    parts.push_back(absl::StrCat("%", op_index, " = ", label, "(", absl::StrJoin(args, ", "), ")"));
    int outputs = known && spec.templates[op.template_index].kind == OpKind::kSplit ? 2 : 1;
    for (int i = 0; i < outputs; ++i) {
      pool_names.push_back(outputs == 1 ? absl::StrCat("%", op_index)
                                        : absl::StrCat("%", op_index, ":", i));
    }
    ++op_index;
  }
  (void)num_variables;
  return absl::StrJoin(parts, "; ");
}

}  // namespace taso::records
