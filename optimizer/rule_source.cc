#include "optimizer/rule_source.h"

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "net/credentials.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"

namespace taso::optimizer {

absl::StatusOr<rules::RuleCollection> ReadRulesFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read rules file ", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  rules::RuleCollection collection;
  if (absl::EndsWith(path, ".json")) {
    if (!google::protobuf::util::JsonStringToMessage(bytes.str(), &collection).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, " is not a JSON RuleCollection"));
    }
  } else if (!collection.ParseFromString(bytes.str())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " is not a binary RuleCollection (write one with `taso rules export --format proto -o FILE`)"));
  }
  if (collection.format_version() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, " has rule format version ", collection.format_version(), "; this build reads up to 1"));
  }
  return collection;
}

absl::StatusOr<RuleSet> LoadRulesFile(const std::string& path) {
  auto collection = ReadRulesFile(path);
  if (!collection.ok()) return collection.status();
  auto rewrites = RewritesFromCollection(*collection);
  if (!rewrites.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", rewrites.status().message()));
  return rewrites;
}

absl::StatusOr<RuleSet> FetchRules(const std::string& address, int max_ops) {
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
      if (page.next_page_token().empty()) break;
      request.set_page_token(page.next_page_token());
    }
  }
  return RewritesFromCollection(collection);
}

absl::StatusOr<RuleSet> LoadRules(const std::string& file, const std::string& address, int max_ops) {
  if (!file.empty()) return LoadRulesFile(file);
  if (!address.empty()) return FetchRules(address, max_ops);
  return RuleSet{};
}

std::string UnusableRulesWarning(const RuleSet& rules) {
  if (rules.unusable == 0) return "";
  return absl::StrCat(rules.unusable, " proved rule(s) not used, as nothing says where their proof holds (",
                      rules.first_unusable, "); prove them again with this build: `taso rules export -o R.txt` ",
                      "then `taso rules import R.txt`, or generate and verify into a new --db");
}

}  // namespace taso::optimizer
