#include "generator/recheck.h"

#include <algorithm>
#include <map>
#include <set>

#include "generator/enumerator.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "proto/generator.pb.h"
#include "records/encoding.h"
#include "records/rule_id.h"
#include "records/spec.h"

namespace taso::generator {
namespace {

using ::testing::HasSubstr;

int TemplateIndex(const records::Spec& spec, const std::string& label) {
  for (size_t t = 0; t < spec.templates.size(); ++t) {
    if (spec.templates[t].label == label) return static_cast<int>(t);
  }
  ADD_FAILURE() << "no template " << label;
  return 0;
}

int VariableIndex(const records::Spec& spec, const std::string& name) {
  for (size_t v = 0; v < spec.variables.size(); ++v) {
    if (spec.variables[v].name == name) return static_cast<int>(v);
  }
  ADD_FAILURE() << "no variable " << name;
  return 0;
}

// Builds an encoding from (template label, operand) steps; operands are
// variable names or "%k" for the k-th operator's (first) output.
std::string Encode(const records::Spec& spec,
                   const std::vector<std::pair<std::string, std::vector<std::string>>>& ops) {
  std::string encoding;
  std::vector<int> op_pool;
  int pool = static_cast<int>(spec.variables.size());
  for (const auto& [label, operands] : ops) {
    std::vector<int> inputs;
    for (const std::string& o : operands) {
      inputs.push_back(o[0] == '%' ? op_pool[std::stoi(o.substr(1))] : VariableIndex(spec, o));
    }
    const int t = TemplateIndex(spec, label);
    records::AppendEncodedOp(t, inputs.data(), static_cast<int>(inputs.size()), encoding);
    op_pool.push_back(pool);
    pool += spec.templates[t].kind == OpKind::kSplit ? 2 : 1;
  }
  return encoding;
}

class ClassSink : public GraphSink {
 public:
  std::map<Fingerprint, std::vector<std::string>> classes;
  void OnGraph(const Fingerprint& fp, std::string_view encoding, int) override {
    classes[fp].emplace_back(encoding);
  }
  bool OnCheckpoint(int64_t, double) override { return true; }
};

// Tensat's concat of two convolutions (its line 27): concat(conv(i, k1),
// conv(i, k2)) on channels is conv(i, concat(k1, k2)) on output channels.
// Both concats are enumerated in one order; over the default spec, an order
// that followed pool positions left every class holding both sides without
// a canonical member, so the rule never became a pair (the enumerator's
// OneOrderConcatStillEnumeratesEveryRenaming checks the cause). Here, from
// enumeration to pairs, the rule is paired.
TEST(Recheck, AConcatOfConvolutionsIsPairedWithTheConvolutionOfAConcat) {
  auto spec = records::ParseSpecText(R"pb(
    seed: 1
    inputs { name: "i1" dims: [1, 2, 3, 3] }
    inputs { name: "i2" dims: [1, 2, 3, 3] }
    inputs { name: "i3" dims: [1, 2, 3, 3] }
    constants { name: "k1" dims: [2, 2, 3, 3] }
    constants { name: "k2" dims: [2, 2, 3, 3] }
    constants { name: "k3" dims: [2, 2, 3, 3] }
    operators { kind: OP_CONV2D params { conv2d { padding: PADDING_SAME } } }
    operators {
      kind: OP_CONCAT
      params { concat { axis: 0 } }
      params { concat { axis: 1 } }
      unordered_operands: true
    }
  )pb",
                                     "concat-conv.spec");
  ASSERT_TRUE(spec.ok()) << spec.status();
  ClassSink sink;
  EnumerationOptions options;
  options.max_ops = 3;
  ASSERT_TRUE(Enumerate(*spec, options, sink).ok());
  Rechecker rechecker(*spec);
  // The operator kinds and concat axes of a graph, in encoding order.
  auto shape = [&](const std::string& encoding) {
    std::string out;
    auto ops = records::ParseEncoding(encoding);
    EXPECT_TRUE(ops.ok()) << ops.status();
    if (!ops.ok()) return out;
    for (const records::EncodedOp& op : *ops) {
      const records::Template& t = spec->templates[op.template_index];
      out += t.kind == OpKind::kConv2D ? "conv " : t.params.axis == 0 ? "concat0 " : "concat1 ";
    }
    return out;
  };
  int found = 0;
  for (const auto& [fp, members] : sink.classes) {
    if (members.size() < 2) continue;
    const ClassCheck check = rechecker.Check(members);
    for (const PairCheck& pair : check.pairs) {
      if (pair.rejected) continue;
      const std::string a = shape(members[pair.source]), b = shape(members[pair.target]);
      found += (a == "conv conv concat1 " && b == "concat0 conv ") ||
               (b == "conv conv concat1 " && a == "concat0 conv ");
    }
  }
  EXPECT_GE(found, 1);
}

// A class's pairs all start at its first canonical member, which is the
// only one marked (later members are not examined), and each surviving
// pair's id is the id of its decoded graphs (the source's text is written
// once per class).
TEST(Recheck, PairsLeaveTheFirstCanonicalMemberAndNameTheirRule) {
  const records::Spec spec = records::DefaultSpec();
  ClassSink sink;
  EnumerationOptions options;
  options.max_ops = 2;
  ASSERT_TRUE(Enumerate(spec, options, sink).ok());
  Rechecker rechecker(spec);
  int named = 0;
  for (const auto& [fp, members] : sink.classes) {
    if (members.size() < 2) continue;
    const ClassCheck check = rechecker.Check(members);
    ASSERT_EQ(check.canonical.size(), members.size());
    if (check.pairs.empty()) continue;
    const int source = check.pairs.front().source;
    for (int m = 0; m < static_cast<int>(members.size()); ++m) {
      EXPECT_EQ(check.canonical[m], m == source);
      if (m < source) {
        EXPECT_FALSE(rechecker.IsCanonicalOrder(members[m]));
      }
    }
    EXPECT_TRUE(rechecker.IsCanonicalOrder(members[source]));
    for (const PairCheck& pair : check.pairs) {
      EXPECT_EQ(pair.source, source);
      if (pair.rejected || pair.rule_id.empty()) continue;
      auto a = records::DecodeGraph(spec, members[pair.source]);
      auto b = records::DecodeGraph(spec, members[pair.target]);
      ASSERT_TRUE(a.ok() && b.ok());
      std::vector<std::pair<int, int>> outputs;
      for (size_t i = 0; i < pair.output_mapping.size(); ++i) outputs.emplace_back(i, pair.output_mapping[i]);
      auto id = records::RuleIdOf(*a, *b, outputs);
      ASSERT_TRUE(id.ok()) << id.status();
      EXPECT_EQ(pair.rule_id, *id);
      ++named;
    }
  }
  EXPECT_GT(named, 10);
}

// A pair that follows from a smaller one names that one's renaming key: the
// store then derives it from the smaller rule's proof instead of leasing it.
TEST(Recheck, PairsNameTheKeysOfTheSmallerPairsTheyFollowFrom) {
  // Sums, products and relu on three inputs, up to three operators: small
  // enough to enumerate here, with laws of two operators to follow from.
  generator::GenerationSpec proto;
  for (const char* name : {"x1", "x2", "x3"}) {
    auto* input = proto.add_inputs();
    input->set_name(name);
    input->add_dims(2);
    input->add_dims(4);
  }
  for (auto kind : {::taso::ir::OP_EW_ADD, ::taso::ir::OP_EW_MUL, ::taso::ir::OP_RELU}) {
    proto.add_operators()->set_kind(kind);
  }
  proto.set_max_ops(3);
  auto spec_or = records::SpecFromProto(proto);
  ASSERT_TRUE(spec_or.ok()) << spec_or.status();
  const records::Spec& spec = *spec_or;
  ClassSink sink;
  EnumerationOptions options;
  options.max_ops = 3;
  ASSERT_TRUE(Enumerate(spec, options, sink).ok());
  Rechecker rechecker(spec);
  std::set<std::string> smaller_keys;  // of pairs of at most two operators a side
  std::vector<std::pair<PairCheck, bool>> larger;  // with whether TASO's checks drop it
  for (const auto& [fp, members] : sink.classes) {
    if (members.size() < 2) continue;
    for (const PairCheck& pair : rechecker.Check(members).pairs) {
      if (pair.rejected || pair.renaming_key.empty()) continue;
      auto a = records::ParseEncoding(members[pair.source]);
      auto b = records::ParseEncoding(members[pair.target]);
      ASSERT_TRUE(a.ok() && b.ok());
      if (std::max(a->size(), b->size()) <= 2) {
        smaller_keys.insert(pair.renaming_key);
      } else {
        larger.emplace_back(pair, rechecker.TasoWouldDrop(members[pair.source], members[pair.target]));
      }
    }
  }
  int following = 0, alone = 0;
  for (const auto& [pair, taso_drops] : larger) {
    for (const std::string& key : pair.smaller_rule_keys) EXPECT_NE(key, pair.renaming_key);
    const bool follows = std::any_of(pair.smaller_rule_keys.begin(), pair.smaller_rule_keys.end(),
                                     [&](const std::string& key) { return smaller_keys.count(key) > 0; });
    following += follows;
    // What TASO's generator keeps shares no operator, so follows from nothing smaller.
    if (!taso_drops) {
      EXPECT_FALSE(follows);
      ++alone;
    }
  }
  EXPECT_GT(following, 10);
  EXPECT_GT(alone, 10);
}

TEST(Recheck, ExactlyOneRenamingIsCanonical) {
  const records::Spec spec = records::DefaultSpec();
  Rechecker rechecker(spec);
  // matmul(x_i, w_j) over the 3 x 3 renamings: one orbit, one canonical.
  int canonical = 0;
  for (const char* x : {"x1", "x2", "x3"}) {
    for (const char* w : {"w1", "w2", "w3"}) {
      canonical += rechecker.IsCanonicalOrder(Encode(spec, {{"matmul[act=none]", {x, w}}}));
    }
  }
  EXPECT_EQ(canonical, 1);
  // ewadd(x_i, x_j), i < j: three graphs, one orbit.
  canonical = 0;
  for (auto [a, b] : {std::pair{"x1", "x2"}, {"x1", "x3"}, {"x2", "x3"}}) {
    canonical += rechecker.IsCanonicalOrder(Encode(spec, {{"ewadd", {a, b}}}));
  }
  EXPECT_EQ(canonical, 1);
  // s0 and w13 have no twin: always canonical.
  EXPECT_TRUE(rechecker.IsCanonicalOrder(Encode(spec, {{"relu", {"s0"}}})));
}

TEST(Recheck, TrueEquivalenceIsAcceptedWithItsOutputMapping) {
  const records::Spec spec = records::DefaultSpec();
  Rechecker rechecker(spec);
  // (x1 + x2) + x3 == x1 + (x2 + x3)
  std::vector<std::string> members = {
      Encode(spec, {{"ewadd", {"x1", "x2"}}, {"ewadd", {"%0", "x3"}}}),
      Encode(spec, {{"ewadd", {"x2", "x3"}}, {"ewadd", {"x1", "%0"}}}),
  };
  ClassCheck check = rechecker.Check(members);
  ASSERT_EQ(check.pairs.size(), 1u);
  EXPECT_FALSE(check.pairs[0].rejected) << check.pairs[0].reason;
  EXPECT_EQ(check.pairs[0].output_mapping, std::vector<int>({0}));
}

TEST(Recheck, NonEquivalentPairsAreRejectedWithAReason) {
  const records::Spec spec = records::DefaultSpec();
  Rechecker rechecker(spec);
  // In int32, avg pooling is a window sum, so on the one-hot C_iconv it equals
  // max pooling; in float it is a mean and differs. The float check catches it.
  ClassCheck pool = rechecker.Check({
      Encode(spec, {{"const_iconv[shape=4,4,3,3]", {}}, {"poolavg[kernel=3x3,stride=1x1,pad=same,count_pad=1]", {"%0"}}}),
      Encode(spec, {{"const_iconv[shape=4,4,3,3]", {}}, {"poolmax[kernel=3x3,stride=1x1,pad=same]", {"%0"}}}),
  });
  ASSERT_EQ(pool.pairs.size(), 1u);
  EXPECT_TRUE(pool.pairs[0].rejected);
  EXPECT_THAT(pool.pairs[0].reason, HasSubstr("float output 0"));

  // Plainly different graphs (as after a fingerprint collision): the second
  // int32 input set already tells them apart.
  ClassCheck different = rechecker.Check({
      Encode(spec, {{"ewadd", {"x1", "x2"}}}),
      Encode(spec, {{"ewmul", {"x1", "x2"}}}),
  });
  ASSERT_EQ(different.pairs.size(), 1u);
  EXPECT_TRUE(different.pairs[0].rejected);
  EXPECT_THAT(different.pairs[0].reason, HasSubstr("second int32 input set"));
}

TEST(Recheck, TasosPairChecksAreReported) {
  const records::Spec spec = records::DefaultSpec();
  Rechecker rechecker(spec);
  const std::string left = Encode(spec, {{"ewadd", {"x1", "x2"}}, {"ewadd", {"%0", "x3"}}});
  const std::string right = Encode(spec, {{"ewadd", {"x2", "x3"}}, {"ewadd", {"x1", "%0"}}});
  EXPECT_FALSE(rechecker.TasoWouldDrop(left, right));  // associativity is a rule of its own
  // The same pair under a relu follows from it (common supergraph) ...
  EXPECT_TRUE(rechecker.TasoWouldDrop(
      Encode(spec, {{"ewadd", {"x1", "x2"}}, {"ewadd", {"%0", "x3"}}, {"relu", {"%1"}}}),
      Encode(spec, {{"ewadd", {"x2", "x3"}}, {"ewadd", {"x1", "%0"}}, {"relu", {"%1"}}})));
  // ... and so does one beside an unrelated operator both sides share.
  EXPECT_TRUE(rechecker.TasoWouldDrop(
      Encode(spec, {{"relu", {"i1"}}, {"ewadd", {"x1", "x2"}}, {"ewadd", {"%1", "x3"}}}),
      Encode(spec, {{"relu", {"i1"}}, {"ewadd", {"x2", "x3"}}, {"ewadd", {"x1", "%1"}}})));
}

TEST(Recheck, ClassWithoutCanonicalMemberHasNoPairs) {
  const records::Spec spec = records::DefaultSpec();
  Rechecker rechecker(spec);
  std::vector<std::string> renamings;
  for (const char* x : {"x1", "x2", "x3"}) {
    std::string e = Encode(spec, {{"matmul[act=none]", {x, "w1"}}, {"relu", {"%0"}}});
    if (!rechecker.IsCanonicalOrder(e)) renamings.push_back(e);
  }
  ASSERT_EQ(renamings.size(), 2u);
  ClassCheck check = rechecker.Check(renamings);
  EXPECT_EQ(check.canonical, std::vector<bool>({false, false}));
  EXPECT_TRUE(check.pairs.empty());
}

}  // namespace
}  // namespace taso::generator
