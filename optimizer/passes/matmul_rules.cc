#include "optimizer/passes/matmul_rules.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "optimizer/rewrite/match.h"

namespace taso::optimizer {
namespace {

// Subset sums of the widths past which bias rules are not made: a group of
// 8 equal widths needs 28 size pairs; mixed widths could need thousands.
constexpr int kMaxBiasSizePairs = 256;
// The most matmuls of one input merged by one rule (a rule with k roots).
constexpr int kMaxMergedAtOnce = 16;

OpParams AlongAxis(int axis) {
  OpParams p;
  p.axis = axis;
  return p;
}

OpParams WithActivation(Activation act) {
  OpParams p;
  p.activation = act;
  return p;
}

std::string ActName(Activation act) { return CanonicalParams(OpKind::kMatMul, WithActivation(act)); }

// The k parts of `whole` along `axis`: one split of k explicit sizes of
// `part` each (`sized`), or k-1 two-way splits undoing an n-ary concat,
// whose boundaries the concat records nested to the left.
std::optional<std::vector<TensorRef>> SplitInto(Graph& g, TensorRef whole, int axis, int k, int64_t part,
                                                bool sized) {
  if (sized) {
    OpParams sizes = AlongAxis(axis);
    sizes.sizes.assign(k, part);
    auto parts = g.AddOp(OpKind::kSplit, sizes, {whole});
    if (!parts.ok()) return std::nullopt;
    return *parts;
  }
  std::vector<TensorRef> outs(k);
  TensorRef rest = whole;
  for (int i = k - 1; i > 0; --i) {
    auto parts = g.AddOp(OpKind::kSplit, AlongAxis(axis), {rest});
    if (!parts.ok()) return std::nullopt;
    outs[i] = (*parts)[1];
    rest = (*parts)[0];
  }
  outs[0] = rest;
  return outs;
}

// A merge rule's name: "<kind>:matmul<x rank>x<w rank>[*k][sized dims][act]".
std::string MergeName(absl::string_view kind, const TensorType& x, const TensorType& w, int k, bool sized,
                      Activation act) {
  return absl::StrCat(kind, ":matmul", x.rank(), "x", w.rank(), k == 2 ? "" : absl::StrCat("*", k),
                      sized ? absl::StrCat("[sizes,x=", absl::StrJoin(x.dims, "x"), ",w=", absl::StrJoin(w.dims, "x"), "]")
                            : "",
                      "[", ActName(act), "]");
}

// matmul_P(x, w1), ..., matmul_P(x, wk)
//   => split^(k-1)(matmul_P(x, concat(w1, ..., wk))),
// concatenated and split along the output (last) axis; the n-ary concat
// records its boundaries nested to the left, so k-1 splits undo it.
// With `sized`, one split with explicit sizes takes the parts instead (at
// these dims only): what a hand merge writes, and what the k-way add and bias
// rules below match in one step each, where a chain needs k-1 levels (eqsat
// rounds) of them.
std::optional<RewriteRule> SharedInputMerge(const TensorType& x, const TensorType& w, Activation act, int k,
                                            bool sized) {
  const OpParams p = WithActivation(act);
  Graph lhs, rhs;
  std::vector<std::string> names;
  for (int i = 1; i <= k; ++i) names.push_back(absl::StrCat("w", i));
  TensorRef lx = lhs.AddInput("x", x);
  std::vector<TensorRef> rw;
  TensorRef rx = rhs.AddInput("x", x);
  for (int i = 0; i < k; ++i) {
    auto m = lhs.AddOp1(OpKind::kMatMul, p, {lx, lhs.AddWeight(names[i], w)});
    if (!m.ok()) return std::nullopt;
    lhs.AddOutput(absl::StrCat("out", i), *m);
    rw.push_back(rhs.AddWeight(names[i], w));
  }
  auto weights = rhs.AddOp1(OpKind::kConcat, AlongAxis(w.rank() - 1), rw);
  if (!weights.ok()) return std::nullopt;
  auto merged = rhs.AddOp1(OpKind::kMatMul, p, {rx, *weights});
  if (!merged.ok()) return std::nullopt;
  auto outs = SplitInto(rhs, *merged, rhs.type(*merged).rank() - 1, k, w.dims.back(), sized);
  if (!outs) return std::nullopt;
  for (int i = 0; i < k; ++i) rhs.AddOutput(absl::StrCat("out", i), (*outs)[i]);
  RewriteRule r = RewriteFromSides(MergeName("merge", x, w, k, sized, act), std::move(lhs), std::move(rhs),
                                   std::move(names), /*exact_variable_types=*/sized);
  r.symmetric_outputs = true;  // any order of the weights merges as well: one is enough
  // Merges of more than two cover what is worth having in one round; a
  // second would merge merged matmuls again, every way. Pairs keep eqsat's
  // two rounds (with the cpu costs, its extraction picked nothing from
  // round-1 merges alone on LSTM and NAS-RNN cells: bench/matmul_merge_bench),
  // and so do forms with an activation, which exist once the activation
  // fusion has run in round 1.
  r.eqsat_rounds = act == Activation::kNone && k > 2 ? 1 : 2;
  return r;
}

// matmul_P(x1, w), ..., matmul_P(xk, w) with one constant w
//   => split^(k-1)(matmul_P(concat(x1, ..., xk), w)),
// the inputs stacked and the result split along the rows (axis rank-2): the
// steps of an unrolled RNN multiply their inputs by the same weight one row
// at a time, and one matrix product reads the weight once where k
// matrix-vector products read it k times (the LSTM cell's input side batched
// by hand runs 1.45x faster in ONNX Runtime on one thread). The inputs must
// not depend on one another's products: both searches reject the cyclic
// matches, and MatMulRewrites makes the rule only for weights read by k
// independent matmuls. With `sized`, one split of explicit sizes at these
// dims, as for SharedInputMerge.
std::optional<RewriteRule> SharedWeightBatch(const TensorType& x, const TensorType& w, Activation act, int k,
                                             bool sized) {
  if (x.rank() < 2) return std::nullopt;
  const OpParams p = WithActivation(act);
  const int rows = x.rank() - 2;
  Graph lhs, rhs;
  TensorRef lw = lhs.AddWeight("w", w);
  std::vector<TensorRef> rx;
  for (int i = 0; i < k; ++i) {
    const std::string name = absl::StrCat("x", i + 1);
    auto m = lhs.AddOp1(OpKind::kMatMul, p, {lhs.AddInput(name, x), lw});
    if (!m.ok()) return std::nullopt;
    lhs.AddOutput(absl::StrCat("out", i), *m);
    rx.push_back(rhs.AddInput(name, x));
  }
  auto stacked = rhs.AddOp1(OpKind::kConcat, AlongAxis(rows), rx);
  if (!stacked.ok()) return std::nullopt;
  auto batched = rhs.AddOp1(OpKind::kMatMul, p, {*stacked, rhs.AddWeight("w", w)});
  if (!batched.ok()) return std::nullopt;
  auto outs = SplitInto(rhs, *batched, rows, k, x.dims[rows], sized);
  if (!outs) return std::nullopt;
  for (int i = 0; i < k; ++i) rhs.AddOutput(absl::StrCat("out", i), (*outs)[i]);
  RewriteRule r = RewriteFromSides(MergeName("batch", x, w, k, sized, act), std::move(lhs), std::move(rhs), {"w"},
                                   /*exact_variable_types=*/sized);
  r.symmetric_outputs = true;  // any order of the inputs stacks as well
  r.eqsat_rounds = k > 2 ? 1 : 2;  // as SharedInputMerge: batches of batches are not wanted
  return r;
}

// The most of `mms` (matmuls reading one weight) none of whose left operands
// is computed from another's result: how many one batch can take.
int IndependentReaders(const Graph& graph, const std::vector<int>& mms) {
  const std::set<int> readers(mms.begin(), mms.end());
  int independent = 0;
  for (int id : mms) {
    // Walk back from the left operand; reaching another reader makes it dependent.
    std::vector<int> stack = {graph.node(id).inputs[0].node};
    std::set<int> seen;
    bool dependent = false;
    while (!stack.empty() && !dependent) {
      const int n = stack.back();
      stack.pop_back();
      if (!seen.insert(n).second) continue;
      if (readers.count(n) != 0) dependent = true;
      for (const TensorRef& in : graph.node(n).inputs) stack.push_back(in.node);
    }
    independent += !dependent;
  }
  return independent;
}

// A constant added per output column to a matmul's result.
struct BiasForm {
  std::vector<int64_t> out;   // the matmul's output dims
  std::vector<int64_t> bias;  // the constant's dims; last = the matmul's width
  int bias_side;              // operand position of the constant in the add
  bool operator<(const BiasForm& o) const {
    return std::tie(out, bias, bias_side) < std::tie(o.out, o.bias, o.bias_side);
  }
};

TensorType WithLast(std::vector<int64_t> dims, int64_t last) {
  dims.back() = last;
  return TensorType::RowMajor(DType::kFloat32, std::move(dims));
}

// ewadd(s0, c1), ewadd(s1, c2) with (s0, s1) = split(y), y [..., a+b]
//   => split[a, b](ewadd(y, concat(c1, c2))), operands in the add's order.
// With `sized`, the split on the left has explicit sizes too, and any number
// of `parts`: what this rule, SplitPairAdd and a sized merge leave, so a
// chain of splits moves its adds up level by level and a k-way split at once.
std::optional<RewriteRule> BiasAfterSplit(const BiasForm& f, const std::vector<int64_t>& parts, bool sized) {
  if (parts.size() < 2 || (!sized && parts.size() != 2)) return std::nullopt;
  int64_t total = 0;
  for (int64_t p : parts) total += p;
  TensorType y = WithLast(f.out, total);
  const int last = y.rank() - 1;
  if (!sized) y.split[last] = MakeSplit(parts[0], nullptr, nullptr);  // as a merged matmul records it
  OpParams sizes = AlongAxis(last);
  sizes.sizes = parts;
  auto add = [&](Graph& g, TensorRef value, TensorRef bias) {
    std::vector<TensorRef> operands(2);
    operands[f.bias_side] = bias;
    operands[1 - f.bias_side] = value;
    return g.AddOp1(OpKind::kEwAdd, OpParams{}, operands);
  };
  std::vector<std::string> names;
  Graph lhs, rhs;
  auto split = lhs.AddOp(OpKind::kSplit, sized ? sizes : AlongAxis(last), {lhs.AddInput("y", y)});
  if (!split.ok()) return std::nullopt;
  std::vector<TensorRef> biases;
  for (size_t i = 0; i < parts.size(); ++i) {
    names.push_back(absl::StrCat("c", i + 1));
    const TensorType c = WithLast(f.bias, parts[i]);
    auto sum = add(lhs, (*split)[i], lhs.AddWeight(names.back(), c));
    if (!sum.ok()) return std::nullopt;
    lhs.AddOutput(absl::StrCat("out", i), *sum);
    biases.push_back(rhs.AddWeight(names.back(), c));
  }
  auto bias = rhs.AddOp1(OpKind::kConcat, AlongAxis(static_cast<int>(f.bias.size()) - 1), biases);
  if (!bias.ok()) return std::nullopt;
  auto sum = add(rhs, rhs.AddInput("y", y), *bias);
  if (!sum.ok()) return std::nullopt;
  auto out = rhs.AddOp(OpKind::kSplit, sizes, {*sum});
  if (!out.ok()) return std::nullopt;
  for (size_t i = 0; i < parts.size(); ++i) rhs.AddOutput(absl::StrCat("out", i), (*out)[i]);
  return RewriteFromSides(absl::StrCat("merge:split", sized ? "[sizes]" : "", "+bias", f.bias_side == 0 ? "~" : "",
                                       "[", absl::StrJoin(parts, ","), ",out=", absl::StrJoin(y.dims, "x"),
                                       ",bias=", absl::StrJoin(f.bias, "x"), "]"),
                          std::move(lhs), std::move(rhs), std::move(names), /*exact_variable_types=*/true);
}

// ewadd(y0, z0), ewadd(y1, z1) with (y0, y1) = split(y), (z0, z1) = split(z),
// y and z [..., a+b] split at a => split[a, b](ewadd(y, z)): the parts of two
// merged matmuls added pairwise (an RNN gate's matmul of x_t plus its matmul
// of h_{t-1}) become one add of the merged results. Made at the sizes of the
// graph's sums of two matmuls, as the bias rules are; with `sized`, both
// splits have explicit sizes and any number of `parts` (sized merges).
std::optional<RewriteRule> SplitPairAdd(const std::vector<int64_t>& out, const std::vector<int64_t>& parts,
                                        bool sized) {
  if (parts.size() < 2 || (!sized && parts.size() != 2)) return std::nullopt;
  int64_t total = 0;
  for (int64_t p : parts) total += p;
  TensorType y = WithLast(out, total);
  const int last = y.rank() - 1;
  if (!sized) y.split[last] = MakeSplit(parts[0], nullptr, nullptr);
  OpParams sizes = AlongAxis(last);
  sizes.sizes = parts;
  Graph lhs, rhs;
  auto ly = lhs.AddOp(OpKind::kSplit, sized ? sizes : AlongAxis(last), {lhs.AddInput("y", y)});
  auto lz = lhs.AddOp(OpKind::kSplit, sized ? sizes : AlongAxis(last), {lhs.AddInput("z", y)});
  if (!ly.ok() || !lz.ok()) return std::nullopt;
  for (size_t i = 0; i < parts.size(); ++i) {
    auto sum = lhs.AddOp1(OpKind::kEwAdd, OpParams{}, {(*ly)[i], (*lz)[i]});
    if (!sum.ok()) return std::nullopt;
    lhs.AddOutput(absl::StrCat("out", i), *sum);
  }
  auto sum = rhs.AddOp1(OpKind::kEwAdd, OpParams{}, {rhs.AddInput("y", y), rhs.AddInput("z", y)});
  if (!sum.ok()) return std::nullopt;
  auto split = rhs.AddOp(OpKind::kSplit, sizes, {*sum});
  if (!split.ok()) return std::nullopt;
  for (size_t i = 0; i < parts.size(); ++i) rhs.AddOutput(absl::StrCat("out", i), (*split)[i]);
  return RewriteFromSides(absl::StrCat("merge:split", sized ? "[sizes]" : "", "+add[", absl::StrJoin(parts, ","),
                                       ",out=", absl::StrJoin(y.dims, "x"), "]"),
                          std::move(lhs), std::move(rhs), {}, /*exact_variable_types=*/true);
}

// The perm that swaps the last two of `rank` axes.
std::vector<int> SwapLastTwo(int rank) {
  std::vector<int> perm;
  for (int i = 0; i < rank; ++i) perm.push_back(i);
  if (rank >= 2) std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

// matmul_P(transpose(x), y) => matmul_P(transpose[view](x), y), the
// transposed operand at `side`: the matmul reads x with swapped strides
// instead of a copy being made first.
std::optional<RewriteRule> TransposeFold(const TensorType& pre, const TensorType& other, int side, Activation act) {
  OpParams copy;
  copy.perm = SwapLastTwo(pre.rank());
  OpParams view = copy;
  view.shuffle = false;
  auto build = [&](Graph& g, const OpParams& t) -> std::optional<TensorRef> {
    TensorRef x = g.AddInput("x", pre), y = g.AddInput("y", other);
    auto moved = g.AddOp1(OpKind::kTranspose, t, {x});
    if (!moved.ok()) return std::nullopt;
    auto mm = g.AddOp1(OpKind::kMatMul, WithActivation(act), side == 0 ? std::vector<TensorRef>{*moved, y}
                                                                         : std::vector<TensorRef>{y, *moved});
    if (!mm.ok()) return std::nullopt;
    g.AddOutput("out0", *mm);
    return *mm;
  };
  Graph lhs, rhs;
  if (!build(lhs, copy) || !build(rhs, view)) return std::nullopt;
  return RewriteFromSides(absl::StrCat("fold:transpose+matmul", pre.rank(), "x", other.rank(), side == 0 ? "" : "~",
                                       "[", ActName(act), "]"),
                          std::move(lhs), std::move(rhs), {}, /*exact_variable_types=*/false);
}

// The activations matmul `n` computes with or may take once an activation
// reading it is fused.
std::set<Activation> ActivationForms(const Graph& graph, const GraphIndex& index, const Node& n) {
  std::set<Activation> acts = {n.params.activation};
  if (n.params.activation != Activation::kNone) return acts;
  for (int reader : index.consumers(n.id)) {
    if (auto act = ActivationOfKind(graph.node(reader).kind)) acts.insert(*act);
  }
  return acts;
}

// The per-column constant bias added to matmul `mm`'s output by `add`.
std::optional<BiasForm> BiasOf(const Graph& graph, const GraphIndex& index, const Node& mm, const Node& add) {
  if (add.kind != OpKind::kEwAdd || add.inputs.size() != 2 || mm.params.activation != Activation::kNone) {
    return std::nullopt;
  }
  const std::vector<int64_t>& out = graph.type(TensorRef{mm.id, 0}).dims;
  for (int side = 0; side < 2; ++side) {
    if (add.inputs[1 - side] != TensorRef{mm.id, 0} || !index.is_constant(add.inputs[side].node)) continue;
    const std::vector<int64_t>& c = graph.type(add.inputs[side]).dims;
    if (c.empty() || c.back() != out.back() || graph.type(TensorRef{add.id, 0}).dims != out) continue;
    return BiasForm{out, c, side};
  }
  return std::nullopt;
}

// True when `t` is the output of a matmul with a constant right operand.
bool IsConstantMatMul(const Graph& graph, const GraphIndex& index, TensorRef t) {
  const Node& n = graph.node(t.node);
  return n.kind == OpKind::kMatMul && index.is_constant(n.inputs[1].node);
}

// ewadd(matmul(x, w1), matmul(h, w2)) of equal dims, x and h distinct: the
// sums SplitPairAdd merges once both inputs' matmuls are merged.
bool IsSumOfMatMuls(const Graph& graph, const GraphIndex& index, const Node& add) {
  if (add.kind != OpKind::kEwAdd || add.inputs.size() != 2) return false;
  const TensorRef l = add.inputs[0], r = add.inputs[1];
  if (!IsConstantMatMul(graph, index, l) || !IsConstantMatMul(graph, index, r)) return false;
  if (graph.node(l.node).inputs[0] == graph.node(r.node).inputs[0]) return false;
  const auto& out = graph.type(TensorRef{add.id, 0}).dims;
  return graph.type(l).dims == out && graph.type(r).dims == out;
}

// Sums of sub-multisets of `widths`, ascending.
std::set<int64_t> SubsetSums(const std::vector<int64_t>& widths) {
  std::set<int64_t> sums;
  for (int64_t w : widths) {
    std::set<int64_t> next = sums;
    next.insert(w);
    for (int64_t s : sums) next.insert(s + w);
    sums = std::move(next);
    if (sums.size() > 64) break;  // kMaxBiasSizePairs bounds what is used
  }
  return sums;
}

// Every (a, b) of subset sums of `widths` with a + b at most their total (at
// most kMaxBiasSizePairs): the ways a merge's parts divide into two groups.
std::vector<std::pair<int64_t, int64_t>> SizePairs(const std::vector<int64_t>& widths) {
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (widths.size() < 2) return pairs;
  const std::set<int64_t> sums = SubsetSums(widths);
  int64_t total = 0;
  for (int64_t w : widths) total += w;
  for (int64_t a : sums) {
    for (int64_t b : sums) {
      if (a + b > total || static_cast<int>(pairs.size()) >= kMaxBiasSizePairs) continue;
      pairs.push_back({a, b});
    }
  }
  return pairs;
}

}  // namespace

std::vector<RewriteRule> MatMulRewrites(const Graph& graph) {
  std::vector<RewriteRule> out;
  std::set<std::string> made;
  auto keep = [&](std::optional<RewriteRule> r) {
    if (r && made.insert(r->name).second) out.push_back(std::move(*r));
  };
  const GraphIndex index(graph);
  // Matmuls with a constant right operand, by the tensor they read and by
  // the constant they share.
  std::map<std::pair<int, int>, std::vector<int>> readers, sharing;
  for (int id : index.nodes_of(OpKind::kMatMul)) {
    const Node& n = graph.node(id);
    if (!index.is_constant(n.inputs[1].node)) continue;
    readers[{n.inputs[0].node, n.inputs[0].index}].push_back(id);
    sharing[{n.inputs[1].node, n.inputs[1].index}].push_back(id);
  }
  for (const auto& [weight, mms] : sharing) {
    const int n = mms.size() < 2 ? 0 : std::min(IndependentReaders(graph, mms), kMaxMergedAtOnce);
    if (n < 2) continue;
    const Node& first = graph.node(mms[0]);
    const TensorType x = graph.type(first.inputs[0]).Plain(), w = graph.type(first.inputs[1]).Plain();
    for (Activation act : ActivationForms(graph, index, first)) {
      if (n > 2) keep(SharedWeightBatch(x, w, act, n, true));
      for (int k = 2; k <= n; k *= 2) keep(SharedWeightBatch(x, w, act, k, false));
      keep(SharedWeightBatch(x, w, act, n, false));
    }
  }
  for (const auto& [tensor, mms] : readers) {
    if (mms.size() < 2) continue;
    std::map<BiasForm, std::vector<int64_t>> biased;           // widths per bias form
    std::map<std::vector<int64_t>, std::vector<int64_t>> summed;  // widths per sum's dims
    for (int id : mms) {
      const Node& n = graph.node(id);
      for (Activation act : ActivationForms(graph, index, n)) {
        const TensorType x = graph.type(n.inputs[0]).Plain(), w = graph.type(n.inputs[1]).Plain();
        // Pairs, groups of 4, 8, 16, and all of them at once: a search
        // need not pass through every partial merge (a costlier step
        // backtracking may not take; eqsat runs these rules one round).
        const int n = static_cast<int>(mms.size());
        // The sized form first: of equal costs backtracking expands the
        // first rule's graph first, and only that form lets the k-way add
        // and bias rules follow in one step each.
        if (n > 2 && n <= kMaxMergedAtOnce) keep(SharedInputMerge(x, w, act, n, true));
        for (int k = 2; k <= n && k <= kMaxMergedAtOnce; k *= 2) keep(SharedInputMerge(x, w, act, k, false));
        if (n <= kMaxMergedAtOnce) keep(SharedInputMerge(x, w, act, n, false));
      }
      for (int reader : index.consumers(id)) {
        const Node& r = graph.node(reader);
        if (auto f = BiasOf(graph, index, n, r)) biased[*f].push_back(f->out.back());
        if (!IsSumOfMatMuls(graph, index, r)) continue;
        // A gate's x- and h-matmuls summed: the sums merge, then their bias.
        const std::vector<int64_t>& out = graph.type(TensorRef{r.id, 0}).dims;
        summed[out].push_back(out.back());
        for (int bias_reader : index.consumers(r.id)) {
          if (auto f = BiasOf(graph, index, r, graph.node(bias_reader))) biased[*f].push_back(f->out.back());
        }
      }
    }
    // Pairs for chains of two-way splits; all parts at once, where they are
    // of one width, for the sized merge.
    auto all_equal = [](const std::vector<int64_t>& v) {
      return v.size() > 2 && std::count(v.begin(), v.end(), v[0]) == static_cast<int64_t>(v.size());
    };
    for (const auto& [form, widths] : biased) {
      for (const auto& [a, b] : SizePairs(widths)) {
        keep(BiasAfterSplit(form, {a, b}, /*sized=*/false));
        keep(BiasAfterSplit(form, {a, b}, /*sized=*/true));
      }
      if (all_equal(widths)) keep(BiasAfterSplit(form, widths, /*sized=*/true));
    }
    for (const auto& [out, widths] : summed) {
      for (const auto& [a, b] : SizePairs(widths)) keep(SplitPairAdd(out, {a, b}, /*sized=*/false));
      if (all_equal(widths)) keep(SplitPairAdd(out, widths, /*sized=*/true));
    }
  }
  // Copies of an operand with its last two axes swapped, read by a matmul.
  for (int id : index.nodes_of(OpKind::kMatMul)) {
    const Node& n = graph.node(id);
    for (int side = 0; side < 2; ++side) {
      const Node& t = graph.node(n.inputs[side].node);
      if (t.kind != OpKind::kTranspose || !t.params.shuffle) continue;
      const TensorType& pre = graph.type(t.inputs[0]);
      if (pre.rank() < 2 || t.params.perm != SwapLastTwo(pre.rank())) continue;
      for (Activation act : ActivationForms(graph, index, n)) {
        keep(TransposeFold(pre.Plain(), graph.type(n.inputs[1 - side]).Plain(), side, act));
      }
    }
  }
  return out;
}

}  // namespace taso::optimizer
