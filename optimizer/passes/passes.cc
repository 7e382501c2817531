#include "optimizer/passes/passes.h"

#include <cmath>
#include <cstring>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "core/interpreter.h"
#include "optimizer/rewrite/apply.h"
#include "optimizer/rewrite/match.h"

namespace taso::optimizer {
namespace {

// The float values of a weight, or nullopt when it has none.
std::optional<std::vector<float>> Values(const Graph& g, TensorRef t) {
  const Node& n = g.node(t.node);
  if (n.kind != OpKind::kWeight || !n.data || n.output_types[0].dtype != DType::kFloat32) return std::nullopt;
  std::vector<float> v(n.output_types[0].num_elements());
  if (n.data->size() != v.size() * sizeof(float)) return std::nullopt;
  std::memcpy(v.data(), n.data->data(), n.data->size());
  return v;
}

// Whether `bias`, broadcast against an output of rank `out_rank` (N, C, ...),
// adds one value per channel: every dimension 1 but the channel axis's, which
// is `channels`. A [C] bias broadcasts along the last axis (width), not C.
bool PerChannel(const TensorType& bias, int out_rank, int64_t channels) {
  const int offset = out_rank - bias.rank();
  if (offset < 0 || out_rank < 2) return false;
  for (int axis = 0; axis < out_rank; ++axis) {
    const int64_t d = axis < offset ? 1 : bias.dims[axis - offset];
    if (d != (axis == 1 ? channels : 1)) return false;
  }
  return true;
}

std::shared_ptr<const std::string> Bytes(const std::vector<float>& v) {
  return std::make_shared<const std::string>(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
}

// Appends nodes to a node list and redirects tensors, then rebuilds.
class Editor {
 public:
  explicit Editor(const Graph& g) : nodes_(g.nodes()), outputs_(g.outputs()) {
    for (const Node& n : nodes_) names_.insert(n.name);
  }
  TensorRef Weight(const std::string& base, TensorType type, const std::vector<float>& values) {
    std::string name = base;
    for (int i = 1; names_.count(name); ++i) name = absl::StrCat(base, "_", i);
    names_.insert(name);
    Node n;
    n.id = static_cast<int>(nodes_.size());
    n.kind = OpKind::kWeight;
    n.name = name;
    n.output_types = {std::move(type)};
    n.data = Bytes(values);
    nodes_.push_back(std::move(n));
    return TensorRef{nodes_.back().id, 0};
  }
  TensorRef Op(OpKind kind, const OpParams& params, std::vector<TensorRef> inputs) {
    Node n;
    n.id = static_cast<int>(nodes_.size());
    n.kind = kind;
    n.params = params;
    n.inputs = std::move(inputs);
    nodes_.push_back(std::move(n));
    return TensorRef{nodes_.back().id, 0};
  }
  void Redirect(TensorRef from, TensorRef to) { redirect_.push_back({from, to}); }

  absl::StatusOr<Graph> Build() {
    auto follow = [&](TensorRef t) {
      for (const auto& [from, to] : redirect_) {
        if (from == t) return to;
      }
      return t;
    };
    for (Node& n : nodes_) {
      for (TensorRef& in : n.inputs) in = follow(in);
    }
    for (GraphOutput& o : outputs_) o.tensor = follow(o.tensor);
    auto g = Graph::Create(nodes_, outputs_);
    if (!g.ok()) return g.status();
    return RemoveDeadNodes(*g);
  }

 private:
  std::vector<Node> nodes_;
  std::vector<GraphOutput> outputs_;
  std::set<std::string> names_;
  std::vector<std::pair<TensorRef, TensorRef>> redirect_;
};

int Readers(const GraphIndex& index, TensorRef t) {
  int count = index.is_graph_output(t) ? 1 : 0;
  for (int c : index.consumers(t.node)) {
    for (const TensorRef& in : index.graph().node(c).inputs) count += in == t;
  }
  return count;
}

}  // namespace

absl::StatusOr<PassResult> FoldBatchNorm(const Graph& graph) {
  const GraphIndex index(graph);
  Editor editor(graph);
  int folded = 0;
  for (const Node& bn : graph.nodes()) {
    if (bn.kind != OpKind::kBatchNorm) continue;
    // Either conv -> bn, or conv -> ewadd(bias) -> bn; each value read once.
    TensorRef y = bn.inputs[0];
    std::optional<std::vector<float>> conv_bias;
    std::optional<TensorType> add_bias_type;  // checked once the channel count is known
    const Node* add = nullptr;
    if (graph.node(y.node).kind == OpKind::kEwAdd) {
      add = &graph.node(y.node);
      if (Readers(index, y) != 1) continue;
      const TensorRef b = graph.node(add->inputs[0].node).kind == OpKind::kConv2D ? add->inputs[1] : add->inputs[0];
      y = graph.node(add->inputs[0].node).kind == OpKind::kConv2D ? add->inputs[0] : add->inputs[1];
      conv_bias = Values(graph, b);
      if (!conv_bias) continue;
      add_bias_type = graph.type(b);
    }
    const Node& conv = graph.node(y.node);
    if (conv.kind != OpKind::kConv2D || conv.params.activation != Activation::kNone || Readers(index, y) != 1) continue;
    if (conv.inputs.size() > 2) {  // a bias input: it folds like a bias add
      if (add != nullptr) continue;
      conv_bias = Values(graph, conv.inputs[2]);
      if (!conv_bias) continue;
    }
    auto w = Values(graph, conv.inputs[1]);
    auto scale = Values(graph, bn.inputs[1]), shift = Values(graph, bn.inputs[2]);
    auto mean = Values(graph, bn.inputs[3]), var = Values(graph, bn.inputs[4]);
    if (!w || !scale || !shift || !mean || !var) continue;
    const int64_t channels = static_cast<int64_t>(scale->size());
    if (conv_bias && static_cast<int64_t>(conv_bias->size()) != channels) continue;
    if (add_bias_type && !PerChannel(*add_bias_type, graph.type(y).rank(), channels)) continue;
    const TensorType& wt = graph.type(conv.inputs[1]);
    if (wt.dims[0] != channels) continue;
    const int64_t per_channel = wt.num_elements() / channels;
    std::vector<float> new_w(*w), new_b(channels);
    for (int64_t c = 0; c < channels; ++c) {
      const float k = (*scale)[c] / std::sqrt((*var)[c] + bn.params.epsilon);
      for (int64_t i = 0; i < per_channel; ++i) new_w[c * per_channel + i] *= k;
      new_b[c] = (*shift)[c] + ((conv_bias ? (*conv_bias)[c] : 0.f) - (*mean)[c]) * k;
    }
    const std::string& wname = graph.node(conv.inputs[1].node).name;
    TensorRef w2 = editor.Weight(absl::StrCat(wname, "_bn"), wt.Plain(), new_w);
    std::vector<int64_t> bias_dims = {channels};
    for (int i = 2; i < graph.type(y).rank(); ++i) bias_dims.push_back(1);  // [C,1,1] broadcasts over N,C,H,W
    TensorRef b2 = editor.Weight(absl::StrCat(wname, "_bn_bias"), TensorType::RowMajor(DType::kFloat32, bias_dims), new_b);
    TensorRef c2 = editor.Op(OpKind::kConv2D, conv.params, {conv.inputs[0], w2});
    TensorRef out = editor.Op(OpKind::kEwAdd, {}, {c2, b2});
    editor.Redirect(TensorRef{bn.id, 0}, out);
    ++folded;
  }
  if (folded == 0) return PassResult{graph, 0};
  auto g = editor.Build();
  if (!g.ok()) return g.status();
  return PassResult{std::move(*g), folded};
}

absl::StatusOr<PassResult> FoldConstants(const Graph& graph) {
  const GraphIndex index(graph);
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  // Values of constant operator nodes whose weights all carry data.
  std::map<int, std::vector<FloatTensor>> value;
  for (int id : *order) {
    const Node& n = graph.node(id);
    if (n.kind == OpKind::kWeight) {
      auto v = Values(graph, TensorRef{id, 0});
      if (v) value[id] = {FloatTensor{n.output_types[0], std::move(*v)}};
      continue;
    }
    if (n.kind == OpKind::kInput || !index.is_constant(id)) continue;
    std::vector<const FloatTensor*> in;
    bool known = true;
    for (const TensorRef& r : n.inputs) {
      auto it = value.find(r.node);
      if (it == value.end()) {
        known = false;
        break;
      }
      in.push_back(&it->second[r.index]);
    }
    if (!known) continue;
    auto out = EvalOpFloat(n.kind, n.params, in);
    if (out.ok()) value[id] = std::move(*out);
  }
  // Replace each computed value that something non-constant (or an output) reads.
  // Equal values (same type, split records included, and bytes) become one
  // weight, an existing weight when one holds them: the search may leave several copies of one merged
  // weight (e.g. one per step of an unrolled RNN), and each copy would be
  // stored and streamed from memory separately.
  Editor editor(graph);
  std::map<std::pair<std::string, std::string>, TensorRef> by_value;  // (type, bytes)
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kWeight && n.data && n.output_types[0].dtype == DType::kFloat32 &&
        n.output_types[0].is_row_major()) {
      by_value.emplace(std::make_pair(n.output_types[0].ToString(), *n.data), TensorRef{n.id, 0});
    }
  }
  int folded = 0;
  for (const auto& [id, outs] : value) {
    const Node& n = graph.node(id);
    if (n.kind == OpKind::kWeight) continue;
    for (size_t k = 0; k < outs.size(); ++k) {
      const TensorRef t{id, static_cast<int>(k)};
      bool frontier = index.is_graph_output(t);
      for (int c : index.consumers(id)) frontier = frontier || !value.count(c);
      if (!frontier) continue;
      // Row-major values, but the split records kept: a split downstream may
      // undo a concat that is now folded into this weight.
      TensorType type = graph.node(id).output_types[k];
      type.strides = RowMajorStrides(type.dims);
      auto [it, fresh] = by_value.try_emplace(std::make_pair(type.ToString(), *Bytes(outs[k].data)));
      if (fresh) {
        it->second = editor.Weight(absl::StrCat("folded_", OpKindName(n.kind), "_", id, "_", k), type, outs[k].data);
      }
      editor.Redirect(t, it->second);
      ++folded;
    }
  }
  if (folded == 0) return PassResult{graph, 0};
  auto g = editor.Build();
  if (!g.ok()) return g.status();
  return PassResult{std::move(*g), folded};
}

namespace {

// The parts' widths along the split's axis.
std::vector<int64_t> PartSizes(const Node& split) {
  std::vector<int64_t> sizes;
  for (const TensorType& t : split.output_types) sizes.push_back(t.dims[split.params.axis]);
  return sizes;
}

// `graph` with `inner` (a split of part `part` of split `outer`, same axis,
// that part read by nothing else) and `outer` replaced by one split.
absl::StatusOr<Graph> MergeSplitPair(const Graph& graph, const Node& outer, const Node& inner, int part) {
  std::vector<Node> nodes = graph.nodes();
  std::vector<GraphOutput> outputs = graph.outputs();
  Node merged;
  merged.id = static_cast<int>(nodes.size());
  merged.kind = OpKind::kSplit;
  merged.params.axis = outer.params.axis;
  merged.inputs = outer.inputs;
  // Where each old part lands among the merged split's outputs.
  std::map<std::pair<int, int>, int> moved;
  const std::vector<int64_t> outer_sizes = PartSizes(outer), inner_sizes = PartSizes(inner);
  for (int i = 0; i < static_cast<int>(outer_sizes.size()); ++i) {
    if (i != part) {
      moved[{outer.id, i}] = static_cast<int>(merged.params.sizes.size());
      merged.params.sizes.push_back(outer_sizes[i]);
      continue;
    }
    for (int j = 0; j < static_cast<int>(inner_sizes.size()); ++j) {
      moved[{inner.id, j}] = static_cast<int>(merged.params.sizes.size());
      merged.params.sizes.push_back(inner_sizes[j]);
    }
  }
  auto follow = [&](TensorRef& t) {
    if (auto it = moved.find({t.node, t.index}); it != moved.end()) t = TensorRef{merged.id, it->second};
  };
  for (Node& n : nodes) {
    for (TensorRef& in : n.inputs) follow(in);
  }
  for (GraphOutput& o : outputs) follow(o.tensor);
  nodes.push_back(std::move(merged));
  auto g = Graph::Create(std::move(nodes), std::move(outputs));
  if (!g.ok()) return g.status();
  return RemoveDeadNodes(*g);
}

}  // namespace

absl::StatusOr<PassResult> FlattenSplits(const Graph& graph) {
  Graph g = graph;
  int removed = 0;
  // Pairs that could not merge (a reader needing a part's concat record):
  // by the outer split's input and the inner split's output types, which
  // survive the renumbering a rebuild does.
  std::set<std::string> refused;
  for (bool again = true; again;) {
    again = false;
    const GraphIndex index(g);
    for (int id : index.nodes_of(OpKind::kSplit)) {
      const Node& inner = g.node(id);
      const TensorRef from = inner.inputs[0];
      const Node& outer = g.node(from.node);
      if (outer.kind != OpKind::kSplit || outer.params.axis != inner.params.axis || Readers(index, from) != 1) continue;
      std::string key = absl::StrCat(outer.inputs[0].node, ":", outer.inputs[0].index, "/", from.index);
      for (const TensorType& t : inner.output_types) absl::StrAppend(&key, t.ToString());
      if (refused.count(key)) continue;
      auto merged = MergeSplitPair(g, outer, inner, from.index);
      if (!merged.ok()) {
        refused.insert(std::move(key));
        continue;
      }
      g = std::move(*merged);
      ++removed;
      again = true;
      break;
    }
  }
  return PassResult{std::move(g), removed};
}

namespace {

// Whether transposing by `inner`, then by `outer`, moves no axis: ONNX's
// Transpose gives output axis i the input's axis perm[i], so the pair's
// output axis i is the input's axis inner[outer[i]].
bool ComposesToIdentity(const std::vector<int>& inner, const std::vector<int>& outer) {
  if (inner.size() != outer.size()) return false;
  const int rank = static_cast<int>(outer.size());
  for (int i = 0; i < rank; ++i) {
    if (outer[i] < 0 || outer[i] >= rank || inner[outer[i]] != i) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<PassResult> RemoveTransposePairs(const Graph& graph) {
  const GraphIndex index(graph);
  Editor editor(graph);
  int removed = 0;
  for (const Node& outer : graph.nodes()) {
    if (outer.kind != OpKind::kTranspose) continue;
    const Node& inner = graph.node(outer.inputs[0].node);
    const TensorRef pair_output{outer.id, 0};
    // A graph output keeps its node (an output cannot be an input's name).
    if (inner.kind != OpKind::kTranspose || index.is_graph_output(pair_output) ||
        !ComposesToIdentity(inner.params.perm, outer.params.perm)) {
      continue;
    }
    editor.Redirect(pair_output, inner.inputs[0]);
    ++removed;
  }
  if (removed == 0) return PassResult{graph, 0};
  auto g = editor.Build();
  if (!g.ok()) return g.status();
  return PassResult{std::move(*g), removed};
}

}  // namespace taso::optimizer
