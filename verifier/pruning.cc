#include "verifier/pruning.h"

#include <algorithm>
#include <map>
#include <optional>
#include <functional>
#include <memory>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph_proto.h"
#include "core/hash.h"
#include "core/parallel_for.h"
#include "core/rule_form.h"
#include "core/side_conditions.h"

namespace taso::verifier {
namespace {

// Renamings tried per lookup, at most: groups of interchangeable variables
// are small (three per type in TASO's spec), so this is rarely reached.
constexpr size_t kMaxRenamings = 512;

using Substitution = FormSubstitution;
using Renaming = VariableRenaming;

// 128-bit keys stand in for the side and skeleton texts, so millions of rules
// fit in memory; at 128 bits a chance collision among them is negligible.
Hash128 TextKey(const std::string& text) {
  Hasher h(0x7072756e65ULL);  // "prune"
  h.AddString(text);
  return h.Finish();
}

// A side of a rule by name (its variables as they are named), as the union-find keys it.
Hash128 SideKey(const Graph& g, const std::vector<TensorRef>& roots, const Substitution& subst) {
  return TextKey(SideText(g, roots, subst, Renaming{}));
}

// What is known equal so far: proved rules' sides, by name, joined in a
// union-find (so equalities compose through shared sides), and proved rules'
// skeletons (so a rule whose variables merge a general one's is found).
// Sides and skeletons are kept as 128-bit hashes and rules as ordinals, so a
// rule costs about a hundred bytes here, whatever its size.
class Knowledge {
 public:
  void SetUniverse(std::map<std::string, std::vector<std::string>> universe) { universe_ = std::move(universe); }

  // A proved rule: its sides' keys (SideKey) and its form.
  void AddRule(const Hash128& a_side, const Hash128& b_side, const Form& form, const std::string& id) {
    const int32_t rule = RuleOrdinal(id);
    const int a = Node(a_side, rule);
    const int b = Node(b_side, rule);
    parent_[Find(a)] = Find(b);
    by_skeleton_[TextKey(form.skeleton)].push_back(SkeletonEntry{PackPattern(form.pattern), rule});
  }

  // A reason the two sides of `p` are already known equal, if one is.
  std::optional<std::string> Implied(const PairView& p) { return Implied(p, MakeForm(p)); }
  // The same, given `p`'s form.
  std::optional<std::string> Implied(const PairView& p, const Form& forward) {
    if (auto g = FromSkeleton(forward)) return g;
    if (auto g = FromSkeleton(MakeForm(p.Reversed()))) return g;
    for (const Renaming& r : Renamings(forward)) {
      auto a = ids_.find(TextKey(SideText(*p.a, p.ra, p.sa, r)));
      if (a == ids_.end()) continue;
      auto b = ids_.find(TextKey(SideText(*p.b, p.rb, p.sb, r)));
      if (b == ids_.end()) continue;
      if (Find(a->second) == Find(b->second)) {
        const std::string x = RuleId(introduced_by_[a->second]);
        const std::string y = RuleId(introduced_by_[b->second]);
        return x == y ? x : absl::StrCat(x, " and ", y, " (with the proved rules joining them)");
      }
    }
    return std::nullopt;
  }

  int64_t ApproxBytes() const {
    // Hash tables at their capacity, with a vector and a short pattern per skeleton entry.
    const int64_t nodes = static_cast<int64_t>(ids_.capacity()) * (sizeof(Hash128) + sizeof(int32_t) + 1);
    const int64_t skeletons = static_cast<int64_t>(by_skeleton_.capacity()) *
                              (sizeof(Hash128) + sizeof(std::vector<SkeletonEntry>) + 1);
    const int64_t entries = static_cast<int64_t>(rule_offsets_.size()) * (sizeof(SkeletonEntry) + 16);
    const int64_t arrays = static_cast<int64_t>(parent_.capacity() + introduced_by_.capacity() +
                                                rule_offsets_.capacity()) * sizeof(int32_t) +
                           static_cast<int64_t>(rule_ids_.capacity());
    return nodes + skeletons + entries + arrays;
  }

 private:
  struct SkeletonEntry {
    std::string pattern;  // PackPattern
    int32_t rule;
  };

  std::optional<std::string> FromSkeleton(const Form& form) const {
    auto it = by_skeleton_.find(TextKey(form.skeleton));
    if (it == by_skeleton_.end()) return std::nullopt;
    const std::string specific = PackPattern(form.pattern);
    for (const SkeletonEntry& entry : it->second) {
      if (PatternIsInstanceOf(specific, entry.pattern)) return RuleId(entry.rule);
    }
    return std::nullopt;
  }

  // Injective maps of the pair's variables onto known variable names of the
  // same type, the identity among them when it is one.
  std::vector<Renaming> Renamings(const Form& form) const {
    std::map<std::string, std::vector<std::string>> by_group;  // group -> the pair's variables
    for (const auto& [name, group] : form.groups) by_group[group].push_back(name);
    std::vector<Renaming> out{Renaming{}};
    for (const auto& [group, names] : by_group) {
      auto u = universe_.find(group);
      if (u == universe_.end() || u->second.size() < names.size()) return {};
      std::vector<Renaming> next;
      std::vector<std::string> targets = u->second;
      std::sort(targets.begin(), targets.end());
      // Every ordered choice of names.size() distinct targets.
      std::function<void(size_t, std::vector<bool>&, Renaming&)> choose = [&](size_t k, std::vector<bool>& used,
                                                                              Renaming& partial) {
        if (next.size() >= kMaxRenamings) return;
        if (k == names.size()) {
          for (const Renaming& base : out) {
            Renaming r = base;
            r.insert(partial.begin(), partial.end());
            next.push_back(std::move(r));
            if (next.size() >= kMaxRenamings) return;
          }
          return;
        }
        for (size_t t = 0; t < targets.size(); ++t) {
          if (used[t]) continue;
          used[t] = true;
          partial[names[k]] = targets[t];
          choose(k + 1, used, partial);
          partial.erase(names[k]);
          used[t] = false;
        }
      };
      std::vector<bool> used(targets.size(), false);
      Renaming partial;
      choose(0, used, partial);
      out = std::move(next);
    }
    return out;
  }

  // Rule ids, packed into one string (most are 17 characters).
  int32_t RuleOrdinal(const std::string& id) {
    rule_offsets_.push_back(static_cast<int64_t>(rule_ids_.size()));
    rule_ids_ += id;
    return static_cast<int32_t>(rule_offsets_.size() - 1);
  }
  std::string RuleId(int32_t ordinal) const {
    const int64_t begin = rule_offsets_[ordinal];
    const int64_t end = ordinal + 1 < static_cast<int32_t>(rule_offsets_.size())
                            ? rule_offsets_[ordinal + 1]
                            : static_cast<int64_t>(rule_ids_.size());
    return rule_ids_.substr(begin, end - begin);
  }

  int Node(const Hash128& key, int32_t rule) {
    auto [it, inserted] = ids_.emplace(key, static_cast<int>(parent_.size()));
    if (inserted) {
      parent_.push_back(it->second);
      introduced_by_.push_back(rule);
    }
    return it->second;
  }
  int Find(int x) {
    while (parent_[x] != x) x = parent_[x] = parent_[parent_[x]];
    return x;
  }

  std::map<std::string, std::vector<std::string>> universe_;  // type group -> variable names
  absl::flat_hash_map<Hash128, int, Hash128Hasher> ids_;  // side -> union-find node
  std::vector<int> parent_;
  std::vector<int32_t> introduced_by_;  // per side: the rule that first named it
  absl::flat_hash_map<Hash128, std::vector<SkeletonEntry>, Hash128Hasher> by_skeleton_;
  std::string rule_ids_;
  std::vector<int64_t> rule_offsets_;
};

}  // namespace

std::string RuleRenamingKey(const rules::Rule& rule) {
  auto d = DecodeRule(rule);
  return d ? RenamingKey(d->View()) : "";
}

bool PrunedBefore(const PruneOrderKey& x, const PruneOrderKey& y) {
  // Smaller rules first; among equal sizes, more general (more distinct
  // variables) first, so an instance finds its general rule already known.
  if (x.size != y.size) return x.size < y.size;
  return x.distinct_variables > y.distinct_variables;
}

struct PruneEngine::State {
  std::map<std::string, std::set<std::string>> universe;  // type group -> variable names (Survey)
  Knowledge known;
};

PruneEngine::PruneEngine() : state_(std::make_unique<State>()) {}
PruneEngine::~PruneEngine() = default;

PruneOrderKey PruneEngine::Survey(const rules::Rule& rule) { return Survey(DecodeRule(rule)); }

PruneOrderKey PruneEngine::Survey(const std::optional<DecodedRule>& d) {
  if (!d) return PruneOrderKey{};
  const auto groups = VariableGroups(PairView{&d->source, d->source_roots, {}, &d->target, d->target_roots, {}});
  for (const auto& [name, group] : groups) state_->universe[group].insert(name);
  return PruneOrderKey{true, d->size, static_cast<int>(groups.size())};
}

void PruneEngine::Seal() {
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& [group, set] : state_->universe) names[group].assign(set.begin(), set.end());
  state_->universe.clear();
  state_->known.SetUniverse(std::move(names));
}

PreparedRule PrepareRule(const rules::Rule& rule) {
  PreparedRule out;
  out.decoded = DecodeRule(rule);
  if (!out.decoded) return out;
  const PairView whole = out.decoded->View();
  out.form = MakeForm(whole);
  out.source_side = SideKey(*whole.a, whole.ra, whole.sa);
  out.target_side = SideKey(*whole.b, whole.rb, whole.sb);
  return out;
}

std::optional<PruneVerdict> PruneEngine::Judge(const rules::Rule& rule) { return Judge(rule, PrepareRule(rule)); }

std::optional<PruneVerdict> PruneEngine::Judge(const rules::Rule& rule, const PreparedRule& prepared) {
  if (!prepared.decoded) return std::nullopt;
  const PairView whole = prepared.decoded->View();
  const Form& form = prepared.form;  // judged by, then learned by
  std::optional<PruneVerdict> verdict;
  if (auto by = state_->known.Implied(whole, form)) {
    verdict = PruneVerdict{PruneReason::kRenaming, absl::StrCat("renaming or instance of ", *by)};
  } else {
    for (const PairView& r : SmallerRuleReductions(whole)) {
      if (auto by = state_->known.Implied(r)) {
        verdict = PruneVerdict{PruneReason::kCommonSubgraph, absl::StrCat("common subgraph: follows from ", *by)};
        break;
      }
    }
    if (!verdict) {
      if (auto r = CommonSupergraphReduction(whole)) {
        if (auto by = state_->known.Implied(*r)) {
          verdict =
              PruneVerdict{PruneReason::kCommonSupergraph, absl::StrCat("common supergraph: follows from ", *by)};
        }
      }
    }
  }
  state_->known.AddRule(prepared.source_side, prepared.target_side, form, rule.id());
  return verdict;
}

void PruneEngine::Learn(const rules::Rule& rule) { Learn(rule, PrepareRule(rule)); }

void PruneEngine::Learn(const rules::Rule& rule, const PreparedRule& prepared) {
  if (!prepared.decoded) return;
  state_->known.AddRule(prepared.source_side, prepared.target_side, prepared.form, rule.id());
}

int64_t PruneEngine::ApproxBytes() const { return state_->known.ApproxBytes(); }

namespace {

// Calls visit(i, make(rules[indices[i]])) for every i in order, made a chunk
// at a time on every core (a chunk's results are all that is held at once).
template <typename Made, typename Make, typename Visit>
void ForEachMade(const std::vector<rules::Rule>& rules, const std::vector<size_t>& indices, Make make, Visit visit) {
  constexpr size_t kChunk = 2048;
  const int threads = HardwareThreads();
  std::vector<Made> made;
  for (size_t begin = 0; begin < indices.size(); begin += kChunk) {
    const size_t n = std::min(kChunk, indices.size() - begin);
    made.assign(n, Made{});
    ParallelFor(n, threads, [&](int, size_t j) { made[j] = make(rules[indices[begin + j]]); });
    for (size_t j = 0; j < n; ++j) visit(begin + j, made[j]);
  }
}

}  // namespace

ReductionTable PruneRules(std::vector<rules::Rule>& rules) {
  ReductionTable table;
  PruneEngine engine;
  std::vector<size_t> proved;
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rules[i].status() == rules::RULE_STATUS_PROVED) proved.push_back(i);
  }
  table.proved = static_cast<int64_t>(proved.size());
  std::vector<std::pair<size_t, PruneOrderKey>> order;
  using Decoded = std::optional<DecodedRule>;
  ForEachMade<Decoded>(rules, proved, DecodeRule, [&](size_t i, const Decoded& d) {
    const PruneOrderKey key = engine.Survey(d);
    if (key.decodes) order.emplace_back(proved[i], key);
  });
  engine.Seal();
  std::stable_sort(order.begin(), order.end(),
                   [](const auto& x, const auto& y) { return PrunedBefore(x.second, y.second); });
  table.after_renaming = table.after_common_subgraph = table.proved;
  std::vector<size_t> sorted;
  for (const auto& entry : order) sorted.push_back(entry.first);
  ForEachMade<PreparedRule>(rules, sorted, PrepareRule, [&](size_t i, const PreparedRule& prepared) {
    rules::Rule& rule = rules[sorted[i]];
    if (auto verdict = engine.Judge(rule, prepared)) {
      rule.set_status(rules::RULE_STATUS_PRUNED);
      rule.set_status_detail(verdict->detail);
      table.Count(verdict->reason);
    }
  });
  return table;
}

}  // namespace taso::verifier
