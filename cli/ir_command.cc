#include "cli/ir_command.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/canonical.h"
#include "core/fingerprint.h"
#include "core/graph_proto.h"
#include "core/interpreter.h"
#include "core/json_text.h"
#include "core/random_inputs.h"

namespace taso::cli {
namespace {

TensorType F32(std::vector<int64_t> dims) { return TensorType::RowMajor(DType::kFloat32, std::move(dims)); }

absl::StatusOr<Graph> Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buf;
  buf << in.rdbuf();
  auto g = GraphFromText(buf.str());
  if (!g.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", g.status().message()));
  return g;
}

}  // namespace

Graph ExampleGraph() {
  Graph g;
  const TensorRef x = g.AddInput("x", F32({1, 4, 5, 5}));
  const TensorRef w1 = g.AddWeight("w1", F32({4, 4, 3, 3}));
  const TensorRef w2 = g.AddWeight("w2", F32({4, 4, 3, 3}));
  const TensorRef a = g.AddInput("a", F32({2, 4}));
  const TensorRef m = g.AddWeight("m", F32({4, 4}));
  OpParams conv_relu;
  conv_relu.activation = Activation::kRelu;
  const TensorRef c1 = *g.AddOp1(OpKind::kConv2D, conv_relu, {x, w1});
  const TensorRef c2 = *g.AddOp1(OpKind::kConv2D, OpParams{}, {c1, w2});
  const TensorRef sum = *g.AddOp1(OpKind::kEwAdd, OpParams{}, {c2, x});
  g.AddOutput("block", *g.AddOp1(OpKind::kRelu, OpParams{}, {sum}));
  g.AddOutput("linear", *g.AddOp1(OpKind::kMatMul, OpParams{}, {a, m}));
  return g;
}

absl::Status RunIrCommand(const IrCommandOptions& options, std::ostream& out) {
  absl::StatusOr<Graph> graph = options.path.empty() ? ExampleGraph() : Load(options.path);
  if (!graph.ok()) return graph.status();
  if (absl::Status s = graph->Validate(); !s.ok()) return s;
  auto text = CanonicalText(*graph);
  if (!text.ok()) return text.status();
  auto hash = StructuralHash(*graph);
  if (!hash.ok()) return hash.status();
  // The fingerprint needs integer semantics; graphs with tanh, sigmoid,
  // batchnorm or opaque operators have none, which is reported, not fatal.
  IntOptions int_options;
  int_options.relu_as_polynomial = true;
  auto ints = EvaluateInt(*graph, DeterministicIntFeeds(*graph, options.seed), int_options);
  const std::string fingerprint = ints.ok() ? GraphFingerprint(*ints).ToHex()
                                            : absl::StrCat("unavailable: ", ints.status().message());
  auto floats = EvaluateFloat(*graph, DeterministicFloatFeeds(*graph, options.seed));
  std::vector<std::string> summaries;
  if (floats.ok()) {
    for (size_t i = 0; i < floats->size(); ++i) {
      const FloatTensor& t = (*floats)[i];
      double sum = 0;
      for (float v : t.data) sum += v;
      summaries.push_back(absl::StrFormat("%s %s sum=%.6g", graph->outputs()[i].name, t.type.ToString(), sum));
    }
  } else {
    summaries.push_back(absl::StrCat("unavailable: ", floats.status().message()));
  }
  if (options.json) {
    const Json summary = {{"nodes", graph->num_nodes()},
                          {"ops", graph->num_ops()},
                          {"structural_hash", hash->ToHex()},
                          {"fingerprint", fingerprint},
                          {"canonical", *text},
                          {"float_outputs", summaries}};
    out << JsonLine(summary) << "\n";
    return absl::OkStatus();
  }
  out << "graph: " << (options.path.empty() ? "embedded example" : options.path) << ", " << graph->num_nodes()
      << " nodes, " << graph->num_ops() << " operators, valid\n"
      << "canonical form:\n" << *text
      << "structural hash: " << hash->ToHex() << "\n"
      << "fingerprint (int32, seed " << options.seed << "): " << fingerprint << "\n"
      << "float outputs (inputs in [-1,1], seed " << options.seed << "):\n";
  for (const std::string& s : summaries) out << "  " << s << "\n";
  return absl::OkStatus();
}

}  // namespace taso::cli
