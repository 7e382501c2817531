#include "generator/enumerator.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/hash.h"
#include "core/interpreter.h"
#include "core/op.h"
#include "core/op_registry.h"
#include "core/random_inputs.h"
#include "records/encoding.h"

namespace taso::generator {
namespace {

// How an operator picks its operands from the pool.
enum class OperandRule {
  kNone,          // constants: no operands
  kUnary,         // any tensor
  kUnaryWeight,   // enlarge: only a weight straight from the spec
  kUnordered,     // commutative binary: {j, k}, j < k
  kOrdered,       // binary: (j, k), j != k; unordered_operands: see Candidates
  kConv,          // (j, k), j may equal k, j never a raw weight
  kTernary,       // fused kernels: (j, k, l), pairwise distinct
  kUnsupported,
};

OperandRule RuleFor(OpKind kind) {
  if (IsLoadTimeConstant(kind)) return OperandRule::kNone;
  switch (kind) {
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid:
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax:
    case OpKind::kTranspose:
    case OpKind::kSplit:
    case OpKind::kReshape:
      return OperandRule::kUnary;
    case OpKind::kEnlarge:
    case OpKind::kMergeGConv:
      return OperandRule::kUnaryWeight;
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
      return OperandRule::kUnordered;
    case OpKind::kMatMul:
    case OpKind::kConcat:
    case OpKind::kScalarMul:
      return OperandRule::kOrdered;
    case OpKind::kConv2D:
      return OperandRule::kConv;
    case OpKind::kFusedGemm:
      return OperandRule::kTernary;
    default:
      return OperandRule::kUnsupported;
  }
}

struct PoolTensor {
  IntTensor value;
  int type_id = 0;
  Fingerprint fingerprint;
  int producer = -1;       // operator position, or -1 for a variable
  bool raw_weight = false; // a spec constant, not computed
  uint64_t key = 0;        // identity of the computation, for operator keys
  // The renaming groups (type and role: x1, x2 and x3 are one) of the spec
  // tensors this one is computed from, a bit each (modulo 64). Renaming a
  // graph's tensors never changes it, and two sides of a rule that
  // distributes or moves operators compute matching operands from the same
  // groups.
  uint64_t groups = 0;
  int consumers = 0;
};

// An operator's outputs on its operands, and their fingerprints.
struct Evaluated {
  std::vector<IntTensor> values;
  std::vector<Fingerprint> fingerprints;
};

struct AppliedOp {
  int template_index = 0;
  int num_outputs = 0;
  uint64_t key = 0;
};

// Interned tensor types and memoized shape inference per (template, operand
// types), so the inner loop never formats an error message.
class ShapeCache {
 public:
  static constexpr int kDenseTypes = 256;

  int Intern(const TensorType& type) {
    Hasher h(0x74797065ULL);
    type.HashInto(h);
    Hash128 key = h.Finish();
    auto [it, inserted] = ids_.try_emplace(std::make_pair(key.hi, key.lo), static_cast<int>(types_.size()));
    if (inserted) types_.push_back(type);
    return it->second;
  }
  const TensorType& type(int id) const { return types_[id]; }

  // Output type ids of template `t` on operand types `a` (and `b`, `c`), or null.
  const std::vector<int>* Lookup(const records::Template& tmpl, int t, int a, int b, int c = -1) {
    int32_t* slot = nullptr;
    if (c >= 0) {
      // Three operands (fused kernels): rare, so keyed sparsely; type ids stay far below 2^18.
      slot = &ternary_[(static_cast<uint64_t>(t) << 54) | (static_cast<uint64_t>(a + 1) << 36) |
                       (static_cast<uint64_t>(b + 1) << 18) | static_cast<uint64_t>(c + 1)];
    } else if (a < kDenseTypes && b < kDenseTypes) {
      // Index 0 on either axis stands for "no operand" (-1).
      auto& table = dense_[t];
      if (table.empty()) table.assign((kDenseTypes + 1) * (kDenseTypes + 1), 0);
      slot = &table[(b + 1) * (kDenseTypes + 1) + (a + 1)];
    } else {
      slot = &sparse_[(static_cast<uint64_t>(t) << 42) | (static_cast<uint64_t>(a + 1) << 21) |
                      static_cast<uint64_t>(b + 1)];
    }
    if (*slot == 0) *slot = Compute(tmpl, a, b, c);
    return *slot < 0 ? nullptr : &results_[*slot - 1];
  }

  void Resize(int num_templates) { dense_.resize(num_templates); }

 private:
  int32_t Compute(const records::Template& tmpl, int a, int b, int c) {
    std::vector<TensorType> operands;
    for (int id : {a, b, c}) {
      if (id >= 0) operands.push_back(types_[id]);
    }
    if (!Enumerable(tmpl, operands)) return -1;
    auto out = InferOutputTypes(tmpl.kind, tmpl.params, operands);
    if (!out.ok()) return -1;
    std::vector<int> ids;
    for (const TensorType& type : *out) {
      if (type.num_elements() > records::kMaxTensorElements) return -1;
      ids.push_back(Intern(type));
    }
    results_.push_back(std::move(ids));
    return static_cast<int32_t>(results_.size());
  }

  // Whether one operand broadcasts to the other's shape (the result is the
  // larger operand's shape, never wider than both), both row-major.
  static bool BroadcastsOneWay(const TensorType& a, const TensorType& b) {
    if (!a.is_row_major() || !b.is_row_major()) return false;
    const TensorType& small = a.num_elements() <= b.num_elements() ? a : b;
    const TensorType& large = &small == &a ? b : a;
    if (small.rank() > large.rank()) return false;
    for (int i = 1; i <= small.rank(); ++i) {
      const int64_t d = small.dims[small.rank() - i];
      if (d != 1 && d != large.dims[large.rank() - i]) return false;
    }
    return true;
  }

  // The generator's own restrictions, narrower than what the IR accepts, so
  // the tree holds TASO's graphs and not every broadcast or batched variant.
  static bool Enumerable(const records::Template& tmpl, const std::vector<TensorType>& operands) {
    switch (tmpl.kind) {
      case OpKind::kEwAdd:
      case OpKind::kEwMul:  // same layout; broadcasting only where the template asks
        if (operands[0].dims == operands[1].dims) return operands[0].strides == operands[1].strides;
        return tmpl.broadcast && BroadcastsOneWay(operands[0], operands[1]);
      case OpKind::kMatMul:  // plain 2-D products
      case OpKind::kFusedGemm:
        return operands[0].rank() == 2 && operands[1].rank() == 2;
      case OpKind::kConv2D: {
        if (tmpl.kernels.empty()) return true;
        if (operands[1].rank() != 4) return false;
        std::pair<int, int> kernel(operands[1].dims[2], operands[1].dims[3]);
        return std::find(tmpl.kernels.begin(), tmpl.kernels.end(), kernel) != tmpl.kernels.end();
      }
      default:
        return true;
    }
  }

  struct PairHash {
    size_t operator()(const std::pair<uint64_t, uint64_t>& p) const { return p.first ^ Mix64(p.second); }
  };
  std::unordered_map<std::pair<uint64_t, uint64_t>, int, PairHash> ids_;
  std::vector<TensorType> types_;
  std::vector<std::vector<int32_t>> dense_;
  absl::flat_hash_map<uint64_t, int32_t> sparse_;
  absl::flat_hash_map<uint64_t, int32_t> ternary_;
  std::vector<std::vector<int>> results_;
};

class Enumerator {
 public:
  Enumerator(const records::Spec& spec, const EnumerationOptions& options, GraphSink& sink)
      : spec_(spec), options_(options), sink_(sink) {}

  absl::Status Init() {
    if (options_.max_ops < 1 || options_.max_ops > records::kMaxOpsLimit) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_ops must be in 1..", records::kMaxOpsLimit, ", got ", options_.max_ops));
    }
    if (options_.num_shards < 1 || options_.shard < 0 || options_.shard >= options_.num_shards) {
      return absl::InvalidArgumentError(absl::StrCat("shard ", options_.shard, " of ",
                                                     options_.num_shards, " is not a valid shard"));
    }
    num_variables_ = static_cast<int>(spec_.variables.size());
    if (num_variables_ + 2 * options_.max_ops > records::kMaxPoolEntries) {
      return absl::InvalidArgumentError(absl::StrCat("the spec has ", num_variables_,
                                                     " tensors; at most ",
                                                     records::kMaxPoolEntries - 2 * options_.max_ops, " fit"));
    }
    if (spec_.templates.size() > 255) {
      return absl::InvalidArgumentError("a spec may have at most 255 operator templates");
    }
    for (const records::Template& t : spec_.templates) {
      if (RuleFor(t.kind) == OperandRule::kUnsupported) {
        return absl::InvalidArgumentError(
            absl::StrCat("operator ", t.label, " cannot be enumerated by the generator"));
      }
    }
    split_depth_ = std::max(1, options_.max_ops - 1);
    shapes_.Resize(static_cast<int>(spec_.templates.size()));
    template_uses_.assign(spec_.templates.size(), 0);
    evaluated_.resize(options_.max_ops + 1);
    pool_.reserve(num_variables_ + 4 * records::kMaxOpsLimit);
    for (int v = 0; v < num_variables_; ++v) {
      const records::Variable& var = spec_.variables[v];
      PoolTensor p;
      p.value = DeterministicIntTensor(var.type, var.name, spec_.seed);
      p.type_id = shapes_.Intern(var.type);
      p.fingerprint = TensorFingerprint(p.value);
      p.raw_weight = var.is_weight;
      p.key = Mix64(0x7661726961626c65ULL + static_cast<uint64_t>(v));
      p.groups = uint64_t{1} << ((2 * p.type_id + (var.is_weight ? 1 : 0)) % 64);
      pool_.push_back(std::move(p));
    }
    return absl::OkStatus();
  }

  EnumerationStats Run() {
    Descend();
    if (!stats_.cancelled) {
      stats_.cursor = split_counter_;
      if (!sink_.OnCheckpoint(split_counter_, 1.0)) stats_.cancelled = true;
    }
    return stats_;
  }

 private:
  struct Candidate {
    int template_index;
    int inputs[3];
    int num_inputs;
  };

  void Candidates(std::vector<Candidate>& out) {
    const int n = static_cast<int>(pool_.size());
    for (int t = 0; t < static_cast<int>(spec_.templates.size()); ++t) {
      const records::Template& tmpl = spec_.templates[t];
      if (tmpl.max_uses > 0 && template_uses_[t] >= tmpl.max_uses) continue;
      switch (RuleFor(tmpl.kind)) {
        case OperandRule::kNone:
          out.push_back({t, {0, 0, 0}, 0});
          break;
        case OperandRule::kUnary:
        case OperandRule::kUnaryWeight: {
          bool weights_only = RuleFor(tmpl.kind) == OperandRule::kUnaryWeight;
          for (int j = 0; j < n; ++j) {
            if (weights_only && !pool_[j].raw_weight) continue;
            if (shapes_.Lookup(tmpl, t, pool_[j].type_id, -1)) out.push_back({t, {j, 0, 0}, 1});
          }
          break;
        }
        case OperandRule::kUnordered:
        case OperandRule::kOrdered:
        case OperandRule::kConv: {
          const OperandRule rule = RuleFor(tmpl.kind);
          // One order of a non-commutative operator's operands (TASO's
          // unordered concat), chosen by the groups each operand is computed
          // from: renaming a graph's tensors never turns a graph enumerated
          // into one that is not (the re-check's renaming classes need every
          // renaming enumerated), and a rule's two sides choose the same
          // order (concat(x, w) and transpose(concat(T(x), T(w)))). Operands
          // from the same groups (concat(x1, x2), concat(conv(i, w4),
          // conv(i, w5))) take both orders, and so does a constant computed
          // from none (concat(i, ones)), which stands for no group.
          const bool one_order = rule == OperandRule::kOrdered && tmpl.unordered_operands;
          for (int j = 0; j < n; ++j) {
            if (rule == OperandRule::kConv && pool_[j].raw_weight) continue;
            for (int k = rule == OperandRule::kUnordered ? j + 1 : 0; k < n; ++k) {
              if (k == j && rule != OperandRule::kConv) continue;
              if (one_order && pool_[j].groups > pool_[k].groups && pool_[k].groups != 0) continue;
              if (shapes_.Lookup(tmpl, t, pool_[j].type_id, pool_[k].type_id)) {
                out.push_back({t, {j, k, 0}, 2});
              }
            }
          }
          break;
        }
        case OperandRule::kTernary:
          // Three distinct operands in their order (a fused kernel's roles differ).
          for (int j = 0; j < n; ++j) {
            for (int k = 0; k < n; ++k) {
              if (k == j) continue;
              for (int l = 0; l < n; ++l) {
                if (l == j || l == k) continue;
                if (shapes_.Lookup(tmpl, t, pool_[j].type_id, pool_[k].type_id, pool_[l].type_id)) {
                  out.push_back({t, {j, k, l}, 3});
                }
              }
            }
          }
          break;
        case OperandRule::kUnsupported:
          break;
      }
    }
  }

  // Applies every admissible operator to the current graph and recurses.
  void Descend() {
    const int depth = static_cast<int>(ops_.size()) + 1;  // size of the graphs made here
    std::vector<Candidate> candidates;
    Candidates(candidates);
    for (size_t c = 0; c < candidates.size() && !stats_.cancelled; ++c) {
      if (depth == 1) done_fraction_ = static_cast<double>(c) / candidates.size();
      Apply(candidates[c], depth);
    }
  }

  void Apply(const Candidate& cand, int depth) {
    const records::Template& tmpl = spec_.templates[cand.template_index];
    // The operator's key: its template and the identities of its operands.
    uint64_t key = Mix64(0x6f70ULL + static_cast<uint64_t>(cand.template_index));
    int last_dependency = -1;
    uint64_t groups = 0;
    for (int i = 0; i < cand.num_inputs; ++i) {
      const PoolTensor& in = pool_[cand.inputs[i]];
      key = Mix64(key * 0x9e3779b97f4a7c15ULL + in.key);
      last_dependency = std::max(last_dependency, in.producer);
      groups |= in.groups;
    }
    // Least topological order: every operator after the last one this reads
    // must have a smaller key, or this graph is reached in another order.
    for (int i = last_dependency + 1; i < static_cast<int>(ops_.size()); ++i) {
      if (ops_[i].key >= key) {
        ++stats_.pruned_order;
        return;
      }
    }
    const int a = pool_[cand.inputs[0]].type_id;
    const int b = cand.num_inputs > 1 ? pool_[cand.inputs[1]].type_id : -1;
    const int c = cand.num_inputs > 2 ? pool_[cand.inputs[2]].type_id : -1;
    const std::vector<int>* out_types =
        shapes_.Lookup(tmpl, cand.template_index, cand.num_inputs > 0 ? a : -1, b, c);
    if (out_types == nullptr) return;

    // An operator that does not read the newest one is applied again under
    // every later sibling of the newest: its value is kept at its level.
    const int level = last_dependency + 1;
    const bool reusable = level < static_cast<int>(ops_.size());
    Evaluated fresh;
    Evaluated* evaluated = nullptr;
    if (reusable) {
      auto it = evaluated_[level].find(key);
      if (it != evaluated_[level].end()) {
        evaluated = &it->second;
        ++stats_.evaluations_reused;
      }
    }
    if (evaluated == nullptr) {
      std::vector<const IntTensor*> operands;
      for (int i = 0; i < cand.num_inputs; ++i) operands.push_back(&pool_[cand.inputs[i]].value);
      ++stats_.evaluations;
      auto outputs = EvalOpInt(tmpl.kind, tmpl.params, operands, IntOptions{.relu_as_polynomial = true});
      if (!outputs.ok()) return;  // shape inference agreed, so this is not expected
      fresh.values = *std::move(outputs);
      for (const IntTensor& v : fresh.values) fresh.fingerprints.push_back(TensorFingerprint(v));
      evaluated = reusable ? &(evaluated_[level][key] = std::move(fresh)) : &fresh;
    }
    const size_t num_outputs = evaluated->values.size();

    const size_t pool_before = pool_.size();
    for (size_t o = 0; o < num_outputs; ++o) {
      PoolTensor p;
      // A kept value is copied (its level serves other graphs); a fresh one moved.
      p.value = reusable ? evaluated->values[o] : std::move(evaluated->values[o]);
      p.type_id = (*out_types)[o];
      p.fingerprint = evaluated->fingerprints[o];
      p.producer = static_cast<int>(ops_.size());
      p.key = Mix64(key + o + 1);
      p.groups = groups;
      for (size_t q = 0; q < pool_.size(); ++q) {
        if (pool_[q].fingerprint == p.fingerprint && pool_[q].value.data == p.value.data) {
          ++stats_.pruned_equal_tensor;
          pool_.resize(pool_before);
          return;
        }
      }
      pool_.push_back(std::move(p));
    }

    for (int i = 0; i < cand.num_inputs; ++i) ++pool_[cand.inputs[i]].consumers;
    ops_.push_back({cand.template_index, static_cast<int>(num_outputs), key});
    ++template_uses_[cand.template_index];
    const size_t encoding_before = encoding_.size();
    records::AppendEncodedOp(cand.template_index, cand.inputs, cand.num_inputs, encoding_);

    if (depth < split_depth_) {
      if (options_.shard == 0) Emit(depth);
      if (depth < options_.max_ops) Descend();
    } else if (depth == split_depth_) {
      const int64_t number = split_counter_++;
      if (number % options_.num_shards == options_.shard && number >= options_.start_cursor) {
        Emit(depth);
        if (depth < options_.max_ops) Descend();
        if (!stats_.cancelled) {
          ++stats_.subtrees;
          stats_.cursor = number + 1;
          if (!sink_.OnCheckpoint(number + 1, done_fraction_)) stats_.cancelled = true;
        }
      }
    } else {
      Emit(depth);
      if (depth < options_.max_ops) Descend();
    }

    encoding_.resize(encoding_before);
    --template_uses_[cand.template_index];
    ops_.pop_back();
    // What read this operator is not applied again (its key names the
    // computation, so a kept value is never wrong, only no longer asked for).
    evaluated_[ops_.size() + 1].clear();
    for (int i = 0; i < cand.num_inputs; ++i) --pool_[cand.inputs[i]].consumers;
    pool_.resize(pool_before);
  }

  void Emit(int depth) {
    std::vector<Fingerprint> outputs;
    for (size_t q = num_variables_; q < pool_.size(); ++q) {
      if (pool_[q].consumers == 0) outputs.push_back(pool_[q].fingerprint);
    }
    ++stats_.graphs;
    ++stats_.graphs_by_size[depth];
    sink_.OnGraph(CombineOutputFingerprints(std::move(outputs)), encoding_, depth);
  }

  const records::Spec& spec_;
  const EnumerationOptions options_;
  GraphSink& sink_;
  int num_variables_ = 0;
  int split_depth_ = 1;
  int64_t split_counter_ = 0;
  double done_fraction_ = 0;
  ShapeCache shapes_;
  std::vector<PoolTensor> pool_;
  std::vector<AppliedOp> ops_;
  // evaluated_[L], by operator key: operators whose newest operand is
  // operator L-1's (L = 0: spec tensors only). One is applied again under
  // each later operator of the graph (conv(i1, w4) under every second and
  // third operator), so it is evaluated once per prefix of L operators.
  std::vector<absl::flat_hash_map<uint64_t, Evaluated>> evaluated_;
  std::vector<int> template_uses_;
  std::string encoding_;
  EnumerationStats stats_;
};

}  // namespace

absl::StatusOr<EnumerationStats> Enumerate(const records::Spec& spec, const EnumerationOptions& options,
                                           GraphSink& sink) {
  auto enumerator = std::make_unique<Enumerator>(spec, options, sink);
  if (absl::Status s = enumerator->Init(); !s.ok()) return s;
  return enumerator->Run();
}

}  // namespace taso::generator
