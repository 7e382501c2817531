#include "pictures/rule_picture.h"

#include <map>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"
#include "core/side_conditions.h"
#include "pictures/dot_text.h"
#include "pictures/graph_dot.h"

namespace taso::pictures {
namespace {

// Pastel fills, one per variable in declaration order (cycling after eight).
constexpr const char* kVariableFills[] = {"#cfe3f7", "#fde2b8", "#d7f0d2", "#f3d1e8",
                                          "#e4dcf5", "#fff3b0", "#cdeeed", "#f6d5cc"};

std::string StatusWord(rules::RuleStatus status) {
  std::string name = rules::RuleStatus_Name(status);
  const std::string prefix = "RULE_STATUS_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return absl::AsciiStrToLower(name);
}

std::string ConditionsLine(const rules::Rule& rule, const Graph& source, const Graph& target) {
  if (!rule.has_conditions()) return "side conditions: none recorded";
  auto conditions = RecordedConditions(rule, source, target);
  if (!conditions.ok()) return absl::StrCat("side conditions not trusted: ", conditions.status().message());
  return absl::StrCat("if ", DescribeConditions(conditions->source), "  =>  ", DescribeConditions(conditions->target));
}

// Per node, its variable's fill ("" for operators).
std::vector<std::string> VariableFills(const Graph& graph, const std::map<std::string, std::string>& fill_of) {
  std::vector<std::string> fills(graph.num_nodes());
  for (const Node& node : graph.nodes()) {
    if (auto it = fill_of.find(node.name); IsInputOrWeight(node.kind) && it != fill_of.end()) fills[node.id] = it->second;
  }
  return fills;
}

}  // namespace

absl::StatusOr<std::string> RuleDot(const rules::Rule& rule) {
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": source: ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": target: ", target.status().message()));

  std::map<std::string, std::string> fill_of;
  for (const rules::Variable& v : rule.variables()) {
    fill_of.emplace(v.name(), kVariableFills[fill_of.size() % (sizeof(kVariableFills) / sizeof(kVariableFills[0]))]);
  }
  // Paired outputs share a label; without pairs (a rejected candidate) each
  // side numbers its own.
  std::vector<std::string> source_outputs(source->outputs().size()), target_outputs(target->outputs().size());
  for (int k = 0; k < rule.outputs_size(); ++k) {
    const auto& pair = rule.outputs(k);
    const std::string label = rule.outputs_size() == 1 ? "output" : absl::StrCat("output ", k);
    if (pair.source_output() >= 0 && pair.source_output() < static_cast<int>(source_outputs.size())) {
      source_outputs[pair.source_output()] = label;
    }
    if (pair.target_output() >= 0 && pair.target_output() < static_cast<int>(target_outputs.size())) {
      target_outputs[pair.target_output()] = label;
    }
  }
  if (rule.outputs_size() == 0) {
    for (size_t k = 0; k < source_outputs.size(); ++k) source_outputs[k] = absl::StrCat("output ", k);
    for (size_t k = 0; k < target_outputs.size(); ++k) target_outputs[k] = absl::StrCat("output ", k);
  }

  std::vector<std::string> caption = {absl::StrCat("rule ", rule.id(), " (", StatusWord(rule.status()), ")"),
                                      ConditionsLine(rule, *source, *target)};
  if (rule.proof().axioms_used_size() > 0) {
    caption.push_back(absl::StrCat("proved from: ", absl::StrJoin(rule.proof().axioms_used(), ", ")));
  }
  DotWriter dot("rule", PictureAttrs(absl::StrJoin(caption, "\n"), "b"));
  WriteDefaults(dot);
  const struct {
    const char* name;
    const Graph& graph;
    const std::vector<std::string>& outputs;
  } sides[] = {{"source", *source, source_outputs}, {"target", *target, target_outputs}};
  WriteRowRoot("root", dot);
  std::vector<Anchors> drawn;
  for (const auto& side : sides) {
    dot.OpenCluster(side.name, side.name,
                    {{"style", "rounded"}, {"color", "#607d8b"}, {"fontname", "Helvetica"}, {"labelloc", "t"}});
    GraphDrawing drawing;
    drawing.prefix = absl::StrCat(side.name, "_");
    drawing.fills = VariableFills(side.graph, fill_of);
    drawing.output_labels = side.outputs;
    drawn.push_back(WriteAnchors(drawing.prefix, WriteGraph(side.graph, drawing, dot), dot));
    dot.Close();
  }
  WriteRow("root", drawn, dot);  // source on the left, target on the right
  return dot.Finish();
}

}  // namespace taso::pictures
