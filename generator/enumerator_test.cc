#include "generator/enumerator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "core/canonical.h"
#include "core/fingerprint.h"
#include "core/interpreter.h"
#include "core/random_inputs.h"
#include "gtest/gtest.h"
#include "records/encoding.h"

namespace taso::generator {
namespace {

struct Record {
  Fingerprint fingerprint;
  std::string encoding;
  friend bool operator<(const Record& a, const Record& b) {
    return a.fingerprint != b.fingerprint ? a.fingerprint < b.fingerprint : a.encoding < b.encoding;
  }
  friend bool operator==(const Record& a, const Record& b) {
    return a.fingerprint == b.fingerprint && a.encoding == b.encoding;
  }
};

class CollectingSink : public GraphSink {
 public:
  std::vector<Record> records;
  std::vector<int64_t> cursors;
  int stop_after_checkpoints = -1;  // cancel at this checkpoint

  void OnGraph(const Fingerprint& fp, std::string_view encoding, int) override {
    records.push_back({fp, std::string(encoding)});
  }
  bool OnCheckpoint(int64_t next_cursor, double fraction) override {
    EXPECT_GE(fraction, 0.0);
    EXPECT_LE(fraction, 1.0);
    if (!cursors.empty()) {
      EXPECT_GE(next_cursor, cursors.back());
    }
    cursors.push_back(next_cursor);
    return stop_after_checkpoints < 0 || static_cast<int>(cursors.size()) < stop_after_checkpoints;
  }
};

// A spec small enough to enumerate exhaustively by brute force.
records::Spec SmallSpec() {
  auto spec = records::ParseSpecText(R"pb(
    seed: 7
    inputs { name: "x1" dims: [2, 4] }
    inputs { name: "x2" dims: [2, 4] }
    constants { name: "w1" dims: [4, 4] }
    inputs { name: "i1" dims: [1, 2, 3, 3] }
    constants { name: "k1" dims: [2, 2, 3, 3] }
    constants { name: "k2" dims: [2, 2, 1, 3] }
    operators { kind: OP_EW_ADD }
    operators { kind: OP_MATMUL }
    operators { kind: OP_RELU }
    operators { kind: OP_CONV2D params { conv2d { padding: PADDING_SAME } } }
    operators { kind: OP_ENLARGE params { enlarge { kernel_h: 3 kernel_w: 3 } } }
    operators { kind: OP_CONCAT params { concat { axis: 1 } } }
    operators { kind: OP_SPLIT params { split { axis: 1 } } }
    operators { kind: OP_TRANSPOSE params { transpose { perm: [1, 0] } } }
  )pb",
                            "small.spec");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

std::vector<Record> EnumerateAll(const records::Spec& spec, EnumerationOptions options,
                                 CollectingSink* sink_out = nullptr) {
  CollectingSink sink;
  auto stats = Enumerate(spec, options, sink);
  EXPECT_TRUE(stats.ok()) << stats.status();
  if (sink_out) *sink_out = sink;
  return sink.records;
}

// A graph's identity independent of operator order: the sorted structural
// hashes of its operator nodes (core/canonical, not the enumerator's keys),
// with ewadd's operands put in hash order, since ewadd is commutative and the
// enumerator tries one operand order only.
std::vector<Hash128> Identity(const records::Spec& spec, const std::string& encoding) {
  auto decoded = records::DecodeGraph(spec, encoding);
  EXPECT_TRUE(decoded.ok()) << decoded.status();
  Graph graph = *decoded;
  while (true) {
    auto hashes = NodeStructuralHashes(graph);
    EXPECT_TRUE(hashes.ok());
    std::vector<Node> nodes = graph.nodes();
    bool swapped = false;
    for (Node& n : nodes) {
      if (n.kind == OpKind::kEwAdd && (*hashes)[n.inputs[1].node] < (*hashes)[n.inputs[0].node]) {
        std::swap(n.inputs[0], n.inputs[1]);
        swapped = true;
        break;
      }
    }
    if (!swapped) {
      std::vector<Hash128> ops;
      for (int n = 0; n < graph.num_nodes(); ++n) {
        OpKind k = graph.node(n).kind;
        if (k != OpKind::kInput && k != OpKind::kWeight) ops.push_back((*hashes)[n]);
      }
      std::sort(ops.begin(), ops.end());
      return ops;
    }
    auto rebuilt = Graph::Create(nodes, graph.outputs());
    EXPECT_TRUE(rebuilt.ok()) << rebuilt.status();
    graph = *rebuilt;
  }
}

TEST(Enumerator, EachGraphOnceAndExactlyTheBruteForceSet) {
  const records::Spec spec = SmallSpec();
  EnumerationOptions options;
  options.max_ops = 3;
  const std::vector<Record> records = EnumerateAll(spec, options);
  ASSERT_GT(records.size(), 1000u);

  std::set<std::vector<Hash128>> enumerated;
  for (const Record& r : records) {
    EXPECT_TRUE(enumerated.insert(Identity(spec, r.encoding)).second)
        << "enumerated twice: " << records::DescribeEncoding(spec, r.encoding);
  }

  // Brute force: every operator sequence (all orders), decoded and evaluated
  // as a whole graph, kept when no two of its tensors are equal.
  const std::map<std::string, IntTensor> feeds = [&] {
    std::map<std::string, IntTensor> f;
    for (const records::Variable& v : spec.variables) f[v.name] = DeterministicIntTensor(v.type, v.name, spec.seed);
    return f;
  }();
  std::set<std::vector<Hash128>> brute;
  std::map<std::vector<Hash128>, std::string> brute_example;
  std::function<void(std::string, int)> extend = [&](std::string encoding, int ops) {
    if (ops == options.max_ops) return;
    auto parsed = records::ParseEncoding(encoding);
    int pool = static_cast<int>(spec.variables.size());
    for (const records::EncodedOp& op : *parsed) {
      pool += spec.templates[op.template_index].kind == OpKind::kSplit ? 2 : 1;
    }
    for (int t = 0; t < static_cast<int>(spec.templates.size()); ++t) {
      const OpKind kind = spec.templates[t].kind;
      const int arity = (kind == OpKind::kRelu || kind == OpKind::kEnlarge || kind == OpKind::kSplit ||
                         kind == OpKind::kTranspose)
                            ? 1
                            : 2;
      for (int a = 0; a < pool; ++a) {
        for (int b = 0; b < (arity == 2 ? pool : 1); ++b) {
          if (arity == 2 && a == b && kind != OpKind::kConv2D) continue;
          const bool a_is_weight = a < static_cast<int>(spec.variables.size()) && spec.variables[a].is_weight;
          if (kind == OpKind::kConv2D && a_is_weight) continue;
          if (kind == OpKind::kEnlarge && !a_is_weight) continue;
          int inputs[2] = {a, b};
          std::string next = encoding;
          records::AppendEncodedOp(t, inputs, arity, next);
          auto graph = records::DecodeGraph(spec, next);
          if (!graph.ok()) continue;  // shape inference rejects it
          const Node& last = graph->node(graph->num_nodes() - 1);
          if (kind == OpKind::kMatMul &&
              (graph->type(last.inputs[0]).rank() != 2 || graph->type(last.inputs[1]).rank() != 2)) {
            continue;
          }
          if (kind == OpKind::kEwAdd && graph->type(last.inputs[0]).dims != graph->type(last.inputs[1]).dims) {
            continue;  // the enumerator does not broadcast
          }
          // Every tensor of the graph, evaluated: all must differ.
          Graph all = *graph;
          int index = 0;
          for (int n = 0; n < all.num_nodes(); ++n) {
            for (int o = 0; o < static_cast<int>(all.node(n).output_types.size()); ++o) {
              all.AddOutput("t" + std::to_string(index++), TensorRef{n, o});
            }
          }
          auto values = EvaluateInt(all, feeds, IntOptions{.relu_as_polynomial = true});
          ASSERT_TRUE(values.ok()) << values.status();
          bool distinct = true;
          // Skip the decoded graph's own outputs, listed first.
          for (size_t i = graph->outputs().size(); i < values->size() && distinct; ++i) {
            for (size_t j = i + 1; j < values->size() && distinct; ++j) {
              distinct = !((*values)[i].type.dims == (*values)[j].type.dims &&
                           (*values)[i].data == (*values)[j].data &&
                           (*values)[i].type == (*values)[j].type);
            }
          }
          if (!distinct) continue;
          brute.insert(Identity(spec, next));
          brute_example.emplace(Identity(spec, next), next);
          extend(next, ops + 1);
        }
      }
    }
  };
  extend("", 0);
  int shown = 0;
  for (const auto& id : brute) {
    if (!enumerated.count(id) && shown++ < 10) {
      ADD_FAILURE() << "not enumerated: " << records::DescribeEncoding(spec, brute_example[id]);
    }
  }
  EXPECT_EQ(enumerated.size(), brute.size());
  EXPECT_TRUE(enumerated == brute);
}

TEST(Enumerator, FingerprintEqualsWholeGraphEvaluation) {
  const records::Spec spec = SmallSpec();
  EnumerationOptions options;
  options.max_ops = 3;
  const std::vector<Record> records = EnumerateAll(spec, options);
  std::map<std::string, IntTensor> feeds;
  for (const records::Variable& v : spec.variables) feeds[v.name] = DeterministicIntTensor(v.type, v.name, spec.seed);
  for (size_t i = 0; i < records.size(); i += 7) {
    auto graph = records::DecodeGraph(spec, records[i].encoding);
    ASSERT_TRUE(graph.ok());
    auto outputs = EvaluateInt(*graph, feeds, IntOptions{.relu_as_polynomial = true});
    ASSERT_TRUE(outputs.ok());
    EXPECT_EQ(GraphFingerprint(*outputs), records[i].fingerprint)
        << records::DescribeEncoding(spec, records[i].encoding);
  }
}

// An operator that does not read the newest one is applied again under each
// sibling of the newest; its value is evaluated once and reused (the
// fingerprints stay those of the whole graph, checked above).
TEST(Enumerator, OperatorsNotReadingTheNewestAreEvaluatedOncePerPrefix) {
  CollectingSink sink;
  EnumerationOptions options;
  options.max_ops = 3;
  auto stats = Enumerate(SmallSpec(), options, sink);
  ASSERT_TRUE(stats.ok()) << stats.status();
  // Every operator applied either made a graph or was pruned as a duplicate.
  EXPECT_EQ(stats->evaluations + stats->evaluations_reused, stats->graphs + stats->pruned_equal_tensor);
  // 2,699 of 6,049 here; 4.2M of 5.6M over the default spec at size 3.
  EXPECT_GT(stats->evaluations_reused, stats->evaluations / 2);
}

TEST(Enumerator, ShardsPartitionTheEnumeration) {
  const records::Spec spec = SmallSpec();
  EnumerationOptions options;
  options.max_ops = 3;
  std::vector<Record> single = EnumerateAll(spec, options);
  std::sort(single.begin(), single.end());
  for (int shards : {2, 3, 5}) {
    std::vector<Record> all;
    for (int s = 0; s < shards; ++s) {
      EnumerationOptions o = options;
      o.shard = s;
      o.num_shards = shards;
      std::vector<Record> part = EnumerateAll(spec, o);
      EXPECT_FALSE(part.empty()) << "shard " << s << " of " << shards << " got nothing";
      all.insert(all.end(), part.begin(), part.end());
    }
    std::sort(all.begin(), all.end());
    EXPECT_EQ(all.size(), single.size()) << shards << " shards overlap or miss graphs";
    EXPECT_TRUE(all == single) << shards << " shards";
  }
}

TEST(Enumerator, ResumesFromACheckpoint) {
  const records::Spec spec = SmallSpec();
  EnumerationOptions options;
  options.max_ops = 3;
  options.shard = 1;
  options.num_shards = 2;
  std::vector<Record> full = EnumerateAll(spec, options);
  std::sort(full.begin(), full.end());

  CollectingSink first;
  first.stop_after_checkpoints = 5;
  auto stats = Enumerate(spec, options, first);
  ASSERT_TRUE(stats.ok());
  EXPECT_TRUE(stats->cancelled);
  EnumerationOptions resumed = options;
  resumed.start_cursor = first.cursors.back();
  std::vector<Record> rest = EnumerateAll(spec, resumed);
  // Graphs before the cursor are not enumerated again.
  std::set<Record> seen(first.records.begin(), first.records.end());
  std::vector<Record> all(seen.begin(), seen.end());
  for (const Record& r : rest) {
    EXPECT_EQ(seen.count(r), 0u) << "re-emitted " << records::DescribeEncoding(spec, r.encoding);
    all.push_back(r);
  }
  std::sort(all.begin(), all.end());
  EXPECT_TRUE(all == full);
}

// SmallSpec with TASO's one-order concat and a second 3x3 kernel, so that
// both operands of a concat can come from interchangeable tensors.
records::Spec OneOrderConcatSpec(bool one_order) {
  auto spec = records::ParseSpecText(std::string(R"pb(
    seed: 7
    inputs { name: "x1" dims: [2, 4] }
    inputs { name: "x2" dims: [2, 4] }
    constants { name: "w1" dims: [4, 4] }
    inputs { name: "i1" dims: [1, 2, 3, 3] }
    constants { name: "k1" dims: [2, 2, 3, 3] }
    constants { name: "k3" dims: [2, 2, 3, 3] }
    operators { kind: OP_EW_ADD }
    operators { kind: OP_RELU }
    operators { kind: OP_CONV2D params { conv2d { padding: PADDING_SAME } } }
    operators { kind: OP_TRANSPOSE params { transpose { perm: [1, 0] } } }
    operators {
      kind: OP_CONCAT
      params { concat { axis: 0 } }
      params { concat { axis: 1 } })pb") +
                                         (one_order ? " unordered_operands: true" : "") + "}",
                                     "one-order.spec");
  EXPECT_TRUE(spec.ok()) << spec.status();
  return *spec;
}

// The re-check keeps one pair per renaming class (recheck.h), so a rule is
// lost unless every renaming of each of its sides is enumerated. Choosing a
// concat's one order by pool position broke that (concat(conv(i, k1),
// conv(i, k3)) against conv(i, concat(k3, k1))); the order by operand groups
// keeps it, with fewer graphs than both orders everywhere.
TEST(Enumerator, OneOrderConcatStillEnumeratesEveryRenaming) {
  const records::Spec spec = OneOrderConcatSpec(true);
  EnumerationOptions options;
  options.max_ops = 3;
  const std::vector<Record> records = EnumerateAll(spec, options);
  std::set<std::vector<Hash128>> enumerated;
  for (const Record& r : records) enumerated.insert(Identity(spec, r.encoding));
  const int n = static_cast<int>(spec.variables.size());
  // x1 <-> x2 and k1 <-> k3 (variables 0, 1 and 4, 5), each and both.
  std::vector<std::vector<int>> renamings;
  for (int swap_x = 0; swap_x < 2; ++swap_x) {
    for (int swap_k = 0; swap_k < 2; ++swap_k) {
      if (!swap_x && !swap_k) continue;
      std::vector<int> r = {swap_x ? 1 : 0, swap_x ? 0 : 1, 2, 3, swap_k ? 5 : 4, swap_k ? 4 : 5};
      renamings.push_back(r);
    }
  }
  int missing = 0;
  for (const Record& r : records) {
    auto ops = records::ParseEncoding(r.encoding);
    ASSERT_TRUE(ops.ok());
    for (const std::vector<int>& renaming : renamings) {
      std::string renamed;
      for (const records::EncodedOp& op : *ops) {
        std::vector<int> inputs = op.inputs;
        for (int& in : inputs) {
          if (in < n) in = renaming[in];
        }
        records::AppendEncodedOp(op.template_index, inputs.data(), static_cast<int>(inputs.size()), renamed);
      }
      if (!enumerated.count(Identity(spec, renamed)) && missing++ < 5) {
        ADD_FAILURE() << records::DescribeEncoding(spec, r.encoding) << " is enumerated but its renaming "
                      << records::DescribeEncoding(spec, renamed) << " is not";
      }
    }
  }
  EXPECT_EQ(missing, 0);
  // One order where the operands' groups differ: fewer graphs than both.
  const std::vector<Record> both = EnumerateAll(OneOrderConcatSpec(false), options);
  EXPECT_LT(records.size(), both.size());
  EXPECT_GT(records.size(), both.size() / 2);
}

TEST(Enumerator, DefaultSpecSizeOneIsTasosCount) {
  EnumerationOptions options;
  options.max_ops = 1;
  // TASO's generator enumerates 228 one-operator graphs over the same spec.
  // Ours adds the second order of each concat of two interchangeable tensors
  // (OneOrderConcatStillEnumeratesEveryRenaming): six groups of three
  // tensors give 3 pairs each, on 2 axes.
  EXPECT_EQ(EnumerateAll(records::DefaultSpec(), options).size(), 228u + 6 * 3 * 2);
}

// Three-operand templates (fused kernels): every ordered triple of distinct
// tensors whose shapes fit, once, fingerprinted as the whole graph evaluates.
TEST(Enumerator, FusedGemmTakesEveryTripleOfDistinctOperandsThatFits) {
  auto spec = records::ParseSpecText(R"pb(
    seed: 3
    inputs { name: "x1" dims: [2, 4] }
    inputs { name: "x2" dims: [2, 4] }
    constants { name: "w1" dims: [4, 4] }
    constants { name: "b1" dims: [2, 4] }
    operators { kind: OP_FUSED_GEMM params { matmul { activation: ACTIVATION_RELU } } }
  )pb", "fused spec");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EnumerationOptions options;
  options.max_ops = 1;
  const std::vector<Record> records = EnumerateAll(*spec, options);
  // a and c of shape [2, 4] (3 tensors), b of [4, 4] (w1 only): 3 x 2 ordered pairs.
  ASSERT_EQ(records.size(), 6u);
  std::map<std::string, IntTensor> feeds;
  for (const records::Variable& v : spec->variables) feeds[v.name] = DeterministicIntTensor(v.type, v.name, spec->seed);
  for (const Record& r : records) {
    auto ops = records::ParseEncoding(r.encoding);
    ASSERT_TRUE(ops.ok());
    ASSERT_EQ(ops->size(), 1u);
    ASSERT_EQ((*ops)[0].inputs.size(), 3u);
    EXPECT_EQ((*ops)[0].inputs[1], 2) << "b is w1";
    EXPECT_NE((*ops)[0].inputs[0], (*ops)[0].inputs[2]);
    auto graph = records::DecodeGraph(*spec, r.encoding);
    ASSERT_TRUE(graph.ok()) << graph.status();
    auto outputs = EvaluateInt(*graph, feeds, IntOptions{.relu_as_polynomial = true});
    ASSERT_TRUE(outputs.ok()) << outputs.status();
    EXPECT_EQ(GraphFingerprint(*outputs), r.fingerprint) << records::DescribeEncoding(*spec, r.encoding);
  }
}

// ewadd with `broadcast`: a bias [4] meets a [2, 4] tensor; without it,
// equal shapes only (TASO's enumeration, the default spec's).
TEST(Enumerator, BroadcastingAddsOnlyWhereTheTemplateAsks) {
  const std::string text = R"pb(
    seed: 3
    inputs { name: "x1" dims: [2, 4] }
    inputs { name: "x2" dims: [2, 4] }
    constants { name: "b1" dims: [4] }
    constants { name: "c1" dims: [3] }
    operators { kind: OP_EW_ADD BROADCAST }
  )pb";
  EnumerationOptions options;
  options.max_ops = 1;
  auto plain = records::ParseSpecText(absl::StrReplaceAll(text, {{"BROADCAST", ""}}), "plain");
  auto broadcast = records::ParseSpecText(absl::StrReplaceAll(text, {{"BROADCAST", "broadcast: true"}}), "bcast");
  ASSERT_TRUE(plain.ok() && broadcast.ok());
  EXPECT_EQ(EnumerateAll(*plain, options).size(), 1u);      // x1 + x2
  EXPECT_EQ(EnumerateAll(*broadcast, options).size(), 3u);  // and b1 to each x; never c1 [3]
  auto bad = records::ParseSpecText(absl::StrReplaceAll(text, {{"OP_EW_ADD", "OP_MATMUL"},
                                                               {"BROADCAST", "broadcast: true"}}), "bad");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("broadcast applies to ewadd and ewmul only"), std::string::npos)
      << bad.status();
}

TEST(Enumerator, TheFusedGemmSpecParses) {
  auto spec = records::LoadSpecFile("rules/specs/fused_gemm.textpb");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->max_ops, 3);
  EXPECT_TRUE(std::any_of(spec->templates.begin(), spec->templates.end(),
                          [](const records::Template& t) { return t.kind == OpKind::kFusedGemm; }));
}

TEST(Enumerator, RejectsBadOptions) {
  CollectingSink sink;
  EnumerationOptions options;
  options.max_ops = 0;
  EXPECT_EQ(Enumerate(SmallSpec(), options, sink).status().code(), absl::StatusCode::kInvalidArgument);
  options.max_ops = 2;
  options.shard = 3;
  options.num_shards = 3;
  EXPECT_EQ(Enumerate(SmallSpec(), options, sink).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace taso::generator
