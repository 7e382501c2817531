#include "optimizer/extract.h"

#include <coin/Cbc_C_Interface.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "profiler/signature.h"

namespace taso::optimizer {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Sized for indexing by class id.
int ClassCapacity(const EGraph& egraph) {
  const std::vector<EClassId> ids = egraph.ClassIds();
  return ids.empty() ? 0 : ids.back() + 1;
}

// Classes the roots need under `choice`, following chosen e-nodes' children.
// NotFound when a needed class has no choice.
absl::Status RestrictToNeeded(const EGraph& egraph, const std::vector<EClassId>& roots,
                              const std::vector<ENodeId>& pick, Extraction* out) {
  std::vector<EClassId> stack;
  for (EClassId r : roots) stack.push_back(egraph.Find(r));
  while (!stack.empty()) {
    const EClassId c = stack.back();
    stack.pop_back();
    if (out->choice.count(c)) continue;
    if (c >= static_cast<int>(pick.size()) || pick[c] < 0) {
      return absl::NotFoundError(absl::StrCat("e-class ", c, " has no acyclic e-node of known cost"));
    }
    out->choice[c] = pick[c];
    for (EClassId child : egraph.node(pick[c]).children) stack.push_back(egraph.Find(child));
  }
  return absl::OkStatus();
}

// Strongly connected components of a directed graph given by adjacency lists
// (iterative Tarjan, so deep graphs do not exhaust the stack).
std::vector<int> StronglyConnectedComponents(const std::vector<std::vector<int>>& adj) {
  const int n = static_cast<int>(adj.size());
  std::vector<int> index(n, -1), low(n, 0), comp(n, -1);
  std::vector<bool> on_stack(n, false);
  std::vector<int> stack;
  std::vector<std::pair<int, size_t>> calls;
  int next_index = 0, next_comp = 0;
  for (int start = 0; start < n; ++start) {
    if (index[start] >= 0) continue;
    calls.push_back({start, 0});
    index[start] = low[start] = next_index++;
    stack.push_back(start);
    on_stack[start] = true;
    while (!calls.empty()) {
      auto& [v, edge] = calls.back();
      if (edge < adj[v].size()) {
        const int w = adj[v][edge++];
        if (index[w] < 0) {
          index[w] = low[w] = next_index++;
          stack.push_back(w);
          on_stack[w] = true;
          calls.push_back({w, 0});
        } else if (on_stack[w]) {
          low[v] = std::min(low[v], index[w]);
        }
        continue;
      }
      const int done = v;
      calls.pop_back();
      if (!calls.empty()) low[calls.back().first] = std::min(low[calls.back().first], low[done]);
      if (low[done] == index[done]) {
        int w;
        do {
          w = stack.back();
          stack.pop_back();
          on_stack[w] = false;
          comp[w] = next_comp;
        } while (w != done);
        ++next_comp;
      }
    }
  }
  return comp;
}

struct CbcDeleter {
  void operator()(Cbc_Model* model) const { Cbc_deleteModel(model); }
};

// A problem gathered first and handed to CBC in one call: adding rows one
// at a time copies the matrix each time, which is quadratic.
class LinearProgram {
 public:
  int AddColumn(double lower, double upper, double objective, bool integer) {
    col_lower_.push_back(lower);
    col_upper_.push_back(upper);
    objective_.push_back(objective);
    integer_.push_back(integer);
    entries_.emplace_back();
    return static_cast<int>(entries_.size()) - 1;
  }
  void AddRow(const std::vector<int>& cols, const std::vector<double>& coefs, double lower, double upper) {
    const int row = static_cast<int>(row_lower_.size());
    for (size_t k = 0; k < cols.size(); ++k) entries_[cols[k]].push_back({row, coefs[k]});
    row_lower_.push_back(lower == -kInfinity ? -std::numeric_limits<double>::max() : lower);
    row_upper_.push_back(upper == kInfinity ? std::numeric_limits<double>::max() : upper);
  }
  void LoadInto(Cbc_Model* model) const {
    std::vector<CoinBigIndex> start = {0};
    std::vector<int> index;
    std::vector<double> value;
    for (const auto& column : entries_) {
      for (const auto& [row, coef] : column) {
        index.push_back(row);
        value.push_back(coef);
      }
      start.push_back(static_cast<CoinBigIndex>(index.size()));
    }
    Cbc_loadProblem(model, static_cast<int>(entries_.size()), static_cast<int>(row_lower_.size()), start.data(),
                    index.data(), value.data(), col_lower_.data(), col_upper_.data(), objective_.data(),
                    row_lower_.data(), row_upper_.data());
    for (size_t col = 0; col < integer_.size(); ++col) {
      if (integer_[col]) Cbc_setInteger(model, static_cast<int>(col));
    }
  }

 private:
  std::vector<double> col_lower_, col_upper_, objective_, row_lower_, row_upper_;
  std::vector<bool> integer_;
  std::vector<std::vector<std::pair<int, double>>> entries_;  // per column: (row, coefficient)
};

}  // namespace

absl::StatusOr<std::vector<double>> ENodeCosts(const EGraph& egraph, CostModel& cost) {
  std::vector<double> costs(egraph.enode_capacity(), kInfinity);
  std::vector<profiler::Signature> signatures;
  std::vector<ENodeId> measured;
  for (ENodeId id = 0; id < egraph.enode_capacity(); ++id) {
    if (!egraph.alive(id)) continue;
    const ENode node = egraph.Canonical(egraph.node(id));
    const EClassId cls = egraph.ClassOf(id);
    if (std::find(node.children.begin(), node.children.end(), cls) != node.children.end()) continue;
    auto types = egraph.InferTypes(node);
    if (!types.ok() || *types != egraph.eclass(cls).types) continue;
    const EOp& op = egraph.op(node.op);
    if (op.role == EOp::Role::kVariable || op.role == EOp::Role::kGetItem || egraph.IsFoldable(node)) {
      costs[id] = 0;
      continue;
    }
    profiler::Signature sig{op.kind, op.params, {}};
    for (EClassId child : node.children) sig.inputs.push_back(egraph.eclass(child).types[0]);
    signatures.push_back(std::move(sig));
    measured.push_back(id);
  }
  auto measured_costs = cost.SignatureCosts(signatures);
  if (!measured_costs.ok()) return measured_costs.status();
  for (size_t i = 0; i < measured.size(); ++i) costs[measured[i]] = (*measured_costs)[i];
  return costs;
}

double ExtractionCost(const Extraction& extraction, const std::vector<double>& costs) {
  double total = 0;
  for (const auto& [cls, node] : extraction.choice) total += costs[node];
  return total;
}

absl::StatusOr<Extraction> ExtractGreedy(const EGraph& egraph, const std::vector<EClassId>& roots,
                                         const std::vector<double>& costs) {
  std::vector<double> best(ClassCapacity(egraph), kInfinity);
  std::vector<ENodeId> pick(best.size(), -1);
  // Relax to a fixpoint. Only strict improvements are taken, so a choice never
  // comes to depend on its own class: a class reached through itself costs
  // at least what that class cost then.
  bool improved = true;
  while (improved) {
    improved = false;
    for (ENodeId id = 0; id < egraph.enode_capacity(); ++id) {
      if (costs[id] == kInfinity) continue;
      double total = costs[id];
      for (EClassId child : egraph.node(id).children) total += best[egraph.Find(child)];
      const EClassId cls = egraph.ClassOf(id);
      if (total + 1e-12 < best[cls]) {
        best[cls] = total;
        pick[cls] = id;
        improved = true;
      }
    }
  }
  Extraction out;
  if (absl::Status s = RestrictToNeeded(egraph, roots, pick, &out); !s.ok()) return s;
  out.cost_ms = ExtractionCost(out, costs);
  return out;
}

absl::StatusOr<Extraction> ExtractIlp(const EGraph& egraph, const std::vector<EClassId>& roots,
                                      const std::vector<double>& costs, absl::Duration time_limit,
                                      const Extraction* warm_start) {
  // The classes the outputs can reach through e-nodes of finite cost.
  std::vector<int> dense(ClassCapacity(egraph), -1);
  std::vector<EClassId> classes;
  std::vector<std::vector<ENodeId>> class_nodes;
  std::vector<EClassId> stack;
  for (EClassId r : roots) stack.push_back(egraph.Find(r));
  while (!stack.empty()) {
    const EClassId c = stack.back();
    stack.pop_back();
    if (dense[c] >= 0) continue;
    dense[c] = static_cast<int>(classes.size());
    classes.push_back(c);
    class_nodes.emplace_back();
    for (ENodeId id : egraph.eclass(c).nodes) {
      if (costs[id] == kInfinity) continue;
      class_nodes.back().push_back(id);
      for (EClassId child : egraph.node(id).children) stack.push_back(egraph.Find(child));
    }
  }
  for (EClassId r : roots) {
    if (class_nodes[dense[egraph.Find(r)]].empty()) {
      return absl::NotFoundError(absl::StrCat("output class ", r, " has no e-node of known cost"));
    }
  }
  // Columns: one binary per candidate e-node.
  std::vector<ENodeId> column_node;
  std::vector<int> node_column(egraph.enode_capacity(), -1);
  std::vector<std::vector<int>> adj(classes.size());
  for (size_t i = 0; i < classes.size(); ++i) {
    for (ENodeId id : class_nodes[i]) {
      node_column[id] = static_cast<int>(column_node.size());
      column_node.push_back(id);
      for (EClassId child : egraph.node(id).children) adj[i].push_back(dense[egraph.Find(child)]);
    }
  }
  const std::vector<int> comp = StronglyConnectedComponents(adj);
  std::vector<int> comp_size(classes.size() + 1, 0);
  for (int c : comp) ++comp_size[c];

  LinearProgram lp;
  for (size_t col = 0; col < column_node.size(); ++col) {
    const ENodeId id = column_node[col];
    bool possible = true;
    for (EClassId child : egraph.node(id).children) {
      possible = possible && !class_nodes[dense[egraph.Find(child)]].empty();
    }
    // Microseconds keep CBC's absolute tolerances far below real differences.
    lp.AddColumn(0, possible ? 1 : 0, costs[id] * 1000, /*integer=*/true);
  }
  std::vector<int> order_column(classes.size(), -1);
  for (size_t i = 0; i < classes.size(); ++i) {
    if (comp_size[comp[i]] >= 2) order_column[i] = lp.AddColumn(0, 1, 0, /*integer=*/false);
  }
  auto columns_of = [&](int dense_class) {
    std::vector<int> cols;
    for (ENodeId id : class_nodes[dense_class]) cols.push_back(node_column[id]);
    return cols;
  };
  for (EClassId r : std::set<EClassId>(roots.begin(), roots.end())) {
    const std::vector<int> cols = columns_of(dense[egraph.Find(r)]);
    lp.AddRow(cols, std::vector<double>(cols.size(), 1.0), 1, kInfinity);
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    const std::vector<int> cols = columns_of(static_cast<int>(i));
    if (cols.size() >= 2) lp.AddRow(cols, std::vector<double>(cols.size(), 1.0), -kInfinity, 1);
  }
  for (size_t i = 0; i < classes.size(); ++i) {
    for (ENodeId id : class_nodes[i]) {
      const int x = node_column[id];
      std::set<int> children;
      for (EClassId child : egraph.node(id).children) children.insert(dense[egraph.Find(child)]);
      for (int d : children) {
        // A chosen e-node needs an e-node chosen in each child class.
        std::vector<int> cols = columns_of(d);
        if (cols.empty()) continue;  // x is fixed to 0 above
        std::vector<double> coefs(cols.size(), 1.0);
        cols.push_back(x);
        coefs.push_back(-1.0);
        lp.AddRow(cols, coefs, 0, kInfinity);
        if (comp[i] != comp[d]) continue;
        // t_class - t_child - 2 x >= eps - 2: binding only when x = 1.
        const double eps = 1.0 / (comp_size[comp[i]] + 1);
        lp.AddRow({order_column[i], order_column[d], x}, {1.0, -1.0, -2.0}, eps - 2.0, kInfinity);
      }
    }
  }
  std::unique_ptr<Cbc_Model, CbcDeleter> model(Cbc_newModel());
  if (model == nullptr) return absl::InternalError("CBC could not create a model");
  Cbc_Model* m = model.get();
  Cbc_setLogLevel(m, 0);
  lp.LoadInto(m);
  if (warm_start != nullptr) {
    std::vector<int> cols;
    std::vector<double> values;
    for (size_t col = 0; col < column_node.size(); ++col) {
      auto it = warm_start->choice.find(egraph.ClassOf(column_node[col]));
      cols.push_back(static_cast<int>(col));
      values.push_back(it != warm_start->choice.end() && it->second == column_node[col] ? 1.0 : 0.0);
    }
    Cbc_setMIPStartI(m, static_cast<int>(cols.size()), cols.data(), values.data());
  }
  Cbc_setMaximumSeconds(m, std::max(0.01, absl::ToDoubleSeconds(time_limit)));
  Cbc_solve(m);
  const double* solution = Cbc_bestSolution(m);
  if (solution == nullptr) {
    if (Cbc_isSecondsLimitReached(m)) {
      return absl::UnavailableError("CBC found no solution within its time limit");
    }
    return absl::InternalError(absl::StrCat("CBC found no solution (status ", Cbc_status(m), ", secondary ",
                                            Cbc_secondaryStatus(m), ")"));
  }
  std::vector<ENodeId> pick(dense.size(), -1);
  for (size_t col = 0; col < column_node.size(); ++col) {
    if (solution[col] > 0.5) pick[egraph.ClassOf(column_node[col])] = column_node[col];
  }
  Extraction out;
  if (absl::Status s = RestrictToNeeded(egraph, roots, pick, &out); !s.ok()) {
    return absl::InternalError(absl::StrCat("CBC's solution is incomplete: ", s.message()));
  }
  out.cost_ms = ExtractionCost(out, costs);
  out.optimal = Cbc_isProvenOptimal(m) != 0;
  out.time_limited = Cbc_isSecondsLimitReached(m) != 0;
  return out;
}

absl::StatusOr<Graph> BuildGraph(const EGraph& egraph, const Extraction& extraction, const Graph& original,
                                 const std::vector<EClassId>& roots) {
  Graph g;
  std::map<std::string, TensorRef> variables;
  for (const Node& n : original.nodes()) {
    if (n.kind == OpKind::kInput) variables[n.name] = g.AddInput(n.name, n.output_types[0]);
  }
  // Per class: its tensor, or for a tuple class the node whose outputs it holds.
  std::map<EClassId, TensorRef> built;
  std::set<EClassId> in_progress;
  auto fail = [](const std::string& why) { return absl::FailedPreconditionError(why); };
  for (EClassId root : roots) {
    std::vector<std::pair<EClassId, bool>> stack = {{egraph.Find(root), false}};
    while (!stack.empty()) {
      const auto [cls, children_done] = stack.back();
      stack.pop_back();
      if (built.count(cls)) continue;
      auto chosen = extraction.choice.find(cls);
      if (chosen == extraction.choice.end()) return fail(absl::StrCat("class ", cls, " has no chosen e-node"));
      const ENode& node = egraph.node(chosen->second);
      if (!children_done) {
        if (!in_progress.insert(cls).second) return fail("the chosen e-nodes form a cycle");
        stack.push_back({cls, true});
        for (EClassId child : node.children) {
          const EClassId c = egraph.Find(child);
          if (built.count(c)) continue;
          if (in_progress.count(c)) return fail("the chosen e-nodes form a cycle");
          stack.push_back({c, false});
        }
        continue;
      }
      in_progress.erase(cls);
      const EOp& op = egraph.op(node.op);
      std::vector<TensorRef> inputs;
      for (EClassId child : node.children) inputs.push_back(built.at(egraph.Find(child)));
      switch (op.role) {
        case EOp::Role::kVariable: {
          auto it = variables.find(op.name);
          if (it == variables.end()) {
            if (op.kind == OpKind::kInput) return fail(absl::StrCat("input ", op.name, " is not in the graph"));
            it = variables.emplace(op.name, g.AddWeight(op.name, op.type, op.data)).first;
          }
          built[cls] = it->second;
          break;
        }
        case EOp::Role::kGetItem:
          built[cls] = TensorRef{inputs[0].node, op.item};
          break;
        case EOp::Role::kOperator:
        case EOp::Role::kOpaque: {
          auto outs = g.AddOp(op.kind, op.params, inputs);
          if (!outs.ok()) return fail(absl::StrCat("rebuilding ", OpLabel(op.kind, op.params), ": ", outs.status().message()));
          built[cls] = egraph.YieldsTuple(node.op) ? TensorRef{(*outs)[0].node, -1} : (*outs)[0];
          break;
        }
      }
    }
  }
  for (size_t i = 0; i < original.outputs().size(); ++i) {
    const GraphOutput& o = original.outputs()[i];
    const TensorRef t = built.at(egraph.Find(roots[i]));
    const TensorType& want = original.type(o.tensor);
    const TensorType& got = g.type(t);
    if (want.dims != got.dims || want.dtype != got.dtype) {
      return fail(absl::StrCat("output ", o.name, " would be ", got.ToString(), ", not ", want.ToString()));
    }
    g.AddOutput(o.name, t);
  }
  if (absl::Status s = g.Validate(); !s.ok()) return fail(absl::StrCat("extracted graph: ", s.message()));
  return g;
}

}  // namespace taso::optimizer
