#include "verifier/symbols.h"

#include "absl/strings/str_cat.h"
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

absl::StatusOr<std::vector<z3::expr>> GraphTerms(Symbols& symbols, const Graph& graph,
                                                 std::set<std::string>* used_functions, GraphConditions* conditions,
                                                 OpenFactScope* open) {
  try {
    auto order = graph.TopologicalOrder();
    if (!order.ok()) return order.status();
    if (conditions) conditions->assign(graph.num_nodes(), {});
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
      const int outputs = static_cast<int>(node.output_types.size());
      auto sigs = NodeSignatures(node.kind, node.params, input_types, outputs);
      if (!sigs.ok()) {
        return absl::Status(sigs.status().code(), absl::StrCat(DescribeNode(node), ": ", sigs.status().message()));
      }
      auto apply = [&](ProofSignature& sig, const std::vector<z3::expr>& operands) {
        std::vector<z3::expr> params;
        if (open) OpenFact(open->which, open->vars, sig);
        for (size_t k = 0; k < sig.params.size(); ++k) {
          if (IsFactVariable(sig.params[k])) {
            params.push_back(symbols.ctx().int_const(absl::StrCat(open->prefix, -1 - sig.params[k]).c_str()));
          } else {
            params.push_back(symbols.ctx().int_val(static_cast<int64_t>(sig.params[k])));
          }
        }
        if (used_functions) used_functions->insert(sig.name);
        return symbols.Apply(sig.name, params, operands);
      };
      if (node.kind == OpKind::kConcat && args.size() > 2) {
        // n-ary concat nests to the left, as its split tree records.
        z3::expr acc = args[0];
        for (size_t i = 1; i < args.size(); ++i) acc = apply((*sigs)[i - 1], {acc, args[i]});
        terms[id].push_back(acc);
      } else {
        for (int o = 0; o < outputs; ++o) terms[id].push_back(apply((*sigs)[o], args));
      }
      if (conditions) (*conditions)[id] = std::move(*sigs);
    }
    std::vector<z3::expr> outputs;
    for (const GraphOutput& out : graph.outputs()) outputs.push_back(terms[out.tensor.node][out.tensor.index]);
    return outputs;
  } catch (const z3::exception& e) {
    return absl::InternalError(absl::StrCat("z3: ", e.msg()));
  }
}

}  // namespace taso::verifier
