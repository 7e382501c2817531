// The ILP extraction's linear program (see extract.h for the formulation
// and why it has the rows it has): choice rows, needed rows, and acyclicity
// by order variables, linear orders or cycle cuts.
#include <algorithm>
#include <iterator>
#include <map>
#include <optional>

#include "optimizer/eqsat/ilp_internal.h"

namespace taso::optimizer::ilp_internal {
namespace {

std::vector<double> Ones(size_t k) { return std::vector<double>(k, 1.0); }

// a <= b; nothing when they are one column (a collapsed class and its reader).
void AddImplication(LinearProgram& lp, int a, int b) {
  if (a != b) lp.AddRow({a, b}, {1.0, -1.0}, -kInfinity, 0);
}

// Elementary cycles of a directed graph among vertices of one strongly
// connected component, each from its least vertex; at most `limit` cycles
// and `max_steps` search steps (`complete` says whether all were found).
std::vector<std::vector<int>> ElementaryCycles(const std::vector<std::vector<int>>& adj, const std::vector<int>& comp,
                                               size_t limit, int64_t max_steps, bool* complete) {
  std::vector<std::vector<int>> cycles;
  *complete = true;
  const int n = static_cast<int>(adj.size());
  std::vector<bool> on_path(n, false);
  int64_t steps = 0;
  for (int s = 0; s < n; ++s) {
    bool has_cycle = false;
    for (int w : adj[s]) has_cycle = has_cycle || (comp[w] == comp[s] && w >= s);
    if (!has_cycle) continue;
    std::vector<std::pair<int, size_t>> path = {{s, 0}};
    on_path[s] = true;
    while (!path.empty()) {
      if (++steps > max_steps || cycles.size() >= limit) {
        *complete = false;
        for (auto& [v, next] : path) on_path[v] = false;
        return cycles;
      }
      auto& [v, next] = path.back();
      if (next < adj[v].size()) {
        const int w = adj[v][next++];
        if (comp[w] != comp[s] || w < s) continue;
        if (w == s) {
          std::vector<int> cycle;
          for (const auto& step : path) cycle.push_back(step.first);
          cycles.push_back(std::move(cycle));
        } else if (!on_path[w]) {
          on_path[w] = true;
          path.push_back({w, 0});
        }
        continue;
      }
      on_path[v] = false;
      path.pop_back();
    }
  }
  return cycles;
}

// The model's columns of class c's e-nodes.
std::vector<int> ColumnsOf(const IlpDomain& domain, const IlpModel& model, int c) {
  std::vector<int> cols;
  for (int n : domain.class_alive[c]) cols.push_back(model.column[n]);
  return cols;
}

// The classes every alive e-node of c reads.
std::vector<int> CommonChildren(const ExtractionProblem& p, const IlpDomain& domain, int c) {
  std::vector<int> common = p.node_children[domain.class_alive[c][0]];
  for (int n : domain.class_alive[c]) {
    std::vector<int> both;
    std::set_intersection(common.begin(), common.end(), p.node_children[n].begin(), p.node_children[n].end(),
                          std::back_inserter(both));
    common = std::move(both);
  }
  return common;
}

// Every acyclic choice has the must classes, and with a class its needed
// classes: y = 1 for the former, y_c <= y_g for the latter (except what c's
// common children already imply). Cycles can fake a class's children in the
// relaxation, not these.
void AddNeededRows(const ExtractionProblem& p, const IlpDomain& domain, const NeededSets& needed,
                   const std::vector<int>& class_col, LinearProgram& lp, IlpStats& st) {
  std::vector<uint64_t> implied(needed.words());
  for (size_t c = 0; c < p.class_id.size(); ++c) {
    if (!domain.in_model[c]) continue;
    const int ci = static_cast<int>(c);
    if (NeededSets::Has(needed.must(), ci)) {
      lp.SetLower(class_col[c], 1);
      ++st.must_classes;
      continue;
    }
    std::copy(needed.of(ci), needed.of(ci) + needed.words(), implied.begin());
    for (int d : CommonChildren(p, domain, ci)) {
      for (size_t w = 0; w < implied.size(); ++w) implied[w] &= ~needed.of(d)[w];
    }
    for (size_t w = 0; w < implied.size(); ++w) implied[w] &= ~needed.must()[w];
    implied[c / 64] &= ~(uint64_t{1} << (c % 64));
    needed.ForEach(implied.data(), [&](int g) {
      AddImplication(lp, class_col[c], class_col[g]);
      ++st.needed_rows;
    });
  }
}

// Inside a cyclic component, what "c needs its child d" may count on: d's
// e-nodes none of whose operands needs c in every acyclic choice (such an
// e-node would close a cycle through c). Without this, the relaxation lets a
// class pay half its cost and get the other half from a cycle at 1/2 (a
// two-cycle's bound is half its optimum). Returns the columns, or none when
// every e-node of d qualifies (then y_d serves).
std::optional<std::vector<int>> AcyclicChildColumns(const ExtractionProblem& p, const IlpDomain& domain,
                                                    const IlpModel& model, const NeededSets& needed,
                                                    const std::vector<int>& comp, int c, int d) {
  if (comp[c] != comp[d]) return std::nullopt;  // no cycle runs through both
  std::vector<int> cols;
  for (int m : domain.class_alive[d]) {
    bool closes = false;
    for (int e : p.node_children[m]) closes = closes || NeededSets::Has(needed.of(e), c);
    if (!closes) cols.push_back(model.column[m]);
  }
  if (cols.size() == domain.class_alive[d].size()) return std::nullopt;
  return cols;
}

// With class variables, y_c = sum of c's x (a class of one e-node uses that
// x), roots have y = 1 and a chosen e-node needs its children: x <= y_child,
// or y_c <= y_child for a child every e-node of c reads; inside cyclic
// components, the child's e-nodes that cannot close a cycle through c
// (AcyclicChildColumns) in place of y_child.
void AddClassVariableRows(const ExtractionProblem& p, const IlpDomain& domain, const IlpSettings& settings,
                          const std::vector<int>& comp, IlpModel& model, IlpStats& st) {
  const size_t num_classes = p.class_id.size();
  LinearProgram& base = model.base;
  // Built only for the rows that read it (bits per class per class).
  std::optional<NeededSets> needed;
  if (settings.needed_rows || settings.acyclic_child_rows) needed.emplace(p, domain.alive);
  std::vector<int> class_col(num_classes, -1);
  for (size_t c = 0; c < num_classes; ++c) {
    if (!domain.in_model[c]) continue;
    if (domain.class_alive[c].size() == 1) {
      class_col[c] = model.column[domain.class_alive[c][0]];
      continue;
    }
    class_col[c] = base.AddColumn(0, 1, 0, /*integer=*/false);
    std::vector<int> cols = ColumnsOf(domain, model, static_cast<int>(c));
    std::vector<double> coefs = Ones(cols.size());
    cols.push_back(class_col[c]);
    coefs.push_back(-1.0);
    base.AddRow(cols, coefs, 0, 0);
  }
  for (int r : std::set<int>(p.roots.begin(), p.roots.end())) base.SetLower(class_col[r], 1);
  if (settings.needed_rows) AddNeededRows(p, domain, *needed, class_col, base, st);
  // lhs <= what class d offers c.
  auto needs = [&](int lhs, int c, int d) {
    std::optional<std::vector<int>> cols;
    if (settings.acyclic_child_rows) cols = AcyclicChildColumns(p, domain, model, *needed, comp, c, d);
    if (!cols) {
      AddImplication(base, lhs, class_col[d]);
      return;
    }
    ++st.acyclic_child_rows;
    std::vector<double> coefs(cols->size(), -1.0);
    cols->push_back(lhs);
    coefs.push_back(1.0);
    base.AddRow(*cols, coefs, -kInfinity, 0);
  };
  for (size_t c = 0; c < num_classes; ++c) {
    if (!domain.in_model[c]) continue;
    std::vector<int> common;
    if (domain.class_alive[c].size() >= 2) {
      common = CommonChildren(p, domain, static_cast<int>(c));
      for (int d : common) needs(class_col[c], static_cast<int>(c), d);
    }
    for (int n : domain.class_alive[c]) {
      for (int d : p.node_children[n]) {
        if (std::binary_search(common.begin(), common.end(), d)) continue;
        needs(model.column[n], static_cast<int>(c), d);
      }
    }
  }
}

// Without class variables the sums are written out in each row.
void AddSumRows(const ExtractionProblem& p, const IlpDomain& domain, IlpModel& model) {
  LinearProgram& base = model.base;
  for (int r : std::set<int>(p.roots.begin(), p.roots.end())) {
    const std::vector<int> cols = ColumnsOf(domain, model, r);
    base.AddRow(cols, Ones(cols.size()), 1, kInfinity);
  }
  for (size_t c = 0; c < p.class_id.size(); ++c) {
    const std::vector<int> cols = ColumnsOf(domain, model, static_cast<int>(c));
    if (cols.size() >= 2) base.AddRow(cols, Ones(cols.size()), -kInfinity, 1);
  }
  for (int n : model.columns_node) {
    for (int d : p.node_children[n]) {
      std::vector<int> cols = ColumnsOf(domain, model, d);
      std::vector<double> coefs = Ones(cols.size());
      cols.push_back(model.column[n]);
      coefs.push_back(-1.0);
      base.AddRow(cols, coefs, 0, kInfinity);
    }
  }
}

// Per component: how many of its classes are in the model.
std::vector<int> ComponentSizes(const IlpDomain& domain, const std::vector<int>& comp) {
  std::vector<int> comp_size(comp.size() + 1, 0);
  for (size_t c = 0; c < comp.size(); ++c) comp_size[comp[c]] += domain.in_model[c] ? 1 : 0;
  return comp_size;
}

// Tensat's: an order variable t in [0, 1] per class of a component, and
// t_class - t_child - 2 x >= eps - 2 per e-node x and child in its component
// (binding when x = 1).
void AddOrderVariables(const ExtractionProblem& p, const IlpDomain& domain, const std::vector<int>& comp,
                       IlpModel& model) {
  const std::vector<int> comp_size = ComponentSizes(domain, comp);
  std::vector<int> order(p.class_id.size(), -1);
  for (size_t c = 0; c < p.class_id.size(); ++c) {
    if (domain.in_model[c] && comp_size[comp[c]] >= 2) order[c] = model.base.AddColumn(0, 1, 0, /*integer=*/false);
  }
  for (int n : model.columns_node) {
    const int c = p.node_class[n];
    for (int d : p.node_children[n]) {
      if (comp[c] != comp[d]) continue;
      const double eps = 1.0 / (comp_size[comp[c]] + 1);
      model.base.AddRow({order[c], order[d], model.column[n]}, {1.0, -1.0, -2.0}, eps - 2.0, kInfinity);
    }
  }
}

// Class edges inside components: (class, child) -> the columns of the
// class's e-nodes reading the child.
using InnerEdges = std::map<std::pair<int, int>, std::vector<int>>;

// A linear order of one component's classes (`group`): u_ij (i < j) is 1
// when i comes before j (u_ji = 1 - u_ij), transitive (for i < j < k:
// u_ij + u_jk - u_ik <= 1 and u_ik - u_ij - u_jk <= 0), and the e-nodes of
// class c reading d sum to at most "d before c".
void AddLinearOrder(const std::vector<int>& group, const std::vector<const InnerEdges::value_type*>& edges,
                    std::vector<int>& position, LinearProgram& base) {
  const int g = static_cast<int>(group.size());
  for (int i = 0; i < g; ++i) position[group[i]] = i;
  std::vector<int> u(g * g, -1);
  for (int i = 0; i < g; ++i) {
    for (int j = i + 1; j < g; ++j) u[i * g + j] = base.AddColumn(0, 1, 0, /*integer=*/false);
  }
  for (int i = 0; i < g; ++i) {
    for (int j = i + 1; j < g; ++j) {
      for (int l = j + 1; l < g; ++l) {
        base.AddRow({u[i * g + j], u[j * g + l], u[i * g + l]}, {1.0, 1.0, -1.0}, -kInfinity, 1);
        base.AddRow({u[i * g + l], u[i * g + j], u[j * g + l]}, {1.0, -1.0, -1.0}, -kInfinity, 0);
      }
    }
  }
  for (const auto* edge : edges) {
    const auto [c, d] = edge->first;
    const std::vector<int>& cols = edge->second;
    const int i = position[d], j = position[c];  // d must come before c
    std::vector<int> row = cols;
    std::vector<double> coefs = Ones(cols.size());
    if (i < j) {
      row.push_back(u[i * g + j]);  // sum x - u_dc <= 0
      coefs.push_back(-1.0);
      base.AddRow(row, coefs, -kInfinity, 0);
    } else {
      row.push_back(u[j * g + i]);  // sum x <= 1 - u_cd
      coefs.push_back(1.0);
      base.AddRow(row, coefs, -kInfinity, 1);
    }
  }
}

// A linear order for each small component. Cycles through chosen e-nodes
// contradict any order, even a fractional one, so only the e-nodes need to
// be integer; the relaxation is much tighter than with cycle cuts (each inner
// edge at most 1/2 rather than (k-1)/k). Returns which components got one.
std::vector<bool> AddLinearOrders(const ExtractionProblem& p, const IlpDomain& domain, const std::vector<int>& comp,
                                  InnerEdges& inner, const IlpSettings& settings, IlpModel& model, IlpStats& st) {
  const size_t num_classes = p.class_id.size();
  const std::vector<int> comp_size = ComponentSizes(domain, comp);
  std::vector<bool> ordered(num_classes + 1, false);
  std::vector<std::vector<int>> members(num_classes + 1);
  for (size_t c = 0; c < num_classes; ++c) {
    if (domain.in_model[c] && comp_size[comp[c]] >= 2 && comp_size[comp[c]] <= settings.linear_order_limit) {
      members[comp[c]].push_back(static_cast<int>(c));
    }
  }
  std::vector<std::vector<const InnerEdges::value_type*>> edges(num_classes + 1);
  for (auto& edge : inner) edges[comp[edge.first.first]].push_back(&edge);
  std::vector<int> position(num_classes, -1);
  for (size_t k = 0; k < members.size(); ++k) {
    if (members[k].empty()) continue;
    ordered[k] = true;
    ++st.ordered_components;
    AddLinearOrder(members[k], edges[k], position, model.base);
  }
  return ordered;
}

// Linear orders where asked for, and the other components' elementary
// cycles, forbidden up front where there are few; the rest lazily.
void AddOrdersAndCycleCuts(const ExtractionProblem& p, const IlpDomain& domain, const std::vector<int>& comp,
                           const IlpSettings& settings, IlpModel& model, IlpStats& st) {
  const size_t num_classes = p.class_id.size();
  InnerEdges inner;
  for (int n : model.columns_node) {
    const int c = p.node_class[n];
    for (int d : p.node_children[n]) {
      if (comp[d] == comp[c]) inner[{c, d}].push_back(model.column[n]);
    }
  }
  std::vector<bool> ordered(num_classes + 1, false);  // components given a linear order
  if (settings.acyclicity == IlpSettings::Acyclicity::kLinearOrder) {
    ordered = AddLinearOrders(p, domain, comp, inner, settings, model, st);
  }
  std::vector<std::vector<int>> adj(num_classes);
  for (const auto& [edge, cols] : inner) {
    if (!ordered[comp[edge.first]] && settings.cycle_limit > 0) adj[edge.first].push_back(edge.second);
  }
  for (auto& a : adj) {
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
  }
  bool complete = false;
  for (std::vector<int>& cycle : ElementaryCycles(adj, comp, settings.cycle_limit, 1000000, &complete)) {
    if (model.cut_set.insert(cycle).second) model.cuts.push_back(std::move(cycle));
  }
  st.upfront_cycles = static_cast<int>(model.cuts.size());
  st.all_cycles_upfront = complete;
}

// Class collapsing: a class of one e-node, not an output, on no cycle of
// the class graph, that one e-node alone reads, is chosen exactly when that
// reader is (nothing else needs it; the reader cannot do without it), so its
// e-node shares the reader's column, which pays both costs. Per e-node: the
// e-node whose column it takes (chains followed), or -1.
std::vector<int> CollapseInto(const ExtractionProblem& p, const IlpDomain& domain, const std::vector<int>& comp) {
  const size_t num_classes = p.class_id.size();
  const std::vector<int> comp_size = ComponentSizes(domain, comp);
  std::vector<int> reader(num_classes, -1);  // the one alive e-node reading the class; -2: several
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (!domain.alive[n]) continue;
    for (int d : p.node_children[n]) reader[d] = reader[d] == -1 ? static_cast<int>(n) : -2;
  }
  std::vector<bool> root(num_classes, false);
  for (int r : p.roots) root[r] = true;
  std::vector<int> into(p.node_id.size(), -1);
  for (size_t c = 0; c < num_classes; ++c) {
    if (!domain.in_model[c] || root[c] || domain.class_alive[c].size() != 1 || reader[c] < 0) continue;
    if (comp_size[comp[c]] != 1 || p.node_class[reader[c]] == static_cast<int>(c)) continue;
    into[domain.class_alive[c][0]] = reader[c];
  }
  // Chains end: each step goes to a reader, and a chain has no cycle (its
  // classes are on none).
  for (size_t n = 0; n < into.size(); ++n) {
    int t = into[n];
    while (t >= 0 && into[t] >= 0) t = into[t];
    into[n] = t;
  }
  return into;
}

}  // namespace

int LinearProgram::AddColumn(double lower, double upper, double objective, bool integer) {
  col_lower_.push_back(lower);
  col_upper_.push_back(upper);
  objective_.push_back(objective);
  integer_.push_back(integer);
  entries_.emplace_back();
  return static_cast<int>(entries_.size()) - 1;
}

void LinearProgram::AddRow(const std::vector<int>& cols, const std::vector<double>& coefs, double lower,
                           double upper) {
  const int row = static_cast<int>(row_lower_.size());
  for (size_t k = 0; k < cols.size(); ++k) entries_[cols[k]].push_back({row, coefs[k]});
  row_lower_.push_back(lower == -kInfinity ? -std::numeric_limits<double>::max() : lower);
  row_upper_.push_back(upper == kInfinity ? std::numeric_limits<double>::max() : upper);
  nonzeros_ += static_cast<int>(cols.size());
}

void LinearProgram::LoadInto(Cbc_Model* model, bool relaxed) const {
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
  for (size_t col = 0; col < integer_.size() && !relaxed; ++col) {
    if (integer_[col]) Cbc_setInteger(model, static_cast<int>(col));
  }
}

void IlpModel::AddCut(const ExtractionProblem& p, const IlpDomain& domain, LinearProgram& lp,
                      const std::vector<int>& cycle) const {
  // The classes of the cycle may not all choose an e-node reading the next.
  std::vector<int> cols;
  for (size_t k = 0; k < cycle.size(); ++k) {
    const int next = cycle[(k + 1) % cycle.size()];
    for (int n : domain.class_alive[cycle[k]]) {
      const std::vector<int>& ch = p.node_children[n];
      if (std::binary_search(ch.begin(), ch.end(), next)) cols.push_back(column[n]);
    }
  }
  lp.AddRow(cols, Ones(cols.size()), -kInfinity, static_cast<double>(cycle.size()) - 1);
}

IlpModel BuildIlpModel(const ExtractionProblem& p, const IlpDomain& domain, const IlpSettings& settings,
                       IlpStats& st) {
  // A binary x per e-node (its cost in microseconds, which keeps CBC's
  // absolute tolerances far below real differences).
  IlpModel model;
  model.column.assign(p.node_id.size(), -1);
  // Cycles can only run inside a strongly connected component of the class
  // graph (through the model's e-nodes).
  const std::vector<int> comp = ClassComponents(p, domain.alive);
  std::vector<int> into(p.node_id.size(), -1);
  if (settings.collapse_classes && settings.class_variables) into = CollapseInto(p, domain, comp);
  std::vector<double> cost(p.node_id.size(), 0);
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (domain.alive[n]) cost[into[n] >= 0 ? into[n] : n] += p.node_cost[n];
  }
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (!domain.alive[n] || into[n] >= 0) continue;
    model.column[n] = model.base.AddColumn(0, 1, cost[n] * 1000, /*integer=*/true);
    model.columns_node.push_back(static_cast<int>(n));
  }
  for (size_t n = 0; n < p.node_id.size(); ++n) {
    if (domain.alive[n] && into[n] >= 0) {
      model.column[n] = model.column[into[n]];
      ++st.collapsed_classes;
    }
  }
  st.model_enodes = static_cast<int>(model.columns_node.size());
  if (settings.class_variables) {
    AddClassVariableRows(p, domain, settings, comp, model, st);
  } else {
    AddSumRows(p, domain, model);
  }
  if (settings.acyclicity == IlpSettings::Acyclicity::kOrderVariables) {
    AddOrderVariables(p, domain, comp, model);
  } else {
    AddOrdersAndCycleCuts(p, domain, comp, settings, model, st);
  }
  for (const std::vector<int>& cycle : model.cuts) model.AddCut(p, domain, model.base, cycle);
  model.base_cuts = model.cuts.size();
  return model;
}

}  // namespace taso::optimizer::ilp_internal
