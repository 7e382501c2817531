#include "pictures/graph_diff.h"

#include <algorithm>
#include <deque>
#include <iterator>
#include <tuple>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/hash.h"

namespace taso::pictures {
namespace {

// The node alone, its inputs aside: what it computes from them.
bool SameOperator(const Node& a, const Node& b) {
  if (a.kind != b.kind || a.inputs.size() != b.inputs.size() || a.output_types != b.output_types) return false;
  if (!ParamsEqual(a.kind, a.params, b.params)) return false;
  if (IsInputOrWeight(a.kind)) {
    if (a.name != b.name) return false;
    const bool a_data = a.data != nullptr, b_data = b.data != nullptr;
    if (a_data != b_data || (a_data && *a.data != *b.data)) return false;
  }
  return true;
}

// A hash that equal computations share (names of operators left out, as an
// export and re-import may change them); SameOperator decides.
std::vector<Hash128> ComputationHashes(const Graph& graph, const std::vector<int>& order) {
  std::vector<Hash128> hash(graph.num_nodes());
  for (int id : order) {
    const Node& node = graph.node(id);
    Hasher h(static_cast<uint64_t>(node.kind));
    if (IsInputOrWeight(node.kind)) h.AddString(node.name);
    HashParams(node.kind, node.params, h);
    for (const TensorType& t : node.output_types) t.HashInto(h);
    h.Add(node.inputs.size());
    for (const TensorRef& r : node.inputs) {
      h.Add(hash[r.node]);
      h.Add(static_cast<uint64_t>(r.index));
    }
    hash[id] = h.Finish();
  }
  return hash;
}

// The matched nodes nearest above (through unmatched nodes) and below a
// node, as ids of `before` so both sides compare; at most kMaxAnchors each,
// the nearest in topological order.
struct Anchors {
  std::vector<int> above, below;
  friend bool operator<(const Anchors& x, const Anchors& y) {
    return std::tie(x.above, x.below) < std::tie(y.above, y.below);
  }
};
constexpr size_t kMaxAnchors = 64;

void MergeAnchors(std::vector<int>& into, const std::vector<int>& from) {
  std::vector<int> merged;
  std::set_union(into.begin(), into.end(), from.begin(), from.end(), std::back_inserter(merged));
  if (merged.size() > kMaxAnchors) merged.erase(merged.begin(), merged.end() - kMaxAnchors);
  into = std::move(merged);
}

// `to_before`: the partner map that names a node of this graph by its
// partner in `before` (null: this is `before`).
std::vector<Anchors> NearestMatched(const Graph& graph, const std::vector<int>& order, const std::vector<int>& partner,
                                    const std::vector<int>* to_before) {
  auto name = [&](int id) { return to_before ? (*to_before)[id] : id; };
  std::vector<Anchors> anchors(graph.num_nodes());
  for (int id : order) {
    for (const TensorRef& in : graph.node(id).inputs) {
      MergeAnchors(anchors[id].above, partner[in.node] >= 0 ? std::vector<int>{name(in.node)} : anchors[in.node].above);
    }
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    for (const TensorRef& in : graph.node(*it).inputs) {
      MergeAnchors(anchors[in.node].below, partner[*it] >= 0 ? std::vector<int>{name(*it)} : anchors[*it].below);
    }
  }
  return anchors;
}

class Matcher {
 public:
  Matcher(const Graph& before, const Graph& after) : before_(before), after_(after) {
    diff_.before_partner.assign(before.num_nodes(), -1);
    diff_.after_partner.assign(after.num_nodes(), -1);
  }

  void BottomUp(const std::vector<int>& before_order, const std::vector<int>& after_order) {
    const std::vector<Hash128> before_hash = ComputationHashes(before_, before_order);
    const std::vector<Hash128> after_hash = ComputationHashes(after_, after_order);
    std::map<Hash128, std::vector<int>> after_by_hash;
    for (int id : after_order) after_by_hash[after_hash[id]].push_back(id);
    for (int b : before_order) {
      if (diff_.before_partner[b] >= 0) continue;
      auto it = after_by_hash.find(before_hash[b]);
      if (it == after_by_hash.end()) continue;
      for (int a : it->second) {
        if (diff_.after_partner[a] < 0 && SameComputation(b, a)) {
          Pair(b, a);
          break;
        }
      }
    }
  }

  // From the graph outputs (by name) and every matched pair.
  void TopDown() {
    std::deque<std::pair<int, int>> work;
    std::map<std::string, TensorRef> after_outputs;
    for (const GraphOutput& o : after_.outputs()) after_outputs.emplace(o.name, o.tensor);
    for (const GraphOutput& o : before_.outputs()) {
      auto it = after_outputs.find(o.name);
      if (it != after_outputs.end() && it->second.index == o.tensor.index) TryPair(o.tensor.node, it->second.node, work);
    }
    for (int b = 0; b < before_.num_nodes(); ++b) {
      if (diff_.before_partner[b] >= 0) work.emplace_back(b, diff_.before_partner[b]);
    }
    while (!work.empty()) {
      auto [b, a] = work.front();
      work.pop_front();
      const Node& nb = before_.node(b);
      const Node& na = after_.node(a);
      for (size_t i = 0; i < nb.inputs.size(); ++i) {
        if (nb.inputs[i].index == na.inputs[i].index) TryPair(nb.inputs[i].node, na.inputs[i].node, work);
      }
    }
  }

  // An operator left between two rewritten regions has no matched input or
  // reader to start from, but the same matched nodes nearest above and below
  // it on both sides (the weights of the rewritten convolutions around it,
  // say): the same operator between the same anchors matches.
  void Anchored(const std::vector<int>& before_order, const std::vector<int>& after_order) {
    const std::vector<Anchors> before_anchors = NearestMatched(before_, before_order, diff_.before_partner, nullptr);
    const std::vector<Anchors> after_anchors =
        NearestMatched(after_, after_order, diff_.after_partner, &diff_.after_partner);
    std::map<Anchors, std::vector<int>> after_by_anchors;
    for (int a : after_order) {
      if (diff_.after_partner[a] < 0) after_by_anchors[after_anchors[a]].push_back(a);
    }
    for (int b : before_order) {
      if (diff_.before_partner[b] >= 0) continue;
      auto it = after_by_anchors.find(before_anchors[b]);
      if (it == after_by_anchors.end()) continue;
      for (int a : it->second) {
        if (diff_.after_partner[a] < 0 && SameOperator(before_.node(b), after_.node(a))) {
          Pair(b, a);
          break;
        }
      }
    }
  }

  GraphDiff Finish() {
    diff_.before_change.assign(before_.num_nodes(), NodeChange::kRemoved);
    diff_.after_change.assign(after_.num_nodes(), NodeChange::kAdded);
    for (int b = 0; b < before_.num_nodes(); ++b) {
      const int a = diff_.before_partner[b];
      if (a < 0) {
        ++diff_.removed;
        continue;
      }
      const NodeChange change = Rewired(b, a) ? NodeChange::kRewired : NodeChange::kKept;
      diff_.before_change[b] = diff_.after_change[a] = change;
      if (change == NodeChange::kRewired) ++diff_.rewired;
    }
    for (int a : diff_.after_partner) diff_.added += a < 0 ? 1 : 0;
    return std::move(diff_);
  }

 private:
  void Pair(int b, int a) {
    diff_.before_partner[b] = a;
    diff_.after_partner[a] = b;
  }

  void TryPair(int b, int a, std::deque<std::pair<int, int>>& work) {
    if (diff_.before_partner[b] >= 0 || diff_.after_partner[a] >= 0) return;
    if (!SameOperator(before_.node(b), after_.node(a))) return;
    Pair(b, a);
    work.emplace_back(b, a);
  }

  bool SameInput(const TensorRef& b, const TensorRef& a) const {
    return b.index == a.index && diff_.before_partner[b.node] == a.node;
  }

  bool SameComputation(int b, int a) const {
    const Node& nb = before_.node(b);
    const Node& na = after_.node(a);
    if (!SameOperator(nb, na)) return false;
    for (size_t i = 0; i < nb.inputs.size(); ++i) {
      if (!SameInput(nb.inputs[i], na.inputs[i])) return false;
    }
    return true;
  }

  // An input edge changed: it now comes from elsewhere in the kept graph (or
  // from a rewritten region where it came from a kept node, or back). Two
  // unmatched inputs are one region's old and new output, not a new edge.
  bool Rewired(int b, int a) const {
    const Node& nb = before_.node(b);
    const Node& na = after_.node(a);
    for (size_t i = 0; i < nb.inputs.size(); ++i) {
      const bool b_kept = diff_.before_partner[nb.inputs[i].node] >= 0;
      const bool a_kept = diff_.after_partner[na.inputs[i].node] >= 0;
      if ((b_kept || a_kept) && !SameInput(nb.inputs[i], na.inputs[i])) return true;
    }
    return false;
  }

  const Graph& before_;
  const Graph& after_;
  GraphDiff diff_;
};

}  // namespace

absl::StatusOr<GraphDiff> DiffGraphs(const Graph& before, const Graph& after) {
  auto before_order = before.TopologicalOrder();
  if (!before_order.ok()) return absl::InvalidArgumentError(absl::StrCat("before: ", before_order.status().message()));
  auto after_order = after.TopologicalOrder();
  if (!after_order.ok()) return absl::InvalidArgumentError(absl::StrCat("after: ", after_order.status().message()));
  Matcher matcher(before, after);
  matcher.BottomUp(*before_order, *after_order);
  matcher.TopDown();
  matcher.Anchored(*before_order, *after_order);
  // What the anchored pairs make reachable.
  matcher.BottomUp(*before_order, *after_order);
  matcher.TopDown();
  return matcher.Finish();
}

}  // namespace taso::pictures
