#include "generator/recheck.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/canonical.h"
#include "core/fingerprint.h"
#include "core/hash.h"
#include "core/random_inputs.h"
#include "core/rule_form.h"
#include "records/encoding.h"
#include "records/rule_id.h"

namespace taso::generator {

Rechecker::Rechecker(const records::Spec& spec, const RecheckOptions& options) : spec_(spec), options_(options) {
  const int n = static_cast<int>(spec_.variables.size());
  group_of_.assign(n, -1);
  std::map<std::pair<std::string, bool>, std::vector<int>> by_type;
  for (int v = 0; v < n; ++v) {
    const records::Variable& var = spec_.variables[v];
    by_type[{var.type.ToString(), var.is_weight}].push_back(v);
    int_feeds_[var.name] = DeterministicIntTensor(var.type, var.name, spec_.seed + options_.int_seed_offset);
    float_feeds_[var.name] =
        DeterministicFloatTensor(var.type, var.name, spec_.seed + options_.float_seed_offset);
  }
  for (int v = 0; v < n; ++v) variable_keys_.push_back(Mix64(0x76ULL + static_cast<uint64_t>(v)));
  for (auto& [key, members] : by_type) {
    if (members.size() < 2) continue;
    for (int v : members) group_of_[v] = static_cast<int>(groups_.size());
    groups_.push_back(members);
  }
}

uint64_t Rechecker::RenamedKey(const std::vector<records::EncodedOp>& ops, const std::vector<int>& renaming,
                               std::vector<uint64_t>& pool, std::vector<uint64_t>& op_keys) const {
  const int n = static_cast<int>(spec_.variables.size());
  pool.clear();  // the operators' outputs, after the n variables
  op_keys.clear();
  for (const records::EncodedOp& op : ops) {
    const records::Template& tmpl = spec_.templates[op.template_index];
    uint64_t inputs[2] = {0, 0};
    const size_t num_inputs = std::min<size_t>(op.inputs.size(), 2);
    for (size_t i = 0; i < num_inputs; ++i) {
      const int p = op.inputs[i];
      if (p < n) {
        inputs[i] = variable_keys_[renaming[p]];
      } else if (p - n < static_cast<int>(pool.size())) {
        inputs[i] = pool[p - n];
      }
    }
    // A commutative operator's operands are enumerated in one order, which
    // computes the same: the key must not tell the orders apart, or an
    // orbit's least member could be an order never enumerated. Other
    // operators' orders are computations of their own, and the enumerator
    // produces every renaming of each (unordered_operands chooses an order
    // that renaming preserves), so the key keeps their order.
    if ((tmpl.kind == OpKind::kEwAdd || tmpl.kind == OpKind::kEwMul) && num_inputs == 2 && inputs[1] < inputs[0]) {
      std::swap(inputs[0], inputs[1]);
    }
    uint64_t key = Mix64(0x6f70ULL + static_cast<uint64_t>(op.template_index));
    for (size_t i = 0; i < num_inputs; ++i) key = Mix64(key * 0x9e3779b97f4a7c15ULL + inputs[i]);
    op_keys.push_back(key);
    int outputs = tmpl.kind == OpKind::kSplit ? 2 : 1;
    for (int o = 0; o < outputs; ++o) pool.push_back(Mix64(key + o + 1));
  }
  // The set of operators identifies the graph whatever their order.
  std::sort(op_keys.begin(), op_keys.end());
  uint64_t key = 0x67ULL;
  for (uint64_t k : op_keys) key = Mix64(key ^ k) + 0x9e3779b97f4a7c15ULL;
  return key;
}

bool Rechecker::IsCanonicalOrder(const std::string& encoding) const {
  auto ops = records::ParseEncoding(encoding);
  if (!ops.ok()) return false;
  const int n = static_cast<int>(spec_.variables.size());
  std::vector<bool> group_used(groups_.size(), false);
  for (const records::EncodedOp& op : *ops) {
    for (int p : op.inputs) {
      if (p < n && group_of_[p] >= 0) group_used[group_of_[p]] = true;
    }
  }
  std::vector<int> used;
  for (size_t g = 0; g < groups_.size(); ++g) {
    if (group_used[g]) used.push_back(static_cast<int>(g));
  }
  std::vector<int> identity(n);
  for (int v = 0; v < n; ++v) identity[v] = v;
  std::vector<uint64_t> pool, op_keys;  // scratch, reused by every renaming
  const uint64_t own = RenamedKey(*ops, identity, pool, op_keys);
  // Odometer over one permutation per used group.
  std::vector<std::vector<int>> perms;
  for (int g : used) perms.push_back(groups_[g]);
  std::vector<int> renaming = identity;  // each group's members are overwritten below
  while (true) {
    for (size_t i = 0; i < used.size(); ++i) {
      const std::vector<int>& members = groups_[used[i]];
      for (size_t m = 0; m < members.size(); ++m) renaming[members[m]] = perms[i][m];
    }
    if (RenamedKey(*ops, renaming, pool, op_keys) < own) return false;
    size_t i = 0;
    while (i < perms.size() && !std::next_permutation(perms[i].begin(), perms[i].end())) ++i;
    if (i == perms.size()) return true;
  }
}

bool Rechecker::TasoWouldDrop(const std::string& a, const std::string& b) const {
  auto ga = records::ParseEncoding(a);
  auto gb = records::ParseEncoding(b);
  if (!ga.ok() || !gb.ok() || ga->empty() || gb->empty()) return false;
  const int n = static_cast<int>(spec_.variables.size());
  auto all_variables = [n](const records::EncodedOp& op) {
    return std::all_of(op.inputs.begin(), op.inputs.end(), [n](int p) { return p < n; });
  };
  // Common subgraph: one operator on the same variables in both graphs.
  for (const records::EncodedOp& x : *ga) {
    if (!all_variables(x)) continue;
    for (const records::EncodedOp& y : *gb) {
      if (x.template_index == y.template_index && x.inputs == y.inputs) return true;
    }
  }
  // Common supergraph: the last operators agree but for at most one operand;
  // an operand read from another operator always counts as different.
  const records::EncodedOp& x = ga->back();
  const records::EncodedOp& y = gb->back();
  if (x.template_index != y.template_index || x.inputs.size() != y.inputs.size()) return false;
  int different = 0;
  for (size_t i = 0; i < x.inputs.size(); ++i) {
    different += x.inputs[i] >= n || y.inputs[i] >= n || x.inputs[i] != y.inputs[i];
  }
  return different <= 1;
}

namespace {

std::string Reason(const absl::Status& s, const char* what) {
  return absl::StrCat(what, ": ", s.message());
}

// The id and renaming key of the rule a surviving pair stands for, so the
// store can prove one pair per key (records/class_check.h). `source_text`:
// the source's CanonicalText, written once for the class's pairs.
void NameAsRule(const Graph& source, const absl::StatusOr<std::string>& source_text, const Graph& target,
                PairCheck& pair) {
  std::vector<std::pair<int, int>> outputs;
  PairView view{&source, {}, {}, &target, {}, {}};
  for (size_t i = 0; i < pair.output_mapping.size(); ++i) {
    outputs.emplace_back(static_cast<int>(i), pair.output_mapping[i]);
    view.ra.push_back(source.outputs()[i].tensor);
    view.rb.push_back(target.outputs()[pair.output_mapping[i]].tensor);
  }
  const auto target_text = CanonicalText(target);
  if (!source_text.ok() || !target_text.ok()) return;  // the pair is proved on its own
  pair.rule_id = records::RuleIdOfTexts(*source_text, *target_text, outputs);
  std::tie(pair.renaming_key, pair.reversed_key) = RenamingKeyAndReversed(view);
  for (const PairView& reduced : SmallerRulesImplying(view)) {
    std::string key = RenamingKey(reduced);
    if (std::find(pair.smaller_rule_keys.begin(), pair.smaller_rule_keys.end(), key) ==
        pair.smaller_rule_keys.end()) {
      pair.smaller_rule_keys.push_back(std::move(key));
    }
  }
}

}  // namespace

ClassCheck Rechecker::Check(const std::vector<std::string>& members) const {
  ClassCheck result;
  int representative = -1;
  result.canonical.assign(members.size(), false);
  for (size_t m = 0; m < members.size() && representative < 0; ++m) {
    if (IsCanonicalOrder(members[m])) {
      result.canonical[m] = true;
      representative = static_cast<int>(m);
    }
  }
  if (representative < 0) return result;

  struct Evaluated {
    absl::Status status;
    Graph graph;
    std::vector<IntTensor> ints;
    std::vector<Fingerprint> int_fingerprints;
    std::vector<FloatTensor> floats;
  };
  auto evaluate = [&](const std::string& encoding) {
    Evaluated e;
    auto graph = records::DecodeGraph(spec_, encoding);
    if (!graph.ok()) {
      e.status = graph.status();
      return e;
    }
    auto ints = EvaluateInt(*graph, int_feeds_, IntOptions{.relu_as_polynomial = true});
    auto floats = EvaluateFloat(*graph, float_feeds_);
    if (!ints.ok()) e.status = ints.status();
    else if (!floats.ok()) e.status = floats.status();
    if (!e.status.ok()) return e;
    e.ints = std::move(*ints);
    e.floats = std::move(*floats);
    e.graph = std::move(*graph);
    for (const IntTensor& t : e.ints) e.int_fingerprints.push_back(TensorFingerprint(t));
    return e;
  };

  const Evaluated source = evaluate(members[representative]);
  const absl::StatusOr<std::string> source_text =
      source.status.ok() ? CanonicalText(source.graph) : absl::StatusOr<std::string>(source.status);
  for (size_t m = 0; m < members.size(); ++m) {
    if (static_cast<int>(m) == representative) continue;
    PairCheck pair;
    pair.source = representative;
    pair.target = static_cast<int>(m);
    pair.taso_would_drop = TasoWouldDrop(members[representative], members[m]);
    const Evaluated target = evaluate(members[m]);
    if (!source.status.ok() || !target.status.ok()) {
      pair.rejected = true;
      pair.reason = !source.status.ok() ? Reason(source.status, "source does not evaluate")
                                        : Reason(target.status, "target does not evaluate");
    } else if (source.ints.size() != target.ints.size()) {
      pair.rejected = true;
      pair.reason = absl::StrCat("output counts differ: ", source.ints.size(), " vs ", target.ints.size());
    } else {
      // Match outputs as multisets on the second integer input set.
      std::vector<bool> taken(target.ints.size(), false);
      for (size_t i = 0; i < source.ints.size() && !pair.rejected; ++i) {
        int match = -1;
        for (size_t j = 0; j < target.ints.size(); ++j) {
          if (!taken[j] && target.int_fingerprints[j] == source.int_fingerprints[i] &&
              target.ints[j].type == source.ints[i].type && target.ints[j].data == source.ints[i].data) {
            match = static_cast<int>(j);
            break;
          }
        }
        if (match < 0) {
          pair.rejected = true;
          pair.reason = absl::StrCat("source output ", i, " (", source.ints[i].type.ToString(),
                                     ") has no equal target output on the second int32 input set");
          break;
        }
        taken[match] = true;
        pair.output_mapping.push_back(match);
      }
      for (size_t i = 0; i < pair.output_mapping.size() && !pair.rejected; ++i) {
        const FloatTensor& a = source.floats[i];
        const FloatTensor& b = target.floats[pair.output_mapping[i]];
        if (a.data.size() != b.data.size()) {
          pair.rejected = true;
          pair.reason = absl::StrCat("float output ", i, " sizes differ");
          break;
        }
        for (size_t e = 0; e < a.data.size(); ++e) {
          double x = a.data[e], y = b.data[e];
          if (!FloatsAgree(x, y, options_.tolerance)) {
            pair.rejected = true;
            pair.reason = absl::StrCat("float output ", i, " element ", e, ": ", x, " vs ", y,
                                       " (tolerance ", FloatBound(x, y, options_.tolerance), ")");
            break;
          }
        }
      }
    }
    if (pair.rejected) {
      pair.output_mapping.clear();
    } else {
      NameAsRule(source.graph, source_text, target.graph, pair);
    }
    result.pairs.push_back(std::move(pair));
  }
  return result;
}

records::ClassChecker RecheckerFor(const records::Spec& spec) {
  auto rechecker = std::make_shared<const Rechecker>(spec);
  return [rechecker](const std::vector<std::string>& members) { return rechecker->Check(members); };
}

}  // namespace taso::generator
