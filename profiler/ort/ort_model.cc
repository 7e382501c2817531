#include "profiler/ort/ort_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/random_inputs.h"
#include "onnx_io/onnx_export.h"

namespace taso::profiler {
namespace {

// Whether operand `i` of `kind` is a weight in the models users run.
bool HeldAsWeight(OpKind kind, int i, const TensorType& type) {
  switch (kind) {
    case OpKind::kConv2D: return i >= 1;
    case OpKind::kMatMul: return i == 1 && type.rank() == 2;
    case OpKind::kFusedGemm: return i >= 1;  // the weight and the bias
    case OpKind::kBatchNorm: return i >= 1;
    default: return false;
  }
}

// The perm that makes `type` a transpose (no shuffle) of a row-major tensor,
// or empty when its strides are not a permutation of row-major ones (a split
// part, say, which ORT would have copied out: it then reads a dense input).
std::vector<int> PermutationOfRowMajor(const TensorType& type) {
  const int rank = type.rank();
  std::vector<int> order(rank);  // source axis k is the type's axis order[k]
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return type.strides[a] > type.strides[b]; });
  std::vector<int64_t> source_dims;
  for (int k = 0; k < rank; ++k) source_dims.push_back(type.dims[order[k]]);
  const std::vector<int64_t> source_strides = RowMajorStrides(source_dims);
  std::vector<int> perm(rank);
  for (int k = 0; k < rank; ++k) {
    if (type.dims[order[k]] > 1 && type.strides[order[k]] != source_strides[k]) return {};
    perm[order[k]] = k;
  }
  return perm;
}

}  // namespace

std::shared_ptr<const std::string> DeterministicValues(const TensorType& type, const std::string& name, bool positive) {
  const TensorType plain = type.Plain();
  if (type.dtype != DType::kFloat32) {  // integer operands: zeros, like the worker's integer inputs
    return std::make_shared<const std::string>(static_cast<size_t>(plain.num_elements() * ElementBytes(type.dtype)),
                                               '\0');
  }
  FloatTensor t = DeterministicFloatTensor(plain, name, /*seed=*/1);
  if (positive) {
    for (float& v : t.data) v = std::abs(v) + 0.1f;
  }
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(t.data.data()),
                                             t.data.size() * sizeof(float));
}

int OrtCopies(const CanonicalSignature& signature, int64_t weight_bytes, int max_copies) {
  int64_t bytes = 0;
  for (int i = 0; i < static_cast<int>(signature.op.inputs.size()); ++i) {
    const TensorType& type = signature.op.inputs[i];
    auto constant = signature.op.constant_inputs.find(i);
    // An opaque operator's weights: its constants too large to carry a value.
    const bool weight = signature.op.kind == OpKind::kOpaque
                            ? constant != signature.op.constant_inputs.end() && constant->second.empty()
                            : HeldAsWeight(signature.op.kind, i, type);
    if (weight) bytes += std::max<int64_t>(type.num_elements(), 0) * ElementBytes(type.dtype);
  }
  if (bytes <= 0 || weight_bytes <= bytes) return 1;
  return static_cast<int>(std::min<int64_t>((weight_bytes + bytes - 1) / bytes, std::max(max_copies, 1)));
}

int OrtNodes(const CanonicalSignature& signature, int copies, double spread_ms, int max_nodes, int max_outputs) {
  copies = std::max(copies, 1);
  // A rough roofline of one 2-core CPU: ~50 GFLOP/s and ~50 GB/s, plus a
  // kernel launch. Off by 2x either way it still gives a model of ~1 ms.
  constexpr double kFlopsPerMs = 5e7;
  constexpr double kBytesPerMs = 5e7;
  constexpr double kLaunchMs = 0.002;
  const double node_ms = static_cast<double>(SignatureFlops(signature)) / kFlopsPerMs +
                         static_cast<double>(SignatureBytes(signature)) / kBytesPerMs + kLaunchMs;
  // Unchained nodes each end the graph: every output is bound on every run.
  const int outputs = ChainedOperands(signature).empty() ? std::max<int>(signature.outputs.size(), 1) : 0;
  if (outputs > 0) max_nodes = std::min(max_nodes, std::max(max_outputs, 1) / outputs);
  const int64_t cap = std::max(copies, (std::max(max_nodes, 1) / copies) * copies);
  const int64_t wanted = static_cast<int64_t>(std::ceil(spread_ms / (node_ms * copies))) * copies;
  return static_cast<int>(std::clamp<int64_t>(wanted, copies, cap));
}

std::vector<int> ChainedOperands(const CanonicalSignature& signature) {
  const Signature& op = signature.op;
  // ORT folds a chain of transposes into one; a chain of scalar products
  // decays through denormals, which are slow.
  // An opaque operator is timed by OpaqueTimingModel, unchained.
  if (op.kind == OpKind::kOpaque || op.kind == OpKind::kTranspose || op.kind == OpKind::kScalarMul ||
      signature.outputs.size() != 1) {
    return {};
  }
  const TensorType& out = signature.outputs[0];
  std::vector<int> chained;
  for (int i = 0; i < static_cast<int>(op.inputs.size()); ++i) {
    const TensorType& in = op.inputs[i];
    if (HeldAsWeight(op.kind, i, in)) continue;
    const bool same = in.is_row_major() && in.dtype == out.dtype && in.dims == out.dims;
    // A product by an operand that stays the same decays through denormals too.
    if (!same && op.kind == OpKind::kEwMul) return {};
    if (same) chained.push_back(i);
  }
  return chained;
}

absl::StatusOr<SignatureModel> SignatureGraph(const CanonicalSignature& signature, int copies, int nodes) {
  const Signature& op = signature.op;
  copies = std::max(copies, 1);
  nodes = std::max(nodes, copies);
  Graph g;
  const std::vector<int> chained = ChainedOperands(signature);
  // Unchained, the operand that tells node groups apart: the first one not
  // held as a weight. Without one, nodes past the copies would repeat an
  // earlier node exactly, so the model holds only the copies.
  int varied = -1;
  if (chained.empty()) {
    for (int i = 0; i < static_cast<int>(op.inputs.size()) && varied < 0; ++i) {
      if (!HeldAsWeight(op.kind, i, op.inputs[i])) varied = i;
    }
    if (varied < 0) nodes = copies;
  }
  const int groups = (nodes + copies - 1) / copies;
  // An input of the signature's type: a graph input, or a transpose (no
  // shuffle) of one when the type is a permutation of row-major.
  auto add_input = [&g](const std::string& name, const TensorType& type) -> absl::StatusOr<TensorRef> {
    const std::vector<int> perm = type.is_row_major() ? std::vector<int>{} : PermutationOfRowMajor(type);
    if (perm.empty()) return g.AddInput(name, type.Plain());
    std::vector<int64_t> source_dims(type.rank());
    for (int a = 0; a < type.rank(); ++a) source_dims[perm[a]] = type.dims[a];
    TensorRef source = g.AddInput(name, TensorType::RowMajor(type.dtype, source_dims));
    OpParams view;
    view.perm = perm;
    view.shuffle = false;
    return g.AddOp1(OpKind::kTranspose, view, {source});
  };
  std::vector<TensorRef> operands;
  std::vector<int> weight_operands;
  std::vector<TensorRef> varied_inputs;  // one per group of `copies` nodes
  std::vector<TensorRef> recent;         // chained: the latest values, newest first
  for (int i = 0; i < static_cast<int>(op.inputs.size()); ++i) {
    const TensorType& type = op.inputs[i];
    if (HeldAsWeight(op.kind, i, type)) {
      operands.emplace_back();  // one per weight set, below
      weight_operands.push_back(i);
      continue;
    }
    for (int group = 0; group < (i == varied ? groups : 1); ++group) {
      auto input = add_input(group == 0 ? absl::StrCat("in", i) : absl::StrCat("in", i, "_", group), type);
      if (!input.ok()) return input.status();
      if (i == varied) varied_inputs.push_back(*input);
      if (group == 0) operands.push_back(*input);
    }
    if (std::find(chained.begin(), chained.end(), i) != chained.end()) recent.push_back(operands.back());
  }
  // weight_sets[c][j]: copy c's value of the j-th weight operand.
  std::vector<std::vector<TensorRef>> weight_sets(copies);
  for (int copy = 0; copy < copies; ++copy) {
    for (int i : weight_operands) {
      const std::string name = copy == 0 ? absl::StrCat("w", i) : absl::StrCat("w", i, "_", copy);
      const bool variance = op.kind == OpKind::kBatchNorm && i == 4;
      weight_sets[copy].push_back(g.AddWeight(name, op.inputs[i].Plain(), DeterministicValues(op.inputs[i], name, variance)));
    }
  }
  for (int node = 0; node < nodes; ++node) {
    for (size_t j = 0; j < weight_operands.size(); ++j) operands[weight_operands[j]] = weight_sets[node % copies][j];
    if (varied >= 0) operands[varied] = varied_inputs[node / copies];
    for (size_t j = 0; j < chained.size(); ++j) operands[chained[j]] = recent[j];
    auto outputs = g.AddOp(op.kind, op.params, operands);
    if (!outputs.ok()) return outputs.status();
    if (!chained.empty()) {
      recent.insert(recent.begin(), (*outputs)[0]);
      recent.pop_back();
      if (node == nodes - 1) g.AddOutput("out0", (*outputs)[0]);
      continue;
    }
    for (size_t i = 0; i < outputs->size(); ++i) {
      g.AddOutput(node == 0 ? absl::StrCat("out", i) : absl::StrCat("out", i, "_", node), (*outputs)[i]);
    }
  }
  return SignatureModel{std::move(g), nodes};
}

Graph RunOverheadGraph(int inputs, int outputs) {
  Graph g;
  std::vector<TensorRef> in;
  for (int i = 0; i < std::max(inputs, 1); ++i) {
    in.push_back(g.AddInput(absl::StrCat("in", i), TensorType::RowMajor(DType::kFloat32, {1})));
  }
  for (int j = 0; j < std::max(outputs, 1); ++j) {
    g.AddOutput(absl::StrCat("out", j), *g.AddOp1(OpKind::kRelu, OpParams{}, {in[std::min<int>(j, in.size() - 1)]}));
  }
  return g;
}

absl::StatusOr<std::string> TimingModel(const Graph& graph) {
  std::vector<Node> nodes = graph.nodes();
  // Batch norm's variance operand (its fifth) must stay positive.
  std::vector<bool> variance(nodes.size(), false);
  for (const Node& n : nodes) {
    if (n.kind == OpKind::kBatchNorm && n.inputs.size() == 5) variance[n.inputs[4].node] = true;
  }
  bool filled = false;
  for (Node& n : nodes) {
    if (n.kind != OpKind::kWeight || n.data) continue;
    n.data = DeterministicValues(n.output_types[0], n.name, variance[n.id]);
    filled = true;
  }
  if (!filled) return ExportStandaloneOnnx(graph);
  auto with_values = Graph::Create(std::move(nodes), graph.outputs());
  if (!with_values.ok()) return with_values.status();
  return ExportStandaloneOnnx(*with_values);
}

}  // namespace taso::profiler
