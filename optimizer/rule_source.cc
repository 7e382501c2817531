#include "optimizer/rule_source.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "google/protobuf/wire_format_lite.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/grpc_status.h"
#include "net/digest.h"
#include "proto/rules_db.grpc.pb.h"
#include "records/axiom_versions.h"
#include "records/rule_id.h"
#include "rules/builtin_rules.h"

namespace taso::optimizer {

bool ParseRuleCollection(google::protobuf::io::ZeroCopyInputStream* in, rules::RuleCollection* out,
                         int64_t chunk_bytes) {
  using google::protobuf::internal::WireFormatLite;
  out->Clear();
  while (true) {
    // A fresh stream for each chunk: its byte count, which protobuf caps, starts again.
    google::protobuf::io::CodedInputStream coded(in);
    while (coded.CurrentPosition() < chunk_bytes) {
      const uint32_t tag = coded.ReadTag();
      if (tag == 0) return coded.ConsumedEntireMessage();  // the end, or bytes that are no tag
      const int field = WireFormatLite::GetTagFieldNumber(tag);
      const WireFormatLite::WireType type = WireFormatLite::GetTagWireType(tag);
      if (field == rules::RuleCollection::kFormatVersionFieldNumber && type == WireFormatLite::WIRETYPE_VARINT) {
        uint32_t version = 0;
        if (!coded.ReadVarint32(&version)) return false;
        out->set_format_version(version);
      } else if (field == rules::RuleCollection::kRulesFieldNumber &&
                 type == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
        uint32_t length = 0;
        if (!coded.ReadVarint32(&length)) return false;
        const auto limit = coded.PushLimit(static_cast<int>(length));
        if (!out->add_rules()->ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) return false;
        coded.PopLimit(limit);
      } else if (!WireFormatLite::SkipField(&coded, tag)) {
        return false;
      }
    }
  }
}

absl::StatusOr<rules::RuleCollection> ReadRulesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read rules file ", path));
  rules::RuleCollection collection;
  if (absl::EndsWith(path, ".json")) {
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (!google::protobuf::util::JsonStringToMessage(bytes.str(), &collection).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, " is not a JSON RuleCollection"));
    }
  } else {
    google::protobuf::io::IstreamInputStream stream(&in);
    if (!ParseRuleCollection(&stream, &collection)) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, " is not a binary RuleCollection (write one with `taso rules export --format proto -o FILE`)"));
    }
  }
  if (collection.format_version() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " has rule format version ", collection.format_version(), "; this build reads up to 1"));
  }
  return collection;
}

std::string RuleContentDigest(const rules::RuleCollection& collection) {
  std::vector<const rules::Rule*> proved;
  for (const rules::Rule& rule : collection.rules()) {
    if (rule.status() == rules::RULE_STATUS_PROVED) proved.push_back(&rule);
  }
  std::sort(proved.begin(), proved.end(), [](const rules::Rule* a, const rules::Rule* b) { return a->id() < b->id(); });
  std::string text;
  for (const rules::Rule* rule : proved) {
    // What the rule means, not where it was stored or when: no revision,
    // provenance or proof statistics.
    rules::Rule meaning;
    meaning.set_id(rule->id());
    *meaning.mutable_variables() = rule->variables();
    *meaning.mutable_source() = rule->source();
    *meaning.mutable_target() = rule->target();
    *meaning.mutable_outputs() = rule->outputs();
    *meaning.mutable_conditions() = rule->conditions();
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      google::protobuf::io::CodedOutputStream coded(&stream);
      coded.SetSerializationDeterministic(true);
      meaning.SerializeToCodedStream(&coded);
    }
    absl::StrAppend(&text, bytes.size(), ":", bytes);
  }
  return net::Sha256Hex(text);
}

namespace {

// A proved rule as a reader takes it: filed under its own content's id and
// proved under an axiom set this build knows. (Its side conditions are
// checked as its rewrites are made: RecordedConditions.)
absl::Status CheckProvedRule(const rules::Rule& rule) {
  auto id = records::RuleId(rule);
  if (!id.ok()) return absl::InvalidArgumentError(absl::StrCat("rule ", rule.id(), ": ", id.status().message()));
  if (*id != rule.id()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rule ", rule.id(), " does not have its content's id (", *id,
        "): it was changed after it was proved; prove it again (`taso rules import`)"));
  }
  const std::string& axioms = rule.proof().axiom_set_version();
  if (!records::KnownAxiomSetVersion(axioms)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "rule ", rule.id(), " was proved under axiom set '", axioms, "', which this build does not know (",
        records::KnownAxiomSetVersions(), "): prove it again with this build (`taso_verifier prove FILE`)"));
  }
  return absl::OkStatus();
}

// The rewrites of a collection, with where they came from; InvalidArgument
// when a proved rule fails CheckProvedRule or records conditions no proof
// here leaves open: a set with one untrusted rule is refused whole. The
// built-in set is not checked again at every start (its ids cost a quarter of
// a second to recompute): it is part of the binary, and rule_source_test
// runs the same check on the same bytes.
absl::StatusOr<RuleSet> FromCollection(const rules::RuleCollection& collection, RuleOrigin origin,
                                       std::string location) {
  if (origin != RuleOrigin::kBuiltIn) {
    for (const rules::Rule& rule : collection.rules()) {
      if (rule.status() != rules::RULE_STATUS_PROVED) continue;
      if (absl::Status s = CheckProvedRule(rule); !s.ok()) return s;
    }
  }
  auto set = RewritesFromCollection(collection);
  if (!set.ok()) return set.status();
  set->provenance.origin = origin;
  set->provenance.location = std::move(location);
  set->provenance.digest = RuleContentDigest(collection);
  for (const rules::Rule& rule : collection.rules()) {
    if (rule.status() == rules::RULE_STATUS_PROVED) ++set->provenance.proved_rules;
  }
  return set;
}

}  // namespace

absl::StatusOr<RuleSet> LoadRulesFile(const std::string& path) {
  auto collection = ReadRulesFile(path);
  if (!collection.ok()) return collection.status();
  auto rewrites = FromCollection(*collection, RuleOrigin::kFile, path);
  if (!rewrites.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", rewrites.status().message()));
  return rewrites;
}

absl::StatusOr<RuleSet> LoadBuiltinRules() {
  rules::RuleCollection collection;
  const absl::string_view bytes = builtin_rules::DefaultRuleCollection();
  if (!collection.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InternalError("the built-in rule set does not parse: this build is broken");
  }
  auto set = FromCollection(collection, RuleOrigin::kBuiltIn, "");
  if (!set.ok()) return absl::InternalError(absl::StrCat("the built-in rule set: ", set.status().message()));
  return set;
}

absl::StatusOr<RuleSet> FetchRules(const std::string& address, int max_ops, int64_t max_rules) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(256 << 20);
  rules::RuleCollection collection;
  std::set<std::string> seen;  // a rule held by two shards counts once
  // Every store shard holds its slice of the rules: read them all.
  for (absl::string_view one : absl::StrSplit(address, ',', absl::SkipEmpty())) {
    auto channel = taso::net::NewChannel(std::string(one), args);
    auto stub = rules_db::RuleDb::NewStub(channel);
    rules_db::ListRulesRequest request;
    request.set_max_ops(max_ops);
    request.set_page_size(5000);
    const std::string peer = absl::StrCat("rule database ", one);
    while (true) {
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(5));
      rules_db::ListRulesResponse page;
      absl::Status s = net::FromGrpc(stub->ListRules(&context, request, &page), peer);
      if (!s.ok()) return s;
      for (auto& r : *page.mutable_rules()) {
        if (seen.insert(r.id()).second) *collection.add_rules() = std::move(r);
      }
      if (max_rules > 0 && collection.rules_size() > max_rules) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "the rule databases at ", address, " hold more than ", max_rules,
            " proved rules (the limit on rules an optimizer loads): prune the job over every shard with "
            "`taso rules prune --store ", address, "` (in Kubernetes, the taso-prune Job)"));
      }
      if (page.next_page_token().empty()) break;
      request.set_page_token(page.next_page_token());
    }
  }
  return FromCollection(collection, RuleOrigin::kStore, address);
}

absl::StatusOr<RuleSet> LoadRules(const std::string& file, const std::string& address, int max_ops) {
  if (file == kNoRules) return RuleSet{};
  if (!file.empty()) return LoadRulesFile(file);
  if (!address.empty()) return FetchRules(address, max_ops);
  return LoadBuiltinRules();
}

std::string DescribeRules(const RuleProvenance& rules) {
  const std::string digest = rules.digest.substr(0, 16);
  switch (rules.origin) {
    case RuleOrigin::kNone:
      return "none (--rules none): structural rewrites only";
    case RuleOrigin::kBuiltIn:
      return absl::StrCat("built-in size-3 set, ", rules.proved_rules, " proved rules, sha256 ", digest);
    case RuleOrigin::kFile:
      return absl::StrCat(rules.location, ", ", rules.proved_rules, " proved rules, sha256 ", digest);
    case RuleOrigin::kStore:
      return absl::StrCat("rule database ", rules.location, ", ", rules.proved_rules, " proved rules, sha256 ", digest);
    case RuleOrigin::kLocalDatabase:
      return absl::StrCat("local database ", rules.location, ", ", rules.proved_rules, " proved rules, sha256 ", digest);
  }
  return "";
}

std::string UnusableRulesWarning(const RuleSet& rules) {
  if (rules.unusable == 0) return "";
  return absl::StrCat(rules.unusable, " proved rule(s) not used, as nothing says where their proof holds (",
                      rules.first_unusable, "); prove them again with this build: `taso rules export -o R.txt` ",
                      "then `taso rules import R.txt`, or generate and verify into a new --db");
}

}  // namespace taso::optimizer
