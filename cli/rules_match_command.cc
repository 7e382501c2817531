#include "cli/rules_match_command.h"

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cluster/processes.h"
#include "cluster/store_set.h"
#include "core/graph_proto.h"
#include "core/json_text.h"
#include "core/op.h"
#include "core/rule_sexpr.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "optimizer/rewrite/rule_matches.h"
#include "onnx_io/onnx_import.h"
#include "optimizer/rule_source.h"
#include "optimizer/passes/structural_rules.h"
#include "proto/rules_db.grpc.pb.h"
#include "rules_db/match_response.h"
#include "rules_db/rule_filter.h"

namespace taso::cli {
namespace {

// What the rules matched, with where the answer came from.
struct Matches {
  rules_db::MatchRulesResponse proved;
  std::vector<rules_db::RuleMatch> structural;
};

class RulesMatch {
 public:
  RulesMatch(const RulesOptions& options, std::ostream& out, std::ostream& err)
      : options_(options), out_(out), err_(err) {}

  int Run(const rules_db::ListRulesRequest& filter) {
    if (options_.max_sites < 0) return Fail(2, "--max-sites must be 0 or more");
    if (!options_.rules_file.empty() && !options_.store.empty()) return Fail(2, "give --rules FILE or --store, not both");
    auto model = ImportOnnxFile(options_.args[0]);  // with its external data
    if (!model.ok()) return Fail(2, absl::StrCat(options_.args[0], ": ", model.status().message()));
    model_ = *std::move(model);
    // Weights' values play no part in matching; the graph travels without them.
    const ir::Graph graph = GraphToProto(model_.graph, /*weight_data=*/false);
    rules_db::ListRulesRequest proved = filter;
    proved.clear_statuses();
    Matches matches;
    absl::Status s = options_.rules_file.empty() ? FromStores(graph, proved, matches)
                                                 : FromFile(graph, proved, matches);
    if (!s.ok()) {
      const int code = s.code() == absl::StatusCode::kUnavailable       ? 3
                       : s.code() == absl::StatusCode::kInvalidArgument ? 2
                                                                        : 1;
      return Fail(code, std::string(s.message()));
    }
    if (options_.structural) {
      matches.structural = optimizer::MatchRewrites(model_.graph, optimizer::StructuralRewrites(model_.graph),
                                                    options_.max_sites);
    }
    if (options_.json) {
      PrintJson(matches);
    } else {
      PrintText(matches);
    }
    return 0;
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso rules match: " << message << "\n";
    return code;
  }

  absl::Status FromFile(const ir::Graph& graph, const rules_db::ListRulesRequest& filter, Matches& matches) {
    auto collection = optimizer::ReadRulesFile(options_.rules_file);
    if (!collection.ok()) return collection.status();
    auto keep = rules_db::RuleFilter::Create(filter);
    if (!keep.ok()) return keep.status();
    // Moved, not copied: a size-4 file holds 92,782 rules, and a second copy
    // of them was a large share of the command's memory. Only rules with a
    // side made of the model's operator kinds can match (as the store's
    // operator index selects them), and only those are converted.
    const int rules_read = collection->rules_size();
    const uint64_t graph_kinds = rules_db::GraphKinds(graph);
    std::vector<rules::Rule> rules;
    for (rules::Rule& r : *collection->mutable_rules()) {
      if (rules_db::CanMatchKinds(rules_db::KindsOf(r), graph_kinds) && keep->Matches(r)) rules.push_back(std::move(r));
    }
    collection->Clear();
    auto response = optimizer::MatchProvedRules(graph, rules, options_.max_sites);
    if (!response.ok()) return response.status();
    matches.proved = *std::move(response);
    matches.proved.set_rules_read(rules_read);
    return absl::OkStatus();
  }

  // Every store shard matches its own rules (a rule lives on one shard);
  // the answers are merged in rule order.
  absl::Status FromStores(const ir::Graph& graph, const rules_db::ListRulesRequest& filter, Matches& matches) {
    if (options_.store.empty() && cluster::StoreDirs(options_.db).empty()) {
      return absl::InvalidArgumentError(absl::StrCat("no database at ", options_.db,
                                                     "/store-0: give --rules FILE, --db DIR or --store ADDR"));
    }
    (void)cluster::MakeLogDir(options_.db);
    auto stores = cluster::StoreSet::Open(options_.store, options_.db, options_.db + "/logs");
    if (!stores.ok()) return stores.status();
    rules_db::MatchRulesRequest request;
    *request.mutable_graph() = graph;
    *request.mutable_filter() = filter;
    request.set_max_sites(options_.max_sites);
    rules_db::MatchRulesResponse& all = matches.proved;
    all.set_used_op_index(true);  // until a shard says it scanned
    for (const records::StoreShard& shard : (*stores)->shards()) {
      auto stub = rules_db::RuleDb::NewStub(shard.channel);
      grpc::ClientContext context;
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::minutes(30));
      rules_db::MatchRulesResponse one;
      absl::Status s = net::FromGrpc(stub->MatchRules(&context, request, &one), "store " + shard.address);
      if (!s.ok()) return s;
      rules_db::MergeMatchResponse(std::move(one), all);
    }
    return absl::OkStatus();
  }

  // The ONNX node an operator came from; "" when none.
  std::string Origin(int id) const {
    return id < static_cast<int>(model_.node_origins.size()) ? model_.node_origins[id] : "";
  }

  // "conv2d /layer1/layer1.0/conv1/Conv" ("conv2d %12" without an origin).
  std::string NodeLabel(int id) const {
    const std::string origin = Origin(id);
    return absl::StrCat(OpKindName(model_.graph.node(id).kind), " ", origin.empty() ? absl::StrCat("%", id) : origin);
  }

  static std::string Sexpr(const rules_db::RuleMatch& m) {
    if (!m.has_rule()) return "";
    auto s = RuleToSexpr(m.rule());
    if (!s.ok()) return "";
    return s->substr(0, s->find(" ;; "));  // the conditions are in `taso rules show`
  }

  std::vector<const rules_db::RuleMatch*> Listed(const Matches& matches) const {
    std::vector<const rules_db::RuleMatch*> out;
    for (const auto& m : matches.proved.matches()) out.push_back(&m);
    for (const auto& m : matches.structural) out.push_back(&m);
    if (options_.limit > 0 && static_cast<int>(out.size()) > options_.limit) out.resize(options_.limit);
    return out;
  }

  static int64_t Places(const Matches& matches) {
    int64_t n = 0;
    for (const auto& m : matches.proved.matches()) n += m.count();
    return n;
  }

  void PrintText(const Matches& matches) const {
    const rules_db::MatchRulesResponse& p = matches.proved;
    out_ << options_.args[0] << ": " << model_.graph.num_ops() << " operators; " << p.rules_matched()
         << " proved rules tried (" << p.rules_read() << " read"
         << (p.used_op_index() && options_.rules_file.empty() ? " through the operator index" : "") << "); "
         << p.matches_size() << " rule directions apply at " << Places(matches) << " places\n";
    if (p.rules_unusable() > 0) {
      out_ << "  " << p.rules_unusable() << " proved rules not usable, as in the searches (" << p.first_unusable()
           << ")\n";
    }
    for (const rules_db::RuleMatch* m : Listed(matches)) {
      const bool structural = !m->has_rule();
      out_ << (structural ? "structural " : "rule ") << m->rule_id() << (m->backward() ? "  backward" : "  forward")
           << "  " << m->count() << (m->count_capped() ? "+" : "") << (m->count() == 1 ? " match" : " matches");
      if (!structural) out_ << "  " << Sexpr(*m);
      out_ << "\n";
      for (const rules_db::MatchSite& site : m->sites()) {
        std::vector<std::string> labels;
        for (int node : site.nodes()) labels.push_back(NodeLabel(node));
        out_ << "    " << absl::StrJoin(labels, ", ") << "\n";
      }
      if (m->count() > m->sites_size()) out_ << "    ... and " << m->count() - m->sites_size() << " more\n";
    }
  }

  void PrintJson(const Matches& matches) const {
    const rules_db::MatchRulesResponse& p = matches.proved;
    Json list = Json::array();
    for (const rules_db::RuleMatch* m : Listed(matches)) {
      Json sites = Json::array();
      for (const rules_db::MatchSite& site : m->sites()) {
        Json nodes = Json::array();
        for (int node : site.nodes()) {
          nodes.push_back({{"node", node}, {"op", OpKindName(model_.graph.node(node).kind)}, {"onnx_node", Origin(node)}});
        }
        sites.push_back(nodes);
      }
      list.push_back({{"rule", m->rule_id()},
                      {"kind", m->has_rule() ? "proved" : "structural"},
                      {"direction", m->backward() ? "backward" : "forward"},
                      {"count", m->count()},
                      {"count_capped", m->count_capped()},
                      {"sexpr", Sexpr(*m)},
                      {"sites", sites}});
    }
    const Json summary = {{"model", options_.args[0]},
                          {"operators", model_.graph.num_ops()},
                          {"rules_read", p.rules_read()},
                          {"rules_tried", p.rules_matched()},
                          {"rules_unusable", p.rules_unusable()},
                          {"used_op_index", p.used_op_index() && options_.rules_file.empty()},
                          {"rule_directions_matched", p.matches_size()},
                          {"places", Places(matches)},
                          {"matches", list}};
    out_ << JsonLine(summary) << "\n";
  }

  const RulesOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  OnnxModel model_;
};

}  // namespace

int RunRulesMatch(const RulesOptions& options, const rules_db::ListRulesRequest& filter, std::ostream& out,
                  std::ostream& err) {
  RulesMatch match(options, out, err);
  return match.Run(filter);
}

}  // namespace taso::cli
