#include "verifier/symbols.h"

#include "absl/strings/str_cat.h"
#include "core/decomposition.h"
#include "core/op_registry.h"

namespace taso::verifier {

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

z3::expr_vector Symbols::ParseSmt2(const std::string& text) {
  z3::sort_vector sorts(ctx_);
  sorts.push_back(tensor_);
  z3::func_decl_vector decls(ctx_);
  for (const auto& [name, decl] : functions_) decls.push_back(decl);
  return ctx_.parse_string(text.c_str(), sorts, decls);
}

z3::expr Symbols::Variable(const std::string& name) {
  auto it = variables_.find(name);
  if (it == variables_.end()) {
    it = variables_.emplace(name, ctx_.constant(("v!" + name).c_str(), tensor_)).first;
  }
  return it->second;
}

std::string Symbols::FreshPrefix(const std::string& stem) { return absl::StrCat(stem, "!", fresh_++, "!"); }

namespace {

// Builds the terms of operators, recording the signatures they applied.
class TermBuilder {
 public:
  TermBuilder(Symbols& symbols, std::set<std::string>* used_functions, OpenFactScope* open)
      : symbols_(symbols), used_functions_(used_functions), open_(open) {}

  // The terms of `kind` applied to `args` (one per output). `applied`
  // receives the signatures, in the order NodeSignatures gives them.
  absl::StatusOr<std::vector<z3::expr>> Operator(OpKind kind, const OpParams& params, const std::vector<z3::expr>& args,
                                                 const std::vector<TensorType>& input_types, int outputs,
                                                 std::vector<ProofSignature>& applied) {
    if (IsComposite(kind)) return Composite(kind, params, args, input_types, applied);
    auto sigs = NodeSignatures(kind, params, input_types, outputs);
    if (!sigs.ok()) return sigs.status();
    std::vector<z3::expr> terms;
    if (kind == OpKind::kConcat && args.size() > 2) {
      // n-ary concat nests to the left, as its split tree records.
      z3::expr acc = args[0];
      for (size_t i = 1; i < args.size(); ++i) acc = Apply((*sigs)[i - 1], {acc, args[i]});
      terms.push_back(acc);
    } else {
      for (int o = 0; o < outputs; ++o) terms.push_back(Apply((*sigs)[o], args));
    }
    applied.insert(applied.end(), sigs->begin(), sigs->end());
    return terms;
  }

 private:
  // A composite stands for its decomposition: the terms are the
  // decomposition's, over the operands' terms.
  absl::StatusOr<std::vector<z3::expr>> Composite(OpKind kind, const OpParams& params,
                                                  const std::vector<z3::expr>& args,
                                                  const std::vector<TensorType>& input_types,
                                                  std::vector<ProofSignature>& applied) {
    auto g = DecompositionOf(kind, params, input_types);
    if (!g.ok()) return g.status();
    std::vector<std::vector<z3::expr>> terms(g->num_nodes());
    for (const Node& node : g->nodes()) {  // in topological order, as NodeSignatures walks it
      if (node.kind == OpKind::kInput) {
        terms[node.id].push_back(args[node.id]);  // node i is operand i
        continue;
      }
      std::vector<z3::expr> operands;
      std::vector<TensorType> types;
      for (const TensorRef& in : node.inputs) {
        operands.push_back(terms[in.node][in.index]);
        types.push_back(g->type(in));
      }
      auto out = Operator(node.kind, node.params, operands, types, static_cast<int>(node.output_types.size()), applied);
      if (!out.ok()) return out.status();
      terms[node.id] = *std::move(out);
    }
    std::vector<z3::expr> outputs;
    for (const GraphOutput& out : g->outputs()) outputs.push_back(terms[out.tensor.node][out.tensor.index]);
    return outputs;
  }

  z3::expr Apply(ProofSignature& sig, const std::vector<z3::expr>& operands) {
    std::vector<z3::expr> params;
    if (open_) OpenFact(open_->which, open_->vars, sig);
    for (size_t k = 0; k < sig.params.size(); ++k) {
      if (IsFactVariable(sig.params[k])) {
        params.push_back(symbols_.ctx().int_const(absl::StrCat(open_->prefix, -1 - sig.params[k]).c_str()));
      } else {
        params.push_back(symbols_.ctx().int_val(static_cast<int64_t>(sig.params[k])));
      }
    }
    if (used_functions_) used_functions_->insert(sig.name);
    return symbols_.Apply(sig.name, params, operands);
  }

  Symbols& symbols_;
  std::set<std::string>* used_functions_;
  OpenFactScope* open_;
};

}  // namespace

absl::StatusOr<std::vector<z3::expr>> GraphTerms(Symbols& symbols, const Graph& graph,
                                                 std::set<std::string>* used_functions, GraphConditions* conditions,
                                                 OpenFactScope* open) {
  try {
    auto order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    if (conditions) conditions->assign(graph.num_nodes(), {});
    TermBuilder builder(symbols, used_functions, open);
    // terms[node][output]
    std::vector<std::vector<z3::expr>> terms(graph.num_nodes());
    for (int id : *order) {
      const Node& node = graph.node(id);
      if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight) {
        terms[id].push_back(symbols.Variable(node.name));
        continue;
      }
      std::vector<z3::expr> args;
      std::vector<TensorType> input_types;
      for (const TensorRef& in : node.inputs) {
        args.push_back(terms[in.node][in.index]);
        input_types.push_back(graph.type(in));
      }
      std::vector<ProofSignature> applied;
      auto out = builder.Operator(node.kind, node.params, args, input_types,
                                  static_cast<int>(node.output_types.size()), applied);
      if (!out.ok()) {
        return absl::Status(out.status().code(), absl::StrCat(DescribeNode(node), ": ", out.status().message()));
      }
      terms[id] = *std::move(out);
      if (conditions) (*conditions)[id] = std::move(applied);
    }
    std::vector<z3::expr> outputs;
    for (const GraphOutput& out : graph.outputs()) outputs.push_back(terms[out.tensor.node][out.tensor.index]);
    return outputs;
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
}

}  // namespace taso::verifier
