#include "pictures/diff_regions.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

namespace taso::pictures {
namespace {

class UnionFind {
 public:
  explicit UnionFind(int n) : parent_(n) { std::iota(parent_.begin(), parent_.end(), 0); }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }
  void Union(int x, int y) {
    x = Find(x), y = Find(y);
    if (x != y) parent_[std::max(x, y)] = std::min(x, y);
  }

 private:
  std::vector<int> parent_;
};

// Per node, the nodes that read it.
std::vector<std::vector<int>> Consumers(const Graph& graph) {
  std::vector<std::vector<int>> readers(graph.num_nodes());
  for (const Node& node : graph.nodes()) {
    for (const TensorRef& in : node.inputs) readers[in.node].push_back(node.id);
  }
  for (auto& r : readers) r.erase(std::unique(r.begin(), r.end()), r.end());
  return readers;
}

// One side as the union-find sees it: node ids offset past the other side's.
struct Side {
  const Graph& graph;
  const std::vector<NodeChange>& change;
  std::vector<std::vector<int>> readers;
  int offset;

  bool changed(int id) const { return change[id] != NodeChange::kKept; }
  std::vector<int> Producers(int id) const {
    std::vector<int> p;
    for (const TensorRef& in : graph.node(id).inputs) p.push_back(in.node);
    return p;
  }
};

// Joins the changed nodes among `ids` of `side` into the set of `anchor`
// (-1: the first of them becomes the anchor); returns the anchor.
int JoinChanged(const Side& side, const std::vector<int>& ids, int anchor, UnionFind& sets) {
  for (int id : ids) {
    if (!side.changed(id)) continue;
    if (anchor < 0) {
      anchor = side.offset + id;
    } else {
      sets.Union(anchor, side.offset + id);
    }
  }
  return anchor;
}

}  // namespace

std::vector<DiffRegion> ChangedRegions(const Graph& before, const Graph& after, const GraphDiff& diff) {
  const Side sides[2] = {{before, diff.before_change, Consumers(before), 0},
                         {after, diff.after_change, Consumers(after), before.num_nodes()}};
  UnionFind sets(before.num_nodes() + after.num_nodes());
  for (const Side& side : sides) {
    for (int id = 0; id < side.graph.num_nodes(); ++id) {
      if (side.changed(id)) JoinChanged(side, side.readers[id], side.offset + id, sets);
    }
  }
  for (int b = 0; b < before.num_nodes(); ++b) {
    const int a = diff.before_partner[b];
    if (a < 0) continue;
    if (diff.before_change[b] == NodeChange::kRewired) {
      sets.Union(b, sides[1].offset + a);
      continue;
    }
    // An unchanged pair: what replaced a region reads from (or feeds) it
    // where the region did.
    int readers = JoinChanged(sides[0], sides[0].readers[b], -1, sets);
    JoinChanged(sides[1], sides[1].readers[a], readers, sets);
    int producers = JoinChanged(sides[0], sides[0].Producers(b), -1, sets);
    JoinChanged(sides[1], sides[1].Producers(a), producers, sets);
  }

  std::map<int, DiffRegion> by_root;  // the root is the smallest member: before nodes first
  for (int s = 0; s < 2; ++s) {
    const Side& side = sides[s];
    for (int id = 0; id < side.graph.num_nodes(); ++id) {
      if (!side.changed(id)) continue;
      DiffRegion& region = by_root[sets.Find(side.offset + id)];
      (s == 0 ? region.before_changed : region.after_changed).push_back(id);
    }
  }
  std::vector<DiffRegion> regions;
  for (auto& [root, region] : by_root) {
    for (int s = 0; s < 2; ++s) {
      const Side& side = sides[s];
      const std::vector<int>& changed = s == 0 ? region.before_changed : region.after_changed;
      std::set<int> context;
      for (int id : changed) {
        for (int n : side.Producers(id)) {
          if (!side.changed(n)) context.insert(n);
        }
        for (int n : side.readers[id]) {
          if (!side.changed(n)) context.insert(n);
        }
      }
      (s == 0 ? region.before_context : region.after_context).assign(context.begin(), context.end());
    }
    regions.push_back(std::move(region));
  }
  return regions;
}

}  // namespace taso::pictures
