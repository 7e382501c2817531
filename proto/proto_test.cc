// Round trips of the shared messages through the binary wire format and the
// text format, and a GenerationSpec written the way users write spec files.

#include <string>

#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "proto/generator.pb.h"
#include "proto/ir.pb.h"
#include "proto/rules.pb.h"

namespace {

using google::protobuf::TextFormat;
using google::protobuf::util::MessageDifferencer;

taso::ir::Node* AddInput(taso::ir::Graph* g, int id, const std::string& name) {
  taso::ir::Node* n = g->add_nodes();
  n->set_id(id);
  n->set_kind(taso::ir::OP_INPUT);
  n->set_name(name);
  n->mutable_type()->set_dtype(taso::ir::DTYPE_INT32);
  n->mutable_type()->add_dims(4);
  n->mutable_type()->add_dims(4);
  return n;
}

// x + y, as a graph with one output.
taso::ir::Graph AddGraph(const std::string& a, const std::string& b) {
  taso::ir::Graph g;
  AddInput(&g, 0, a);
  AddInput(&g, 1, b);
  taso::ir::Node* add = g.add_nodes();
  add->set_id(2);
  add->set_kind(taso::ir::OP_EW_ADD);
  for (int i : {0, 1}) {
    taso::ir::TensorRef* in = add->add_inputs();
    in->set_node(i);
    in->set_index(0);
  }
  taso::ir::GraphOutput* out = g.add_outputs();
  out->set_name("z");
  out->mutable_tensor()->set_node(2);
  return g;
}

// A commutativity rule: x + y => y + x.
taso::rules::Rule CommuteRule() {
  taso::rules::Rule r;
  r.set_id("ew_add_commute");
  for (const char* name : {"x", "y"}) {
    taso::rules::Variable* v = r.add_variables();
    v->set_name(name);
    v->set_kind(taso::ir::OP_INPUT);
    v->mutable_type()->set_dtype(taso::ir::DTYPE_INT32);
    v->mutable_type()->add_dims(4);
    v->mutable_type()->add_dims(4);
  }
  *r.mutable_source() = AddGraph("x", "y");
  *r.mutable_target() = AddGraph("y", "x");
  taso::rules::OutputPair* p = r.add_outputs();
  p->set_source_output(0);
  p->set_target_output(0);
  r.set_status(taso::rules::RULE_STATUS_PROVED);
  r.set_status_detail("unsat");
  r.set_direction(taso::rules::DIRECTION_HINT_NONE);
  r.set_revision(3);
  taso::rules::Provenance* prov = r.mutable_provenance();
  prov->set_job_id("job-1");
  prov->set_generator_max_ops(2);
  prov->set_fingerprint(std::string("\x00\xff\x10", 3));  // arbitrary bytes
  prov->mutable_discovered_at()->set_seconds(1700000000);
  taso::rules::ProofInfo* proof = r.mutable_proof();
  proof->add_axioms_used("ew_add_comm");
  proof->set_proof_time_ms(12);
  proof->set_solver("z3 4.8.12");
  return r;
}

template <typename M>
void ExpectWireRoundTrip(const M& original) {
  std::string wire;
  ASSERT_TRUE(original.SerializeToString(&wire));
  M parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed))
      << parsed.DebugString();
}

template <typename M>
void ExpectTextRoundTrip(const M& original) {
  std::string text;
  ASSERT_TRUE(TextFormat::PrintToString(original, &text));
  M parsed;
  ASSERT_TRUE(TextFormat::ParseFromString(text, &parsed)) << text;
  EXPECT_TRUE(MessageDifferencer::Equals(original, parsed)) << text;
}

TEST(ProtoTest, GraphRoundTrips) {
  taso::ir::Graph g = AddGraph("x", "y");
  // A oneof param and a split tree, so nested and oneof fields are covered.
  g.mutable_nodes(2)->mutable_params()->mutable_conv2d()->set_stride_h(2);
  taso::ir::SplitTree* split = g.mutable_nodes(0)->mutable_type()->add_split();
  split->set_left_size(2);
  split->mutable_left();
  split->mutable_right();
  ExpectWireRoundTrip(g);
  ExpectTextRoundTrip(g);
}

TEST(ProtoTest, RuleRoundTrips) {
  const taso::rules::Rule r = CommuteRule();
  ExpectWireRoundTrip(r);
  ExpectTextRoundTrip(r);

  std::string wire;
  ASSERT_TRUE(r.SerializeToString(&wire));
  taso::rules::Rule parsed;
  ASSERT_TRUE(parsed.ParseFromString(wire));
  EXPECT_EQ(parsed.provenance().fingerprint(), std::string("\x00\xff\x10", 3));
  EXPECT_EQ(parsed.source().nodes(0).name(), "x");
  EXPECT_EQ(parsed.target().nodes(0).name(), "y");
  ASSERT_EQ(parsed.proof().axioms_used_size(), 1);
  EXPECT_EQ(parsed.proof().axioms_used(0), "ew_add_comm");
}

TEST(ProtoTest, RuleCollectionRoundTrips) {
  taso::rules::RuleCollection c;
  c.set_format_version(1);
  *c.add_rules() = CommuteRule();
  taso::rules::Rule* refuted = c.add_rules();
  *refuted = CommuteRule();
  refuted->set_id("bogus");
  refuted->set_status(taso::rules::RULE_STATUS_REFUTED);
  refuted->mutable_proof()->clear_axioms_used();
  refuted->mutable_proof()->set_counterexample("x=1 y=2: 3 != 4");
  ExpectWireRoundTrip(c);
  ExpectTextRoundTrip(c);
}

TEST(ProtoTest, GenerationSpecTextParses) {
  // The example from generator.proto's header comment.
  const char* kSpec = R"pb(
    version: 1
    max_ops: 3
    seed: 42
    inputs { name: "x" dims: [ 4, 4 ] dtype: DTYPE_INT32 }
    constants { name: "w" dims: [ 4, 4 ] dtype: DTYPE_INT32 }
    operators { kind: OP_EW_ADD }
    operators { kind: OP_MATMUL }
    operators {
      kind: OP_CONV2D
      params { conv2d { padding: PADDING_SAME } }
      params { conv2d { padding: PADDING_VALID } }
    }
  )pb";
  taso::generator::GenerationSpec spec;
  ASSERT_TRUE(TextFormat::ParseFromString(kSpec, &spec));
  EXPECT_EQ(spec.version(), 1);
  EXPECT_EQ(spec.max_ops(), 3);
  EXPECT_EQ(spec.seed(), 42u);
  ASSERT_EQ(spec.inputs_size(), 1);
  EXPECT_EQ(spec.inputs(0).name(), "x");
  ASSERT_EQ(spec.inputs(0).dims_size(), 2);
  EXPECT_EQ(spec.inputs(0).dims(1), 4);
  ASSERT_EQ(spec.constants_size(), 1);
  ASSERT_EQ(spec.operators_size(), 3);
  EXPECT_EQ(spec.operators(1).kind(), taso::ir::OP_MATMUL);
  const taso::generator::OperatorTemplate& conv = spec.operators(2);
  EXPECT_EQ(conv.kind(), taso::ir::OP_CONV2D);
  ASSERT_EQ(conv.params_size(), 2);
  EXPECT_EQ(conv.params(1).conv2d().padding(), taso::ir::PADDING_VALID);
  ExpectTextRoundTrip(spec);
}

// Records parse errors instead of logging them.
class CountingErrors : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int, int, const std::string&) override { ++errors; }
  int errors = 0;
};

TEST(ProtoTest, GenerationSpecTextRejectsTypos) {
  // A misspelled field or enum value must be an error, not silently ignored.
  for (const char* bad : {"max_opz: 3", "operators { kind: OP_NOPE }"}) {
    CountingErrors errors;
    TextFormat::Parser parser;
    parser.RecordErrorsTo(&errors);
    taso::generator::GenerationSpec spec;
    EXPECT_FALSE(parser.ParseFromString(bad, &spec)) << bad;
    EXPECT_GT(errors.errors, 0) << bad;
  }
}

}  // namespace
