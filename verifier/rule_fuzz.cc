#include "verifier/rule_fuzz.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <thread>
#include <utility>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph.h"
#include "core/graph_proto.h"
#include "core/hash.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "core/side_conditions.h"

namespace taso::verifier {
namespace {

struct Variable {
  std::string name;
  TensorType type;
  // Row-major without split info: its dims may be resampled. Any other layout
  // is kept as it is (strides and split points would need resampling too).
  bool plain = true;
};

// A rule read once: its sides, what the proof assumed, and its variables.
struct Prepared {
  Graph source;
  Graph target;
  RuleConditions conditions;
  std::vector<std::pair<int, int>> outputs;
  std::vector<Variable> variables;  // by name
  std::set<int64_t> pinned;         // dimension values of variables that are not plain: never remapped
};

struct Instance {
  std::vector<VariableShape> shapes;
  Graph source;
  Graph target;
};

RuleFuzzResult NotFuzzed(const std::string& id, FuzzOutcome outcome, std::string reason) {
  RuleFuzzResult r;
  r.rule_id = id;
  r.outcome = outcome;
  r.reason = std::move(reason);
  return r;
}

// The prepared rule, or the result saying why it cannot be fuzzed.
std::variant<Prepared, RuleFuzzResult> Prepare(const rules::Rule& rule) {
  const std::string& id = rule.id();
  if (!rule.has_conditions()) {
    return NotFuzzed(id, FuzzOutcome::kNoConditions, "no side conditions recorded with the proof");
  }
  if (rule.conditions().vocabulary_version() != kProofSignatureVersion) {
    return NotFuzzed(id, FuzzOutcome::kOtherVocabulary,
                     absl::StrCat("conditions recorded under signature vocabulary ",
                                  rule.conditions().vocabulary_version(), ", this build speaks ",
                                  kProofSignatureVersion));
  }
  Prepared p;
  auto source = GraphFromProto(rule.source());
  if (!source.ok()) return NotFuzzed(id, FuzzOutcome::kMalformed, absl::StrCat("source: ", source.status().message()));
  auto target = GraphFromProto(rule.target());
  if (!target.ok()) return NotFuzzed(id, FuzzOutcome::kMalformed, absl::StrCat("target: ", target.status().message()));
  p.source = *std::move(source);
  p.target = *std::move(target);
  auto conditions = RecordedConditions(rule, p.source, p.target);
  if (!conditions.ok()) {
    return NotFuzzed(id, FuzzOutcome::kConditionsDisagree, std::string(conditions.status().message()));
  }
  p.conditions = *std::move(conditions);
  for (const auto& o : rule.outputs()) p.outputs.emplace_back(o.source_output(), o.target_output());
  for (const auto& [s, t] : p.outputs) {
    if (s < 0 || s >= static_cast<int>(p.source.outputs().size()) || t < 0 ||
        t >= static_cast<int>(p.target.outputs().size())) {
      return NotFuzzed(id, FuzzOutcome::kMalformed, "an output pair is out of range");
    }
  }
  if (p.outputs.empty()) return NotFuzzed(id, FuzzOutcome::kMalformed, "no output pairs");
  std::map<std::string, TensorType> types;
  for (const Graph* g : {&p.source, &p.target}) {
    for (const Node& n : g->nodes()) {
      if (!IsInputOrWeight(n.kind)) continue;
      auto [it, inserted] = types.emplace(n.name, n.output_types[0]);
      if (!inserted && it->second != n.output_types[0]) {
        return NotFuzzed(id, FuzzOutcome::kMalformed, absl::StrCat("variable ", n.name, " has two types"));
      }
    }
  }
  for (const auto& [name, type] : types) {
    Variable v{name, type, type.is_row_major() && !type.has_split_info()};
    if (!v.plain) p.pinned.insert(type.dims.begin(), type.dims.end());
    p.variables.push_back(std::move(v));
  }
  return p;
}

// Random shapes for a rule's variables. The dimensions of plain variables are
// positions grouped into classes that take one value each. Classes start as
// "equal in the rule" (the consistent mapping); samples may split a class in
// two, and a split that gives an acceptable instance is kept, so the classes
// converge on the equalities typing really needs and later samples vary the
// rest. Keeping the coarse classes for some samples guards against a split
// that was acceptable only for the values it was found with.
class ShapeSampler {
 public:
  ShapeSampler(const Prepared& p, const FuzzOptions& options, RandomStream& rng)
      : p_(p), range_(static_cast<uint64_t>(std::max<int64_t>(options.max_dim, 1))), rng_(rng) {
    std::map<int64_t, int> by_value;
    for (size_t v = 0; v < p.variables.size(); ++v) {
      if (!p.variables[v].plain) continue;
      for (size_t axis = 0; axis < p.variables[v].type.dims.size(); ++axis) {
        const int64_t value = p.variables[v].type.dims[axis];
        auto [it, added] = by_value.emplace(value, static_cast<int>(by_value.size()));
        if (added) origin_.push_back(value);
        positions_.push_back({static_cast<int>(v), static_cast<int>(axis)});
        coarse_.push_back(it->second);
      }
    }
    learned_ = coarse_;
    learned_origin_ = origin_;
  }

  std::vector<VariableShape> Sample() {
    from_learned_ = rng_.Below(4) != 0;
    classes_ = from_learned_ ? learned_ : coarse_;
    class_origin_ = from_learned_ ? learned_origin_ : origin_;
    const int split_from = rng_.Below(2) == 0 ? Split() : -1;
    std::vector<int64_t> value(class_origin_.size());
    for (size_t c = 0; c < class_origin_.size(); ++c) {
      const int64_t o = class_origin_[c];
      value[c] = p_.pinned.count(o) > 0 || rng_.Below(4) == 0 ? o : 1 + static_cast<int64_t>(rng_.Below(range_));
    }
    // A split whose halves drew the same value proves nothing about it.
    split_ = split_from >= 0 && value[split_from] != value.back();
    std::vector<VariableShape> shapes;
    for (const Variable& v : p_.variables) shapes.push_back({v.name, v.type.dims});
    for (size_t i = 0; i < positions_.size(); ++i) {
      shapes[positions_[i].first].dims[positions_[i].second] = value[classes_[i]];
    }
    return shapes;
  }

  // The last sample gave an acceptable instance.
  void Accepted() {
    if (!from_learned_ || !split_) return;
    learned_ = classes_;
    learned_origin_ = class_origin_;
  }

 private:
  // Moves a random part of a random class of two or more positions to a new
  // class (the last); returns the class split, or -1 if none can be.
  int Split() {
    const int fresh = static_cast<int>(class_origin_.size());
    std::vector<int> size(fresh, 0);
    for (int c : classes_) ++size[c];
    std::vector<int> splittable;
    for (int c = 0; c < fresh; ++c) {
      if (size[c] >= 2) splittable.push_back(c);
    }
    if (splittable.empty()) return -1;
    const int c = splittable[rng_.Below(splittable.size())];
    std::vector<size_t> members;
    for (size_t i = 0; i < classes_.size(); ++i) {
      if (classes_[i] == c) members.push_back(i);
    }
    std::vector<bool> moved(members.size());
    size_t count = 0;
    for (size_t m = 0; m < members.size(); ++m) count += moved[m] = rng_.Below(2) == 0;
    if (count == 0 || count == members.size()) moved[rng_.Below(members.size())] = count == 0;
    for (size_t m = 0; m < members.size(); ++m) {
      if (moved[m]) classes_[members[m]] = fresh;
    }
    class_origin_.push_back(class_origin_[c]);
    return c;
  }

  const Prepared& p_;
  const uint64_t range_;
  RandomStream& rng_;
  std::vector<std::pair<int, int>> positions_;  // (variable, axis) of every plain dimension
  std::vector<int64_t> origin_;                 // the rule's value of each coarse class
  std::vector<int> coarse_;                     // class of each position: equal in the rule
  std::vector<int> learned_;                    // the finest classes that gave an instance
  std::vector<int64_t> learned_origin_;
  // The last sample's classes and their values in the rule.
  std::vector<int> classes_;
  std::vector<int64_t> class_origin_;
  bool from_learned_ = false;
  bool split_ = false;  // split into halves of different values
};

// The rule's sides at `shapes`, if shape inference accepts them, every tensor
// is within the element bound, and every operator keeps its recorded
// signatures.
std::optional<Instance> Instantiate(const Prepared& p, std::vector<VariableShape> shapes, const FuzzOptions& options) {
  std::map<std::string, TensorType> types;
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Variable& v = p.variables[i];
    types[v.name] = v.plain ? TensorType::RowMajor(v.type.dtype, shapes[i].dims) : v.type;
  }
  FactBinding facts;  // both sides: facts the proof kept equal stay equal
  auto side = [&](const Graph& g, const GraphConditions& recorded) -> std::optional<Graph> {
    std::vector<Node> nodes = g.nodes();
    for (Node& n : nodes) {
      if (IsInputOrWeight(n.kind)) n.output_types = {types[n.name]};
    }
    auto built = Graph::Create(std::move(nodes), g.outputs());
    if (!built.ok()) return std::nullopt;
    for (const Node& n : built->nodes()) {
      for (const TensorType& t : n.output_types) {
        if (t.num_elements() > options.max_elements) return std::nullopt;
      }
    }
    auto conditions = ConditionsOf(*built);
    if (!conditions.ok() || !ConditionsAdmit(recorded, *conditions, facts)) return std::nullopt;
    return *std::move(built);
  };
  auto source = side(p.source, p.conditions.source);
  if (!source) return std::nullopt;
  auto target = side(p.target, p.conditions.target);
  if (!target) return std::nullopt;
  return Instance{std::move(shapes), *std::move(source), *std::move(target)};
}

// Feeds for every variable, a name getting the same values on both sides.
template <typename T, typename Make>
std::map<std::string, Tensor<T>> Feeds(const Instance& instance, uint64_t seed, Make make) {
  std::map<std::string, Tensor<T>> feeds;
  for (const Graph* g : {&instance.source, &instance.target}) {
    for (const Node& n : g->nodes()) {
      if (IsInputOrWeight(n.kind) && !feeds.count(n.name)) feeds[n.name] = make(n.output_types[0], n.name, seed);
    }
  }
  return feeds;
}

class InstanceChecker {
 public:
  InstanceChecker(const Prepared& p, const Instance& instance, int index, uint64_t seed, const FuzzOptions& options)
      : p_(p), instance_(instance), index_(index), seed_(seed), options_(options) {}

  // The first difference of this instance, float before int32.
  std::optional<FuzzMismatch> Check(RuleFuzzResult& result) {
    auto fs = EvaluateFloat(instance_.source, Feeds<float>(instance_, seed_, DeterministicFloatTensor));
    auto ft = EvaluateFloat(instance_.target, Feeds<float>(instance_, seed_, DeterministicFloatTensor));
    if (!fs.ok() || !ft.ok()) {
      const absl::Status& error = !fs.ok() ? fs.status() : ft.status();
      return Failure(FuzzDomain::kFloat32, absl::StrCat("does not evaluate: ", error.message()));
    }
    std::optional<std::vector<FloatTensor>> abs_source, abs_target;
    auto float_agree = [&](int s, int t, int64_t e, double a, double b) {
      if (FloatsAgree(a, b, options_.tolerance)) return true;
      if (!abs_source) {
        // Each side on |inputs|: a bound on every partial sum it rounded.
        const auto feeds = AbsoluteFeeds(Feeds<float>(instance_, seed_, DeterministicFloatTensor));
        auto as = EvaluateFloat(instance_.source, feeds);
        auto at = EvaluateFloat(instance_.target, feeds);
        abs_source = as.ok() ? *std::move(as) : std::vector<FloatTensor>{};
        abs_target = at.ok() ? *std::move(at) : std::vector<FloatTensor>{};
      }
      if (abs_source->empty() || abs_target->empty()) return false;
      const double scale = std::max(std::fabs((*abs_source)[s].data[e]), std::fabs((*abs_target)[t].data[e]));
      if (!FloatsAgree(a, b, options_.tolerance, scale)) return false;
      ++result.elements_loosened;
      return true;
    };
    if (auto m = FirstDifference(FuzzDomain::kFloat32, *fs, *ft, float_agree)) return m;

    auto is = EvaluateInt(instance_.source, Feeds<int32_t>(instance_, seed_, DeterministicIntTensor));
    auto it = EvaluateInt(instance_.target, Feeds<int32_t>(instance_, seed_, DeterministicIntTensor));
    const auto unimplemented = [](const absl::Status& s) { return s.code() == absl::StatusCode::kUnimplemented; };
    if (unimplemented(is.status()) || unimplemented(it.status())) return std::nullopt;
    ++result.instances_int32;
    if (!is.ok() || !it.ok()) {
      const absl::Status& error = !is.ok() ? is.status() : it.status();
      return Failure(FuzzDomain::kInt32, absl::StrCat("does not evaluate: ", error.message()));
    }
    auto exact = [](int, int, int64_t, int32_t a, int32_t b) { return a == b; };
    return FirstDifference(FuzzDomain::kInt32, *is, *it, exact);
  }

 private:
  FuzzMismatch Base(FuzzDomain domain) const {
    FuzzMismatch m;
    m.instance = index_;
    m.input_seed = seed_;
    m.shapes = instance_.shapes;
    m.domain = domain;
    return m;
  }
  FuzzMismatch Failure(FuzzDomain domain, std::string detail) const {
    FuzzMismatch m = Base(domain);
    m.detail = std::move(detail);
    return m;
  }

  template <typename T, typename Agree>
  std::optional<FuzzMismatch> FirstDifference(FuzzDomain domain, const std::vector<Tensor<T>>& source,
                                              const std::vector<Tensor<T>>& target, Agree agree) const {
    for (const auto& [s, t] : p_.outputs) {
      const Tensor<T>& a = source[s];
      const Tensor<T>& b = target[t];
      if (a.type.dims != b.type.dims) {
        FuzzMismatch m = Base(domain);
        m.source_output = s;
        m.target_output = t;
        m.output_dims = a.type.dims;
        m.detail = absl::StrCat("output ", s, " has shape ", DimsToString(a.type.dims), " on the source and ",
                                DimsToString(b.type.dims), " on the target");
        return m;
      }
      for (size_t e = 0; e < a.data.size(); ++e) {
        if (agree(s, t, static_cast<int64_t>(e), a.data[e], b.data[e])) continue;
        FuzzMismatch m = Base(domain);
        m.source_output = s;
        m.target_output = t;
        m.output_dims = a.type.dims;
        m.element = static_cast<int64_t>(e);
        m.source_value = a.data[e];
        m.target_value = b.data[e];
        m.detail = absl::StrCat("output ", s, " ", DimsToString(a.type.dims), " element ", e, " differs in ",
                                FuzzDomainName(domain), ": ", a.data[e], " vs ", b.data[e]);
        return m;
      }
    }
    return std::nullopt;
  }

  const Prepared& p_;
  const Instance& instance_;
  const int index_;
  const uint64_t seed_;
  const FuzzOptions& options_;
};

void Add(const RuleFuzzResult& r, FuzzTotals& t) {
  ++t.rules;
  if (r.outcome != FuzzOutcome::kFuzzed) {
    ++t.rules_not_fuzzed;
    return;
  }
  ++t.rules_fuzzed;
  t.rules_without_instances += r.instances_run == 0;
  t.rules_only_own_shapes += r.instances_run > 0 && r.instances_at_other_shapes == 0;
  t.rules_with_mismatches += r.mismatches > 0;
  t.instances_run += r.instances_run;
  t.instances_not_found += r.instances_not_found;
  t.instances_at_other_shapes += r.instances_at_other_shapes;
  t.instances_int32 += r.instances_int32;
  t.elements_loosened += r.elements_loosened;
  t.mismatches += r.mismatches;
}

}  // namespace

const char* FuzzDomainName(FuzzDomain domain) { return domain == FuzzDomain::kInt32 ? "int32" : "float32"; }

const char* FuzzOutcomeName(FuzzOutcome outcome) {
  switch (outcome) {
    case FuzzOutcome::kFuzzed: return "fuzzed";
    case FuzzOutcome::kNoConditions: return "no_conditions";
    case FuzzOutcome::kOtherVocabulary: return "other_vocabulary";
    case FuzzOutcome::kConditionsDisagree: return "conditions_disagree";
    case FuzzOutcome::kMalformed: return "malformed";
  }
  return "unknown";
}

std::string DescribeShapes(const std::vector<VariableShape>& shapes) {
  std::vector<std::string> parts;
  for (const VariableShape& s : shapes) parts.push_back(absl::StrCat(s.name, "=", DimsToString(s.dims)));
  return absl::StrJoin(parts, " ");
}

RuleFuzzResult FuzzRule(const rules::Rule& rule, const FuzzOptions& options) {
  auto prepared = Prepare(rule);
  if (auto* done = std::get_if<RuleFuzzResult>(&prepared)) return std::move(*done);
  const Prepared& p = std::get<Prepared>(prepared);
  RuleFuzzResult result;
  result.rule_id = rule.id();
  // Keyed by the rule, not its position, so a rule gets the same instances
  // whatever else is fuzzed beside it and on whichever thread.
  RandomStream rng(absl::StrCat("rule_fuzz:", rule.id()), options.seed);
  ShapeSampler sampler(p, options, rng);
  for (int i = 0; i < options.instances; ++i) {
    std::optional<Instance> instance;
    for (int a = 0; a < options.attempts && !instance; ++a) {
      instance = Instantiate(p, sampler.Sample(), options);
      if (instance) sampler.Accepted();
    }
    if (!instance) {
      ++result.instances_not_found;
      continue;
    }
    ++result.instances_run;
    bool own = true;
    for (size_t v = 0; v < p.variables.size(); ++v) own &= instance->shapes[v].dims == p.variables[v].type.dims;
    result.instances_at_other_shapes += !own;
    Hasher h(options.seed);
    h.AddString(rule.id());
    h.Add(static_cast<uint64_t>(i));
    InstanceChecker checker(p, *instance, i, h.Finish().lo, options);
    if (auto m = checker.Check(result)) {
      ++result.mismatches;
      if (static_cast<int>(result.examples.size()) < options.max_examples) result.examples.push_back(*std::move(m));
    }
  }
  return result;
}

FuzzReport FuzzRules(const std::vector<rules::Rule>& rules, const FuzzOptions& options) {
  FuzzReport report;
  report.rules.resize(rules.size());
  const int wanted = options.threads > 0 ? options.threads : static_cast<int>(std::thread::hardware_concurrency());
  const int threads = std::max(1, std::min<int>(wanted, static_cast<int>(rules.size())));
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < rules.size(); i = next++) report.rules[i] = FuzzRule(rules[i], options);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (const RuleFuzzResult& r : report.rules) Add(r, report.totals);
  return report;
}

}  // namespace taso::verifier
