#include "optimizer/rewrite/match.h"

#include <algorithm>
#include <set>

namespace taso::optimizer {
namespace {

// Pattern operator nodes in the order the search places them: each one after
// the first is, where possible, connected to one already placed, so its host
// node is determined or chosen among few consumers.
std::vector<int> PlacementOrder(const Graph& p) {
  std::vector<int> order;
  std::vector<bool> placed(p.num_nodes(), false);
  std::vector<int> ops;
  for (const Node& n : p.nodes()) {
    if (!IsInputOrWeight(n.kind)) ops.push_back(n.id);
  }
  auto connected = [&](int id) {
    for (const TensorRef& in : p.node(id).inputs) {
      if (placed[in.node]) return 2;  // reads something placed
    }
    for (int q : order) {
      for (const TensorRef& in : p.node(q).inputs) {
        if (in.node == id) return 3;  // produces an input of a placed node: determined
      }
    }
    return 0;
  };
  const int first = PatternAnchor(p);
  while (order.size() < ops.size()) {
    int best = -1, best_score = -1;
    for (int id : ops) {
      if (placed[id]) continue;
      const int score = order.empty() ? (id == first ? 1 : 0) : connected(id);
      if (score > best_score) {
        best = id;
        best_score = score;
      }
    }
    placed[best] = true;
    order.push_back(best);
    // Variables count as placed once a placed node reads them.
    for (const TensorRef& in : p.node(best).inputs) {
      if (IsInputOrWeight(p.node(in.node).kind)) placed[in.node] = true;
    }
  }
  return order;
}

class Matcher {
 public:
  Matcher(const RewriteRule& rule, const GraphIndex& index, int limit)
      : rule_(rule), p_(rule.lhs()), index_(index), g_(index.graph()), limit_(limit) {
    order_ = PlacementOrder(p_);
    host_.assign(p_.num_nodes(), -1);
    swapped_.assign(p_.num_nodes(), false);
    bound_.assign(p_.num_nodes(), TensorRef{});
    for (const GraphOutput& o : p_.outputs()) output_refs_.insert({o.tensor.node, o.tensor.index});
  }

  std::vector<Match> Run() {
    if (!order_.empty()) Place(0);
    if (std::find(swapped_match_.begin(), swapped_match_.end(), true) == swapped_match_.end()) {
      return std::move(matches_);  // every operand read in order: nothing to leave out
    }
    // A match found with operands read in reverse that covers the same host
    // nodes and binds the same tensors as another (a symmetric pattern, such
    // as cat(a,b) + cat(c,d), matched the other way round) rewrites the same
    // region into the same operators: it is left out.
    std::set<std::pair<std::vector<int>, std::vector<std::pair<int, int>>>> seen;
    std::vector<Match> kept;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < matches_.size(); ++i) {
        if (swapped_match_[i] != (pass == 1)) continue;
        std::vector<int> nodes = matches_[i].nodes;
        std::vector<std::pair<int, int>> bound;
        for (const auto& [name, t] : matches_[i].binding) bound.emplace_back(t.node, t.index);
        std::sort(nodes.begin(), nodes.end());
        std::sort(bound.begin(), bound.end());
        if (!seen.insert({std::move(nodes), std::move(bound)}).second && pass == 1) continue;
        kept.push_back(std::move(matches_[i]));
      }
    }
    return kept;
  }

 private:
  // The host tensor a pattern tensor is known to be, if any.
  bool Known(TensorRef pt, TensorRef* host) const {
    const Node& n = p_.node(pt.node);
    if (IsInputOrWeight(n.kind)) {
      if (bound_[pt.node].node < 0) return false;
      *host = bound_[pt.node];
      return true;
    }
    if (host_[pt.node] < 0) return false;
    *host = TensorRef{host_[pt.node], pt.index};
    return true;
  }

  // Input `i` of pattern operator `pid` as its host node has it.
  TensorRef HostInput(int pid, size_t i) const {
    const Node& hn = g_.node(host_[pid]);
    return hn.inputs[swapped_[pid] ? hn.inputs.size() - 1 - i : i];
  }

  std::vector<int> Candidates(int pid) const {
    // Determined: it produces an input of a placed node.
    for (int q : order_) {
      if (host_[q] < 0) continue;
      const Node& qn = p_.node(q);
      for (size_t i = 0; i < qn.inputs.size(); ++i) {
        if (qn.inputs[i].node == pid) {
          const TensorRef h = HostInput(q, i);
          if (h.index != qn.inputs[i].index) return {};
          return {h.node};
        }
      }
    }
    // Among the consumers of a tensor one of its inputs is known to be.
    const Node& pn = p_.node(pid);
    for (const TensorRef& in : pn.inputs) {
      TensorRef h;
      if (Known(in, &h)) return index_.consumers(h.node);
    }
    return index_.nodes_of(pn.kind);
  }

  // Whether host node `hid` can be pattern operator `pid`, its operands read
  // in reverse when `swap`.
  bool Fits(int pid, int hid, bool swap, std::vector<int>* newly_bound) {
    const Node& pn = p_.node(pid);
    const Node& hn = g_.node(hid);
    if (hn.kind != pn.kind || hn.inputs.size() != pn.inputs.size() ||
        hn.output_types.size() != pn.output_types.size() || !ParamsEqual(pn.kind, pn.params, hn.params)) {
      return false;
    }
    if (std::find(host_.begin(), host_.end(), hid) != host_.end()) return false;
    if (!rule_.lhs_conditions().empty() && !SignaturesAdmit(rule_.lhs_conditions()[pid], index_.signatures(hid))) {
      return false;
    }
    for (size_t i = 0; i < pn.inputs.size(); ++i) {
      const TensorRef pin = pn.inputs[i];
      const TensorRef hin = hn.inputs[swap ? pn.inputs.size() - 1 - i : i];
      if (IsInputOrWeight(p_.node(pin.node).kind)) {
        if (bound_[pin.node].node < 0) {
          bound_[pin.node] = hin;
          newly_bound->push_back(pin.node);
        } else if (bound_[pin.node] != hin) {
          return false;
        }
      } else if (host_[pin.node] >= 0 && TensorRef{host_[pin.node], pin.index} != hin) {
        return false;
      }
    }
    // Placed consumers of this node must read it where the pattern says.
    for (int q : order_) {
      if (host_[q] < 0) continue;
      const Node& qn = p_.node(q);
      for (size_t i = 0; i < qn.inputs.size(); ++i) {
        if (qn.inputs[i].node == pid && HostInput(q, i) != TensorRef{hid, qn.inputs[i].index}) {
          return false;
        }
      }
    }
    return true;
  }

  void Place(size_t k) {
    if (static_cast<int>(matches_.size()) >= limit_) return;
    if (k == order_.size()) {
      Accept();
      return;
    }
    const int pid = order_[k];
    const bool commutes = OperandsCommute(p_.node(pid));
    for (int hid : Candidates(pid)) {
      const Node& hn = g_.node(hid);
      // Equal operands read the same either way.
      const int orders = commutes && hn.inputs.size() == 2 && hn.inputs[0] != hn.inputs[1] ? 2 : 1;
      for (int order = 0; order < orders; ++order) {
        std::vector<int> newly_bound;
        if (Fits(pid, hid, order == 1, &newly_bound)) {
          host_[pid] = hid;
          swapped_[pid] = order == 1;
          Place(k + 1);
          host_[pid] = -1;
          swapped_[pid] = false;
        }
        for (int v : newly_bound) bound_[v] = TensorRef{};
        if (static_cast<int>(matches_.size()) >= limit_) return;
      }
    }
  }

  void Accept() {
    std::set<int> inside;
    for (int id : order_) inside.insert(host_[id]);
    for (int pid : order_) {
      const Node& pn = p_.node(pid);
      for (int k = 0; k < static_cast<int>(pn.output_types.size()); ++k) {
        if (output_refs_.count({pid, k})) continue;
        // An internal value: the replacement removes it, so nothing else may read it.
        const TensorRef h{host_[pid], k};
        if (index_.is_graph_output(h)) return;
        for (int c : index_.consumers(h.node)) {
          if (inside.count(c)) continue;
          for (const TensorRef& in : g_.node(c).inputs) {
            if (in == h) return;
          }
        }
      }
    }
    Match m;
    // Facts the proof kept equal must be equal here too.
    for (int pid : order_) {
      if (!rule_.lhs_conditions().empty() &&
          !SignaturesAdmit(rule_.lhs_conditions()[pid], index_.signatures(host_[pid]), &m.facts)) {
        return;
      }
    }
    m.nodes = host_;
    for (const Node& n : p_.nodes()) {
      if (!IsInputOrWeight(n.kind)) continue;
      if (bound_[n.id].node < 0) return;  // a variable no operator reads
      m.binding[n.name] = bound_[n.id];
    }
    if (rule_.exact_variable_types) {
      for (const Node& n : p_.nodes()) {
        if (IsInputOrWeight(n.kind) && g_.type(m.binding[n.name]).dims != n.output_types[0].dims) return;
      }
    }
    for (const std::string& w : rule_.weight_variables) {
      auto it = m.binding.find(w);
      if (it != m.binding.end() && !index_.is_constant(it->second.node)) return;
    }
    for (const GraphOutput& o : p_.outputs()) {
      TensorRef h;
      if (!Known(o.tensor, &h)) return;
      m.outputs.push_back(h);
    }
    if (rule_.symmetric_outputs) {
      for (size_t i = 1; i < m.outputs.size(); ++i) {
        if (m.outputs[i - 1].node > m.outputs[i].node) return;
      }
    }
    matches_.push_back(std::move(m));
    swapped_match_.push_back(std::find(swapped_.begin(), swapped_.end(), true) != swapped_.end());
  }

  const RewriteRule& rule_;
  const Graph& p_;
  const GraphIndex& index_;
  const Graph& g_;
  const int limit_;
  std::vector<int> order_;
  std::vector<int> host_;         // pattern node -> host node (operators)
  std::vector<bool> swapped_;     // pattern node -> its host reads the operands in reverse
  std::vector<TensorRef> bound_;  // pattern variable node -> host tensor
  std::set<std::pair<int, int>> output_refs_;
  std::vector<Match> matches_;
  std::vector<bool> swapped_match_;  // per match: some operands were read in reverse
};

}  // namespace

int PatternAnchor(const Graph& p) {
  int first_op = -1;
  for (const Node& n : p.nodes()) {
    if (!IsInputOrWeight(n.kind)) {
      first_op = n.id;
      break;
    }
  }
  if (first_op < 0 || p.outputs().empty()) return first_op;
  const int producer = p.outputs()[0].tensor.node;
  return IsInputOrWeight(p.node(producer).kind) ? first_op : producer;
}

GraphIndex::GraphIndex(const Graph& graph) : graph_(graph) {
  const int n = graph.num_nodes();
  consumers_.resize(n);
  auto order = graph.TopologicalOrder();
  std::vector<int> ids;
  if (order.ok()) {
    ids = *order;
  } else {
    for (int i = 0; i < n; ++i) ids.push_back(i);
  }
  constant_ = ComputedAtLoad(graph, ids);
  for (int id : ids) {
    const Node& node = graph.node(id);
    std::set<int> producers;
    for (const TensorRef& in : node.inputs) producers.insert(in.node);
    for (int p : producers) consumers_[p].push_back(id);
    if (!IsInputOrWeight(node.kind)) by_kind_[node.kind].push_back(id);
  }
  signatures_.resize(n);
  for (const Node& node : graph.nodes()) {
    if (IsInputOrWeight(node.kind)) continue;
    auto sigs = NodeSignaturesIn(graph, node);
    if (sigs.ok()) signatures_[node.id] = std::move(*sigs);
  }
  for (auto& c : consumers_) std::sort(c.begin(), c.end());
  for (auto& [kind, nodes] : by_kind_) std::sort(nodes.begin(), nodes.end());
}

const std::vector<int>& GraphIndex::nodes_of(OpKind kind) const {
  auto it = by_kind_.find(kind);
  return it == by_kind_.end() ? empty_ : it->second;
}

bool GraphIndex::is_graph_output(TensorRef t) const {
  for (const GraphOutput& o : graph_.outputs()) {
    if (o.tensor == t) return true;
  }
  return false;
}

std::vector<Match> FindMatches(const RewriteRule& rule, const GraphIndex& index, int limit) {
  return Matcher(rule, index, limit).Run();
}

}  // namespace taso::optimizer
