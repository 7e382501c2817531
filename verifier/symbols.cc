#include "verifier/symbols.h"

#include "absl/strings/str_cat.h"
#include "core/op_registry.h"

namespace taso::verifier {

int64_t PermutationCode(const std::vector<int>& perm) {
  const int64_t rank = static_cast<int64_t>(perm.size());
  int64_t digits = 0;
  for (int p : perm) digits = digits * rank + p;
  return rank * 10000 + digits;
}

Symbols::Symbols(z3::context& ctx) : ctx_(ctx), tensor_(ctx.uninterpreted_sort("T")) {}

z3::expr Symbols::Apply(const std::string& name, const std::vector<z3::expr>& params,
                        const std::vector<z3::expr>& args) {
  auto it = functions_.find(name);
  if (it == functions_.end()) {
    z3::sort_vector domain(ctx_);
    for (size_t i = 0; i < params.size(); ++i) domain.push_back(ctx_.int_sort());
    for (size_t i = 0; i < args.size(); ++i) domain.push_back(tensor_);
    it = functions_.emplace(name, ctx_.function(name.c_str(), domain, tensor_)).first;
  }
  const z3::func_decl& f = it->second;
  if (f.arity() != params.size() + args.size()) {
    throw z3::exception(absl::StrCat("function ", name, " applied with the wrong arity").c_str());
  }
  z3::expr_vector all(ctx_);
  for (const z3::expr& p : params) all.push_back(p);
  for (const z3::expr& a : args) all.push_back(a);
  return f(all);
}

z3::expr Symbols::Variable(const std::string& name) {
  auto it = variables_.find(name);
  if (it == variables_.end()) {
    it = variables_.emplace(name, ctx_.constant(("v!" + name).c_str(), tensor_)).first;
  }
  return it->second;
}

absl::StatusOr<Symbols::Signature> Symbols::SignatureOf(OpKind kind, const OpParams& p,
                                                       const std::vector<TensorType>& in, int output) const {
  auto act = [](Activation a) -> absl::StatusOr<int64_t> {
    if (a == Activation::kNone) return kActNone;
    if (a == Activation::kRelu) return kActRelu;
    return absl::UnimplementedError(absl::StrCat("activation ", ActivationName(a), " has no axioms"));
  };
  auto pad = [](Padding x) -> int64_t { return x == Padding::kSame ? kPadSame : kPadValid; };
  auto dims = [](const std::vector<int64_t>& d) { return std::vector<int64_t>(d.begin(), d.end()); };
  switch (kind) {
    case OpKind::kEwAdd:
    case OpKind::kEwMul: {
      const bool broadcast = in.size() == 2 && in[0].dims != in[1].dims;
      return Signature{absl::StrCat(kind == OpKind::kEwAdd ? "ewadd" : "ewmul", broadcast ? "_bcast" : ""), {}};
    }
    // A scalar times a scalar is an element-wise product of equal shapes.
    case OpKind::kScalarMul:
      return Signature{!in.empty() && in[0].dims.empty() ? "ewmul" : "smul", {}};
    case OpKind::kRelu: return Signature{"relu", {}};
    case OpKind::kTanh: return Signature{"tanh", {}};
    case OpKind::kSigmoid: return Signature{"sigmoid", {}};
    // Layout (strides_only) changes no value; equal values with different
    // layouts never share a fingerprint, and the re-check compares types.
    case OpKind::kTranspose: return Signature{"transpose", {PermutationCode(p.perm)}};
    case OpKind::kMatMul: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      const size_t rank = in.empty() ? 2 : in[0].dims.size();
      return Signature{rank == 2 ? std::string("matmul") : absl::StrCat("matmul_r", rank), {*a}};
    }
    case OpKind::kConv2D: {
      auto a = act(p.activation);
      if (!a.ok()) return a.status();
      // groups = C_in / weight.dim[1], as shape inference has checked.
      int64_t groups = 1;
      if (in.size() == 2 && in[0].dims.size() == 4 && in[1].dims.size() == 4 && in[1].dims[1] > 0) {
        groups = in[0].dims[1] / in[1].dims[1];
      }
      return Signature{"conv2d", {p.stride_h, p.stride_w, pad(p.padding), *a, groups}};
    }
    case OpKind::kPoolAvg:
      return Signature{"pool_avg",
                       {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding), p.count_include_pad ? 1 : 0}};
    case OpKind::kPoolMax:
      return Signature{"pool_max", {p.kernel_h, p.kernel_w, p.stride_h, p.stride_w, pad(p.padding)}};
    case OpKind::kConcat: return Signature{"concat", {p.axis}};
    case OpKind::kSplit:
      if (!p.sizes.empty()) return absl::UnimplementedError("split with explicit sizes has no axioms");
      return Signature{absl::StrCat("split_", output), {p.axis}};
    case OpKind::kEnlarge: return Signature{"enlarge", {p.kernel_h, p.kernel_w}};
    case OpKind::kConstPool: return Signature{"const_pool", dims(p.shape)};
    case OpKind::kConstIConv: return Signature{"const_iconv", dims(p.shape)};
    case OpKind::kConstIMatMul: return Signature{"const_imatmul", {p.shape.empty() ? 0 : p.shape[0]}};
    case OpKind::kConstOnes: return Signature{absl::StrCat("const_ones_r", p.shape.size()), dims(p.shape)};
    case OpKind::kReshape: return Signature{absl::StrCat("reshape_r", p.shape.size()), dims(p.shape)};
    case OpKind::kMergeGConv: return Signature{"merge_gconv", {p.groups, p.count}};
    default:
      return absl::UnimplementedError(absl::StrCat("operator ", OpKindName(kind), " has no axioms"));
  }
}

absl::StatusOr<std::vector<z3::expr>> GraphTerms(Symbols& symbols, const Graph& graph,
                                                 std::set<std::string>* used_functions) {
  try {
    auto order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    // terms[node][output]
    std::vector<std::vector<z3::expr>> terms(graph.num_nodes());
    for (int id : *order) {
      const Node& node = graph.node(id);
      if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight) {
        terms[id].push_back(symbols.Variable(node.name));
        continue;
      }
      std::vector<z3::expr> args;
      for (const TensorRef& in : node.inputs) args.push_back(terms[in.node][in.index]);
      if (node.kind == OpKind::kConcat && args.size() > 2) {
        // n-ary concat nests to the left, as its split tree records.
        auto sig = symbols.SignatureOf(node.kind, node.params, {}, 0);
        if (!sig.ok()) return sig.status();
        z3::expr acc = args[0];
        for (size_t i = 1; i < args.size(); ++i) {
          acc = symbols.Apply(sig->name, {symbols.ctx().int_val(sig->params[0])}, {acc, args[i]});
        }
        if (used_functions) used_functions->insert(sig->name);
        terms[id].push_back(acc);
        continue;
      }
      std::vector<TensorType> input_types;
      for (const TensorRef& in : node.inputs) input_types.push_back(graph.type(in));
      const int outputs = static_cast<int>(node.output_types.size());
      for (int o = 0; o < outputs; ++o) {
        auto sig = symbols.SignatureOf(node.kind, node.params, input_types, o);
        if (!sig.ok()) return absl::Status(sig.status().code(), absl::StrCat(DescribeNode(node), ": ", sig.status().message()));
        std::vector<z3::expr> params;
        for (int64_t v : sig->params) params.push_back(symbols.ctx().int_val(static_cast<int64_t>(v)));
        if (used_functions) used_functions->insert(sig->name);
        terms[id].push_back(symbols.Apply(sig->name, params, args));
      }
    }
    std::vector<z3::expr> outputs;
    for (const GraphOutput& out : graph.outputs()) outputs.push_back(terms[out.tensor.node][out.tensor.index]);
    return outputs;
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
}

}  // namespace taso::verifier
