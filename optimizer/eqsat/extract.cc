#include "optimizer/eqsat/extract.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "optimizer/eqsat/extract_internal.h"
#include "costs/signature.h"

namespace taso::optimizer {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Sized for indexing by class id.
int ClassCapacity(const EGraph& egraph) {
  const std::vector<EClassId> ids = egraph.ClassIds();
  return ids.empty() ? 0 : ids.back() + 1;
}

}  // namespace

namespace extract_internal {

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


// The classes the roots need under `pick` (per class: an e-node or -1),
// following chosen e-nodes' children; every other class's pick becomes -1.
// NotFound when a needed class has none.
absl::Status RestrictPick(const ExtractionProblem& p, std::vector<int>& pick) {
  std::vector<int> kept(pick.size(), -1);
  std::vector<int> stack(p.roots.begin(), p.roots.end());
  while (!stack.empty()) {
    const int c = stack.back();
    stack.pop_back();
    if (kept[c] >= 0) continue;
    if (pick[c] < 0) {
      return absl::NotFoundError(absl::StrCat("e-class ", p.class_id[c], " has no acyclic e-node of known cost"));
    }
    kept[c] = pick[c];
    for (int d : p.node_children[pick[c]]) stack.push_back(d);
  }
  pick = std::move(kept);
  return absl::OkStatus();
}

bool RestrictAcyclic(const ExtractionProblem& p, std::vector<int>& pick) {
  return RestrictPick(p, pick).ok() && FindCycles(p, pick, 1).empty();
}

double PickCost(const ExtractionProblem& p, const std::vector<int>& pick) {
  double total = 0;
  for (int n : pick) total += n >= 0 ? p.node_cost[n] : 0;
  return total;
}

// Greedy over the e-nodes where `usable` (all when empty), with `cost` in
// place of the e-nodes' costs: per class, the pick of least tree cost.
// Relaxed to a fixpoint taking only strict improvements, so with costs >= 0
// a choice never comes to depend on its own class: a class reached through
// itself costs at least what that class cost then.
std::vector<int> GreedyPick(const ExtractionProblem& p, const std::vector<double>& cost,
                            const std::vector<bool>& usable) {
  std::vector<double> best(p.class_id.size(), kInfinity);
  std::vector<int> pick(p.class_id.size(), -1);
  bool improved = true;
  while (improved) {
    improved = false;
    for (size_t n = 0; n < p.node_id.size(); ++n) {
      if (!usable.empty() && !usable[n]) continue;
      double total = cost[n];
      for (int d : p.node_children[n]) total += best[d];
      const int c = p.node_class[n];
      if (total + 1e-12 < best[c]) {
        best[c] = total;
        pick[c] = static_cast<int>(n);
        improved = true;
      }
    }
  }
  return pick;
}

// Cycles the picks of the needed classes form, each as its classes in order
// (each one's pick reads the next, the last's reads the first): one per back
// edge of a depth-first search from the roots, at most `limit`.
std::vector<std::vector<int>> FindCycles(const ExtractionProblem& p, const std::vector<int>& pick, size_t limit) {
  std::vector<std::vector<int>> cycles;
  std::vector<char> color(p.class_id.size(), 0);  // 0 unseen, 1 on the path, 2 done
  std::vector<int> depth(p.class_id.size(), -1);
  std::vector<std::pair<int, size_t>> path;  // (class, next child)
  for (int root : p.roots) {
    if (color[root] != 0 || pick[root] < 0) continue;
    color[root] = 1;
    depth[root] = 0;
    path.push_back({root, 0});
    while (!path.empty() && cycles.size() < limit) {
      auto& [c, next] = path.back();
      const std::vector<int>& children = p.node_children[pick[c]];
      if (next < children.size()) {
        const int d = children[next++];
        if (color[d] == 1) {
          std::vector<int> cycle;
          for (size_t i = depth[d]; i < path.size(); ++i) cycle.push_back(path[i].first);
          cycles.push_back(std::move(cycle));
        } else if (color[d] == 0 && pick[d] >= 0) {
          color[d] = 1;
          depth[d] = static_cast<int>(path.size());
          path.push_back({d, 0});
        }
        continue;
      }
      color[c] = 2;
      path.pop_back();
    }
    if (cycles.size() >= limit) break;
  }
  return cycles;
}

}  // namespace extract_internal

using extract_internal::FindCycles;
using extract_internal::GreedyPick;
using extract_internal::PickCost;
using extract_internal::RestrictPick;
using extract_internal::StronglyConnectedComponents;

namespace {

// An opaque operator's operands that are weights, as its signature in the
// input graph has them (profiler::NodeSignature): a child class holding a
// weight is that weight's value.
void AddConstantOperands(const EGraph& egraph, const ENode& node, profiler::Signature& sig) {
  for (size_t i = 0; i < node.children.size(); ++i) {
    for (ENodeId member : egraph.eclass(node.children[i]).nodes) {
      const EOp& op = egraph.op(egraph.node(member).op);
      if (op.role != EOp::Role::kVariable || op.kind != OpKind::kWeight) continue;
      profiler::AddConstantOperand(sig, static_cast<int>(i), op.data);
      break;
    }
  }
}

// Classes whose value ONNX Runtime has at load: the constant ones, and what
// opaque operators it folds compute from them (FoldedAtLoad's rule, through
// the items of their tuples), to a fixpoint.
std::vector<bool> RuntimeFoldedClasses(const EGraph& egraph) {
  std::vector<bool> folded(ClassCapacity(egraph), false);
  for (EClassId c : egraph.ClassIds()) folded[c] = egraph.eclass(c).constant;
  for (bool changed = true; changed;) {
    changed = false;
    for (ENodeId id = 0; id < egraph.enode_capacity(); ++id) {
      if (!egraph.alive(id) || folded[egraph.ClassOf(id)]) continue;
      const ENode node = egraph.Canonical(egraph.node(id));
      const EOp& op = egraph.op(node.op);
      bool folds = false;
      if (op.role == EOp::Role::kGetItem) {
        folds = folded[node.children[0]];
      } else if (op.role == EOp::Role::kOpaque) {
        std::vector<TensorType> inputs;
        std::vector<bool> at_load;
        for (EClassId child : node.children) {
          inputs.push_back(egraph.eclass(child).types[0]);
          at_load.push_back(folded[child]);
        }
        folds = RuntimeFoldsOpaque(op.params.opaque, inputs, at_load);
      }
      if (folds) folded[egraph.ClassOf(id)] = changed = true;
    }
  }
  return folded;
}

}  // namespace

absl::StatusOr<std::vector<double>> ENodeCosts(const EGraph& egraph, CostModel& cost, absl::Time deadline,
                                               int* unpriced, ENodeId always_below) {
  std::vector<double> costs(egraph.enode_capacity(), kInfinity);
  std::vector<profiler::Signature> signatures;
  std::vector<ENodeId> measured;
  const std::vector<bool> runtime_folded = RuntimeFoldedClasses(egraph);
  for (ENodeId id = 0; id < egraph.enode_capacity(); ++id) {
    if (!egraph.alive(id)) continue;
    const ENode node = egraph.Canonical(egraph.node(id));
    const EClassId cls = egraph.ClassOf(id);
    if (std::find(node.children.begin(), node.children.end(), cls) != node.children.end()) continue;
    auto types = egraph.InferTypes(node);
    if (!types.ok() || *types != egraph.eclass(cls).types) continue;
    const EOp& op = egraph.op(node.op);
    if (op.role == EOp::Role::kVariable || op.role == EOp::Role::kGetItem) {
      costs[id] = 0;
      continue;
    }
    if (egraph.IsFoldable(node)) {
      // Folded into a new weight after the search: free at run time, but
      // each distinct one is more memory to stream (see kFoldedElementCostMs).
      // Only values larger than each of their inputs (concatenated or
      // enlarged weights) add memory; a transposed or split weight is free,
      // or extraction would transpose activations at run time instead.
      int64_t elements = 0, largest_input = 0;
      for (const TensorType& t : egraph.eclass(cls).types) elements += t.num_elements();
      for (EClassId child : node.children) {
        for (const TensorType& t : egraph.eclass(child).types) largest_input = std::max(largest_input, t.num_elements());
      }
      costs[id] = elements > largest_input ? kFoldedElementCostMs * static_cast<double>(elements) : 0;
      continue;
    }
    if (op.role == EOp::Role::kOpaque && runtime_folded[cls]) {
      costs[id] = 0;  // folded by the runtime at load, as GraphCost has it
      continue;
    }
    profiler::Signature sig{op.kind, op.params, {}, {}};
    for (EClassId child : node.children) sig.inputs.push_back(egraph.eclass(child).types[0]);
    if (op.role == EOp::Role::kOpaque) AddConstantOperands(egraph, node, sig);
    signatures.push_back(std::move(sig));
    measured.push_back(id);
  }
  // In chunks, oldest e-nodes first (the input's, whose costs are known and
  // which are always costed, then each round's), until the deadline: the
  // rest stay +infinity.
  constexpr size_t kChunk = 16;  // a chunk of new operators took seconds to profile on a loaded cpu
  size_t done = 0;
  while (done < signatures.size() && (measured[done] < always_below || absl::Now() < deadline)) {
    const size_t end = std::min(signatures.size(), done + kChunk);
    auto chunk = cost.SignatureCosts(
        std::vector<profiler::Signature>(signatures.begin() + done, signatures.begin() + end));
    if (!chunk.ok()) return chunk.status();
    for (size_t i = done; i < end; ++i) costs[measured[i]] = (*chunk)[i - done];
    done = end;
  }
  if (unpriced != nullptr) *unpriced = static_cast<int>(signatures.size() - done);
  return costs;
}

double ExtractionCost(const Extraction& extraction, const std::vector<double>& costs) {
  double total = 0;
  for (const auto& [cls, node] : extraction.choice) total += costs[node];
  return total;
}

ExtractionProblem MakeExtractionProblem(const EGraph& egraph, const std::vector<EClassId>& roots,
                                        const std::vector<double>& costs, bool labels) {
  ExtractionProblem p;
  std::vector<int> dense(ClassCapacity(egraph), -1);
  std::vector<ENodeId> candidates;
  std::vector<EClassId> stack;
  for (EClassId r : roots) stack.push_back(egraph.Find(r));
  while (!stack.empty()) {
    const EClassId c = stack.back();
    stack.pop_back();
    if (dense[c] >= 0) continue;
    dense[c] = static_cast<int>(p.class_id.size());
    p.class_id.push_back(c);
    if (labels) {
      std::string types;
      for (const TensorType& t : egraph.eclass(c).types) absl::StrAppend(&types, types.empty() ? "" : ", ", t.ToString());
      p.class_label.push_back(std::move(types));
    }
    for (ENodeId id : egraph.eclass(c).nodes) {
      if (costs[id] == kInfinity) continue;
      candidates.push_back(id);
      for (EClassId child : egraph.node(id).children) stack.push_back(egraph.Find(child));
    }
  }
  // E-node id order: greedy sweeps them in that order, as over the e-graph.
  std::sort(candidates.begin(), candidates.end());
  p.class_nodes.resize(p.class_id.size());
  for (ENodeId id : candidates) {
    const int n = static_cast<int>(p.node_id.size());
    const int c = dense[egraph.ClassOf(id)];
    p.node_id.push_back(id);
    p.node_class.push_back(c);
    p.node_cost.push_back(costs[id]);
    std::vector<int> children;
    for (EClassId child : egraph.node(id).children) children.push_back(dense[egraph.Find(child)]);
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    p.node_children.push_back(std::move(children));
    p.class_nodes[c].push_back(n);
    if (!labels) continue;
    const EOp& op = egraph.op(egraph.node(id).op);
    switch (op.role) {
      case EOp::Role::kVariable:
        p.node_label.push_back(absl::StrCat(op.kind == OpKind::kInput ? "input:" : "weight:", op.name));
        break;
      case EOp::Role::kGetItem:
        p.node_label.push_back(absl::StrCat("item", op.item));
        break;
      default:
        p.node_label.push_back(OpLabel(op.kind, op.params));
    }
  }
  for (EClassId r : roots) p.roots.push_back(dense[egraph.Find(r)]);
  return p;
}

absl::Status WriteExtractionProblem(const ExtractionProblem& p, const std::string& path) {
  std::ofstream out(path);
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  out << "taso-extraction-problem 1\nclasses " << p.class_id.size() << "\n";
  for (EClassId c : p.class_id) out << c << "\n";
  out << "nodes " << p.node_id.size() << "\n";
  char cost[32];
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    std::snprintf(cost, sizeof(cost), "%.17g", p.node_cost[n]);
    out << p.node_id[n] << " " << p.node_class[n] << " " << cost << " " << p.node_children[n].size();
    for (int d : p.node_children[n]) out << " " << d;
    if (n < p.node_label.size()) {
      std::string label = p.node_label[n];
      std::replace_if(label.begin(), label.end(), [](char ch) { return std::isspace(static_cast<unsigned char>(ch)); }, '_');
      out << " " << label;
    }
    out << "\n";
  }
  out << "roots " << p.roots.size();
  for (int r : p.roots) out << " " << r;
  out << "\n";
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<ExtractionProblem> ReadExtractionProblem(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an extraction problem (", what, ")"));
  };
  std::string word;
  int version = 0;
  size_t count = 0;
  if (!(in >> word >> version) || word != "taso-extraction-problem" || version != 1) return bad("header");
  ExtractionProblem p;
  if (!(in >> word >> count) || word != "classes") return bad("classes");
  p.class_id.resize(count);
  p.class_nodes.resize(count);
  for (EClassId& c : p.class_id) {
    if (!(in >> c)) return bad("class ids");
  }
  if (!(in >> word >> count) || word != "nodes") return bad("nodes");
  for (size_t n = 0; n < count; ++n) {
    ENodeId id;
    int cls;
    double cost;
    size_t k;
    if (!(in >> id >> cls >> cost >> k) || cls < 0 || cls >= static_cast<int>(p.class_id.size()) ||
        !(cost >= 0 && cost < kInfinity) || k > p.class_id.size()) {
      return bad(absl::StrCat("e-node ", n));
    }
    std::vector<int> children(k);
    for (int& d : children) {
      if (!(in >> d) || d < 0 || d >= static_cast<int>(p.class_id.size())) return bad(absl::StrCat("e-node ", n));
    }
    std::sort(children.begin(), children.end());
    children.erase(std::unique(children.begin(), children.end()), children.end());
    p.node_id.push_back(id);
    p.node_class.push_back(cls);
    p.node_cost.push_back(cost);
    p.node_children.push_back(std::move(children));
    p.class_nodes[cls].push_back(static_cast<int>(n));
    std::string rest;
    std::getline(in, rest);
    const size_t start = rest.find_first_not_of(" \t");
    p.node_label.push_back(start == std::string::npos ? "" : rest.substr(start));
  }
  if (std::all_of(p.node_label.begin(), p.node_label.end(), [](const std::string& l) { return l.empty(); })) {
    p.node_label.clear();
  }
  if (!(in >> word >> count) || word != "roots") return bad("roots");
  p.roots.resize(count);
  for (int& r : p.roots) {
    if (!(in >> r) || r < 0 || r >= static_cast<int>(p.class_id.size())) return bad("roots");
  }
  return p;
}


absl::StatusOr<ProblemChoice> SolveGreedy(const ExtractionProblem& problem) {
  ProblemChoice out;
  out.pick = GreedyPick(problem, problem.node_cost, {});
  if (absl::Status s = RestrictPick(problem, out.pick); !s.ok()) return s;
  out.cost_ms = PickCost(problem, out.pick);
  return out;
}

namespace {

// The e-graph's choice for a problem's.
Extraction ToExtraction(const ExtractionProblem& problem, const ProblemChoice& chosen,
                        const std::vector<double>& costs) {
  Extraction out;
  for (size_t c = 0; c < chosen.pick.size(); ++c) {
    if (chosen.pick[c] >= 0) out.choice[problem.class_id[c]] = problem.node_id[chosen.pick[c]];
  }
  out.cost_ms = ExtractionCost(out, costs);
  return out;
}

}  // namespace

absl::StatusOr<Extraction> ExtractGreedy(const EGraph& egraph, const std::vector<EClassId>& roots,
                                         const std::vector<double>& costs) {
  const ExtractionProblem problem = MakeExtractionProblem(egraph, roots, costs);
  auto greedy = SolveGreedy(problem);
  if (!greedy.ok()) return greedy.status();
  return ToExtraction(problem, *greedy, costs);
}

absl::StatusOr<Extraction> ExtractGreedyDag(const EGraph& egraph, const std::vector<EClassId>& roots,
                                            const std::vector<double>& costs, absl::Time deadline,
                                            std::optional<absl::Time> sharing_deadline, int* moves) {
  if (moves != nullptr) *moves = 0;
  const ExtractionProblem problem = MakeExtractionProblem(egraph, roots, costs);
  auto dag = SolveGreedyDag(problem, deadline);
  if (!dag.ok()) return dag.status();
  if (sharing_deadline.has_value()) {
    return ToExtraction(problem, ImproveBySharing(problem, *dag, std::min(*sharing_deadline, deadline), moves), costs);
  }
  return ToExtraction(problem, *dag, costs);
}

absl::StatusOr<Extraction> ExtractIlp(const EGraph& egraph, const std::vector<EClassId>& roots,
                                      const std::vector<double>& costs, absl::Duration time_limit,
                                      const Extraction* warm_start, const IlpSettings& settings,
                                      IlpStats* stats) {
  const char* dump = std::getenv("TASO_ILP_DUMP");
  const bool dumping = dump != nullptr && *dump != '\0';
  const ExtractionProblem problem = MakeExtractionProblem(egraph, roots, costs, /*labels=*/dumping);
  if (dumping) (void)WriteExtractionProblem(problem, dump);  // best effort: a debugging aid
  std::optional<ProblemChoice> warm;
  if (warm_start != nullptr) {
    std::map<EClassId, int> class_index;
    for (size_t c = 0; c < problem.class_id.size(); ++c) class_index[problem.class_id[c]] = static_cast<int>(c);
    std::map<ENodeId, int> node_index;
    for (size_t n = 0; n < problem.node_id.size(); ++n) node_index[problem.node_id[n]] = static_cast<int>(n);
    warm = ProblemChoice{std::vector<int>(problem.class_id.size(), -1)};
    for (const auto& [cls, node] : warm_start->choice) {
      auto c = class_index.find(egraph.Find(cls));
      auto n = node_index.find(node);
      if (c == class_index.end() || n == node_index.end() || problem.node_class[n->second] != c->second) {
        warm.reset();  // not a choice of this problem: start from greedy
        break;
      }
      warm->pick[c->second] = n->second;
    }
  }
  auto solved = SolveIlp(problem, time_limit, warm ? &*warm : nullptr, settings, stats);
  if (!solved.ok()) return solved.status();
  Extraction out = ToExtraction(problem, *solved, costs);
  out.optimal = solved->optimal;
  out.time_limited = solved->time_limited;
  out.lower_bound_ms = out.optimal ? out.cost_ms : std::min(solved->lower_bound_ms, out.cost_ms);
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
