#include "cli/rules_command.h"


#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <map>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/command_pictures.h"
#include "cli/rule_collection_writer.h"
#include "cli/rules_fuzz_command.h"
#include "cli/rules_match_command.h"
#include "cli/rules_query.h"
#include "cluster/job_states.h"
#include "cluster/local_store.h"
#include "cluster/processes.h"
#include "cluster/shard_rules.h"
#include "cluster/store_set.h"
#include "core/graph_proto.h"
#include "core/json_text.h"
#include "core/op.h"
#include "core/rule_sexpr.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/grpcpp.h"
#include "net/grpc_status.h"
#include "proto/rules_db.grpc.pb.h"
#include "rules_db/rule_filter.h"
#include "verifier/precheck.h"
#include "verifier/prover.h"
#include "verifier/pruning.h"

namespace taso::cli {
namespace {

constexpr int kPage = 1000;

std::string StatusName(rules::RuleStatus s) {
  std::string name = rules::RuleStatus_Name(s);
  const std::string prefix = "RULE_STATUS_";
  if (name.rfind(prefix, 0) == 0) name = name.substr(prefix.size());
  return absl::AsciiStrToLower(name);
}

// One node per line, "%3 = conv2d[...](%1, w4)".
std::string DescribeGraph(const ir::Graph& proto) {
  auto g = GraphFromProto(proto);
  if (!g.ok()) return absl::StrCat("    (malformed: ", g.status().message(), ")\n");
  std::string out;
  auto ref = [&](const TensorRef& r) {
    const Node& n = g->node(r.node);
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) return n.name;
    return n.output_types.size() > 1 ? absl::StrCat("%", r.node, ":", r.index) : absl::StrCat("%", r.node);
  };
  for (const Node& n : g->nodes()) {
    if (n.kind == OpKind::kInput || n.kind == OpKind::kWeight) continue;
    std::vector<std::string> args;
    for (const TensorRef& r : n.inputs) args.push_back(ref(r));
    absl::StrAppend(&out, "    %", n.id, " = ", OpLabel(n.kind, n.params), "(", absl::StrJoin(args, ", "), ")  -> ",
                    n.output_types[0].ToString(), "\n");
  }
  for (const GraphOutput& o : g->outputs()) absl::StrAppend(&out, "    output ", o.name, " = ", ref(o.tensor), "\n");
  return out;
}

class Rules {
 public:
  Rules(const RulesOptions& options, std::ostream& out, std::ostream& err) : options_(options), out_(out), err_(err) {}

  int Run() {
    const std::string& c = options_.subcommand;
    if (c != "stats" && c != "list" && c != "show" && c != "export" && c != "import" && c != "fuzz" && c != "match" &&
        c != "derive") {
      return Fail(2, absl::StrCat("unknown subcommand '", c,
                                  "': use stats, list, show ID, export, import FILE, fuzz, match MODEL or derive"));
    }
    if (c == "show" && options_.args.size() != 1) return Fail(2, "show takes one rule id");
    if (c == "import" && options_.args.size() != 1) return Fail(2, "import takes one file of rules");
    if (c == "match" && options_.args.size() != 1) return Fail(2, "match takes one ONNX model");
    if (!options_.svg.empty()) {
      if (c != "show") return Fail(2, "--svg FILE goes with show ID");
      if (auto graphviz = FindGraphviz(); !graphviz.ok()) return FailStatus(graphviz.status());
    }
    if (c != "show" && c != "import" && c != "match" && !options_.args.empty()) {
      return Fail(2, absl::StrCat("unexpected argument '", options_.args[0], "'"));
    }
    std::vector<rules::Rule> imported;
    if (c == "import") {
      std::ifstream in(options_.args[0]);
      if (!in) return Fail(2, absl::StrCat("cannot read ", options_.args[0]));
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto parsed = RulesFromSexpr(text);
      if (!parsed.ok()) return Fail(2, absl::StrCat(options_.args[0], ": ", parsed.status().message()));
      imported = std::move(*parsed);
    }
    rules_db::ListRulesRequest filter;
    for (const std::string& s : options_.statuses) {
      rules::RuleStatus status;
      if (!rules::RuleStatus_Parse("RULE_STATUS_" + absl::AsciiStrToUpper(s), &status)) {
        return Fail(2, absl::StrCat("unknown status '", s,
                                    "': use proved, pruned, refuted, timeout, unknown, rejected_precheck, candidate"));
      }
      filter.add_statuses(status);
    }
    if (absl::Status s = AddQueryFilters(options_, filter); !s.ok()) return Fail(2, std::string(s.message()));
    if (c == "match") return RunRulesMatch(options_, filter, out_, err_);
    if (c == "export" && options_.format != "sexpr" && options_.format != "json" && options_.format != "proto") {
      return Fail(2, absl::StrCat("unknown --format '", options_.format, "': use sexpr, json or proto"));
    }
    if (c == "export" && options_.format == "proto" && options_.output.empty()) {
      return Fail(2, "--format proto writes binary: give -o FILE");
    }
    if (c == "fuzz" && (options_.fuzz.instances < 1 || options_.fuzz.max_dim < 1 || options_.fuzz.max_elements < 1 ||
                        options_.fuzz.attempts < 1)) {
      return Fail(2, "--instances, --max-dim, --max-elements and --attempts must be positive");
    }
    if (c == "derive") return Derive(filter);
    if (int code = Connect(); code != 0) return code;
    if (c == "import") return Import(std::move(imported));
    if (c == "stats") return Stats();
    if (c == "show") return Show(options_.args[0]);
    if (c == "fuzz") return Fuzz(filter);
    return ListOrExport(filter);
  }

 private:
  int Fail(int code, const std::string& message) {
    err_ << "taso rules: " << message << "\n";
    return code;
  }
  int FailStatus(const absl::Status& s) {
    return Fail(s.code() == absl::StatusCode::kUnavailable ? 3 : s.code() == absl::StatusCode::kNotFound ? 4 : 1,
                std::string(s.message()));
  }

  // Every store shard (--store list, or each store-N under --db); shard 0
  // takes imports, and a single store answers filters itself.
  int Connect() {
    // Importing hand-written rules may start a database; reading needs one.
    const bool importing = options_.subcommand == "import";
    if (options_.store.empty() && cluster::StoreDirs(options_.db).empty() && !importing) {
      return Fail(2, absl::StrCat("no database at ", options_.db, "/store-0: run `taso generate` and `taso verify` first"));
    }
    // A log directory that cannot be made shows as the store's log failing.
    (void)cluster::MakeLogDir(options_.db);
    auto stores = cluster::StoreSet::Open(options_.store, options_.db, options_.db + "/logs", {}, importing);
    if (!stores.ok()) return FailStatus(stores.status());
    stores_ = std::move(*stores);
    address_ = stores_->shards()[0].address;
    rules_ = rules_db::RuleDb::NewStub(stores_->shards()[0].channel);
    jobs_ = rules_db::HashStore::NewStub(stores_->shards()[0].channel);
    return 0;
  }

  bool Sharded() const { return stores_->size() > 1; }

  // What the shards say of their jobs (cluster/shard_rules.h); fetched once.
  absl::StatusOr<const cluster::ShardJobs*> ShardJobs() {
    if (!shard_jobs_) {
      auto jobs = cluster::ListShardJobs(*stores_);
      if (!jobs.ok()) return jobs.status();
      shard_jobs_ = std::make_unique<cluster::ShardJobs>(std::move(*jobs));
    }
    return shard_jobs_.get();
  }

  // The rules of the jobs in scope that are verified on every shard but not
  // pruned as one set, pruned together here in memory (their stored statuses
  // are each shard's own), up to --union-prune-max-rules; fetched once.
  absl::StatusOr<const cluster::PrunedJobs*> Recomputed() {
    if (!recomputed_) {
      auto jobs = ShardJobs();
      if (!jobs.ok()) return jobs.status();
      const std::vector<std::string> unpruned = (*jobs)->Unpruned(options_.job_id);
      const int64_t proved = (*jobs)->UnprunedProved(options_.job_id);
      if (proved > options_.union_prune_max_rules) {
        return absl::FailedPreconditionError(absl::StrCat(
            "job(s) ", absl::StrJoin(unpruned, ", "), " are verified on every store but their ", proved,
            " proved rules are not pruned as one set, which reading them here would do in memory: run `taso rules ",
            "prune --store ", absl::StrJoin(stores_->addresses(), ","), " --job ID` once (in bounded memory), or ",
            "raise --union-prune-max-rules (", options_.union_prune_max_rules, ")"));
      }
      auto pruned = cluster::FetchAndPruneJobs(*stores_, unpruned, verifier::PruneRules);
      if (!pruned.ok()) return pruned.status();
      recomputed_ = std::make_unique<cluster::PrunedJobs>(std::move(*pruned));
    }
    return recomputed_.get();
  }

  template <typename Call>
  absl::Status Rpc(Call call, int deadline_s = 60) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(deadline_s));
    return net::FromGrpc(call(&context), "store " + address_);
  }

  // Several shards: counts summed, jobs merged (a job is as far as its
  // least advanced shard), and rules counted as the union pruned together
  // has them: the stores' counts, corrected for the jobs pruned here. A
  // rule stored on two shards (imported into each) counts twice.
  absl::Status ShardedStats(rules_db::StatsResponse& stats, rules_db::ListJobsResponse& jobs,
                            std::map<std::string, int64_t>& by_status) {
    for (const records::StoreShard& shard : stores_->shards()) {
      auto rules = rules_db::RuleDb::NewStub(shard.channel);
      rules_db::StatsRequest request;
      request.set_job_id(options_.job_id);
      rules_db::StatsResponse one;
      if (auto s = Rpc([&](grpc::ClientContext* c) { return rules->Stats(c, request, &one); }); !s.ok()) return s;
      stats.set_graphs(stats.graphs() + one.graphs());
      stats.set_candidate_classes(stats.candidate_classes() + one.candidate_classes());
      stats.set_classes_leased(stats.classes_leased() + one.classes_leased());
      stats.set_classes_pending(stats.classes_pending() + one.classes_pending());
      for (const auto& c : one.rules_by_status()) by_status[StatusName(c.status())] += c.count();
    }
    auto shard_jobs = ShardJobs();
    if (!shard_jobs.ok()) return shard_jobs.status();
    auto recomputed = Recomputed();
    if (!recomputed.ok()) return recomputed.status();
    for (const auto& [status, delta] : (*recomputed)->status_delta) by_status[StatusName(status)] += delta;
    for (auto it = by_status.begin(); it != by_status.end();) {
      it = it->second == 0 ? by_status.erase(it) : std::next(it);
    }
    std::map<std::string, cluster::ReductionTable> tables = (*shard_jobs)->pruned_as_union;
    for (const auto& [id, table] : (*recomputed)->tables) tables[id] = table;
    for (const std::string& id : (*shard_jobs)->order) {
      rules_db::Job job = cluster::MergeShardJobs((*shard_jobs)->views.at(id));
      auto table = tables.find(id);
      if (table != tables.end()) {
        auto* v = job.mutable_verification();
        v->set_rules_proved(table->second.proved);
        v->set_after_renaming(table->second.after_renaming);
        v->set_after_common_subgraph(table->second.after_common_subgraph);
      }
      *jobs.add_jobs() = job;
    }
    return absl::OkStatus();
  }

  int Stats() {
    rules_db::StatsResponse stats;
    rules_db::ListJobsResponse jobs;
    std::map<std::string, int64_t> by_status;
    if (Sharded()) {
      if (auto s = ShardedStats(stats, jobs, by_status); !s.ok()) return FailStatus(s);
    } else {
      rules_db::StatsRequest request;
      request.set_job_id(options_.job_id);
      if (auto s = Rpc([&](grpc::ClientContext* c) { return rules_->Stats(c, request, &stats); }); !s.ok()) {
        return FailStatus(s);
      }
      rules_db::ListJobsRequest list;
      list.set_page_size(kPage);
      if (auto s = Rpc([&](grpc::ClientContext* c) { return jobs_->ListJobs(c, list, &jobs); }); !s.ok()) {
        return FailStatus(s);
      }
      for (const auto& c : stats.rules_by_status()) by_status[StatusName(c.status())] = c.count();
    }
    if (options_.json) {
      Json rules = Json::object();
      for (const auto& [k, v] : by_status) rules[k] = v;
      Json job_list = Json::array();
      for (const auto& job : jobs.jobs()) {
        if (!options_.job_id.empty() && job.id() != options_.job_id) continue;
        const auto& v = job.verification();
        job_list.push_back({{"id", job.id()},
                            {"state", rules_db::JobState_Name(job.state())},
                            {"proved", v.rules_proved()},
                            {"after_renaming", v.after_renaming()},
                            {"after_common_subgraph", v.after_common_subgraph()}});
      }
      const Json summary = {{"rules", rules},
                            {"graphs", stats.graphs()},
                            {"candidate_classes", stats.candidate_classes()},
                            {"classes_leased", stats.classes_leased()},
                            {"classes_pending", stats.classes_pending()},
                            {"jobs", job_list}};
      out_ << JsonLine(summary) << "\n";
      return 0;
    }
    out_ << "rules by status:\n";
    for (const auto& [k, v] : by_status) out_ << absl::StrFormat("  %-20s %10d\n", k, v);
    out_ << absl::StrFormat("graphs %d, candidate classes %d (%d leased, %d pending)\n", stats.graphs(),
                            stats.candidate_classes(), stats.classes_leased(), stats.classes_pending());
    for (const auto& job : jobs.jobs()) {
      if (!options_.job_id.empty() && job.id() != options_.job_id) continue;
      const auto& v = job.verification();
      out_ << absl::StrFormat("job %s: %s", job.id(), rules_db::JobState_Name(job.state()));
      if (job.state() == rules_db::JOB_STATE_DONE) {
        out_ << absl::StrFormat("; proved %d -> after renaming %d -> after common subgraph %d", v.rules_proved(),
                                v.after_renaming(), v.after_common_subgraph());
      } else if (job.state() == rules_db::JOB_STATE_VERIFYING) {
        out_ << absl::StrFormat("; %d / %d classes verified", v.classes_verified(), v.classes_total());
      }
      if (v.classes_given_up() > 0) {
        out_ << absl::StrFormat("; %d classes given up (leases expired too often)", v.classes_given_up());
      }
      out_ << "\n";
    }
    return 0;
  }

  int Show(const std::string& id) {
    rules_db::GetRuleRequest request;
    request.set_id(id);
    rules::Rule rule;
    absl::Status got;
    for (const records::StoreShard& shard : stores_->shards()) {
      auto stub = rules_db::RuleDb::NewStub(shard.channel);
      got = Rpc([&](grpc::ClientContext* c) { return stub->GetRule(c, request, &rule); });
      if (got.code() != absl::StatusCode::kNotFound) break;
    }
    if (!got.ok()) return FailStatus(got);
    if (Sharded()) {
      // Its status as the union's pruning has it: stored, unless its job
      // is pruned here.
      auto jobs = ShardJobs();
      if (!jobs.ok()) return FailStatus(jobs.status());
      if (!rule.provenance().job_id().empty() && !(*jobs)->Unpruned(rule.provenance().job_id()).empty()) {
        auto recomputed = Recomputed();
        if (!recomputed.ok()) return FailStatus(recomputed.status());
        for (const rules::Rule& r : (*recomputed)->rules) {
          if (r.id() == id) rule = r;
        }
      }
    }
    if (!options_.svg.empty()) {
      if (absl::Status s = WriteRuleSvg(rule, options_.svg); !s.ok()) return FailStatus(s);
      if (options_.json) err_ << "taso rules: wrote " << options_.svg << "\n";
    }
    if (options_.json) {
      std::string json;
      google::protobuf::util::JsonPrintOptions o;
      (void)google::protobuf::util::MessageToJsonString(rule, &json, o);
      out_ << json << "\n";
      return 0;
    }
    auto sexpr = RuleToSexpr(rule);
    out_ << "rule " << rule.id() << "  " << StatusName(rule.status()) << "\n";
    if (!rule.status_detail().empty()) out_ << "  detail: " << rule.status_detail() << "\n";
    out_ << "  sexpr:  " << (sexpr.ok() ? *sexpr : std::string(sexpr.status().message())) << "\n";
    out_ << "  source:\n" << DescribeGraph(rule.source()) << "  target:\n" << DescribeGraph(rule.target());
    out_ << "  outputs:";
    for (const auto& p : rule.outputs()) out_ << " " << p.source_output() << "=" << p.target_output();
    out_ << "\n  proof: " << (rule.proof().axioms_used().empty() ? "-" : absl::StrJoin(rule.proof().axioms_used(), ", "))
         << " (" << rule.proof().proof_time_ms() << " ms, " << rule.proof().solver() << ", "
         << rule.proof().axiom_set_version() << ")\n";
    out_ << "  job " << rule.provenance().job_id() << ", verified by " << rule.provenance().verifier_worker_id()
         << ", revision " << rule.revision() << "\n";
    if (!options_.svg.empty()) out_ << "  wrote " << options_.svg << "\n";
    return 0;
  }

  // Hand-written rules are verified like any candidate before they are
  // stored: the numeric pre-check, then the proof. All of them are stored,
  // with their status, so a rejected one can be looked at. The check here is
  // for the messages; the store proves the proved ones again and only its
  // own proof makes a rule proved (it refuses the request otherwise).
  int Import(std::vector<rules::Rule> rules) {
    auto prover = verifier::Prover::Create();
    if (!prover.ok()) return Fail(1, std::string(prover.status().message()));
    rules_db::PutRulesRequest put;
    std::map<std::string, int> counts;
    for (size_t i = 0; i < rules.size(); ++i) {
      rules::Rule& rule = rules[i];
      if (absl::Status s = verifier::VerifyStandalone(**prover, verifier::SolverName(), rule); !s.ok()) {
        return Fail(2, absl::StrCat("rule ", i + 1, ": ", s.message()));
      }
      rule.mutable_provenance()->set_job_id(absl::StrCat("import:", std::filesystem::path(options_.args[0]).filename().string()));
      ++counts[StatusName(rule.status())];
      if (rule.status() != rules::RULE_STATUS_PROVED) {
        auto sexpr = RuleToSexpr(rule);
        err_ << "taso rules: rule " << i + 1 << " " << StatusName(rule.status()) << ": " << rule.status_detail() << "\n    "
             << (sexpr.ok() ? *sexpr : "") << "\n";
      }
      *put.add_rules() = rule;
    }
    rules_db::PutRulesResponse response;
    // Room for the store's proofs: up to two solver queries of 10 s per rule.
    const int deadline_s = 60 + 20 * counts["proved"];
    if (auto s = Rpc([&](grpc::ClientContext* c) { return rules_->PutRules(c, put, &response); }, deadline_s);
        !s.ok()) {
      return FailStatus(s);
    }
    std::vector<std::string> parts;
    for (const auto& [k, v] : counts) parts.push_back(absl::StrCat(v, " ", k));
    if (options_.json) {
      const Json summary = {{"imported", rules.size()},
                            {"created", response.created()},
                            {"updated", response.updated()},
                            {"proved", counts["proved"]}};
      out_ << JsonLine(summary) << "\n";
    } else {
      out_ << "imported " << rules.size() << " rules (" << absl::StrJoin(parts, ", ") << "); " << response.created()
           << " new, " << response.updated() << " updated\n";
    }
    return 0;
  }

  // Pages through the rules `request` selects until `visit` returns false.
  absl::Status ForEachRule(rules_db::ListRulesRequest request, const std::function<bool(const rules::Rule&)>& visit) {
    // Streamed from the stores, filtered there. Over several shards, the
    // rules of jobs pruned here come from memory, filtered here; a single
    // store's statuses are its own.
    cluster::ReplacedJobs replaced;
    if (Sharded()) {
      auto recomputed = Recomputed();
      if (!recomputed.ok()) return recomputed.status();
      auto filter = rules_db::RuleFilter::Create(request);
      if (!filter.ok()) return filter.status();
      for (const auto& [job, table] : (*recomputed)->tables) replaced.jobs.insert(job);
      for (const rules::Rule& rule : (*recomputed)->rules) {
        if (filter->Matches(rule)) replaced.rules.push_back(rule);
      }
    }
    return cluster::StreamShardRules(*stores_, std::move(request), visit, replaced.jobs.empty() ? nullptr : &replaced);
  }

  int Fuzz(const rules_db::ListRulesRequest& request) {
    std::vector<rules::Rule> rules;
    if (auto s = ForEachRule(request, [&](const rules::Rule& r) { rules.push_back(r); return true; }); !s.ok()) {
      return FailStatus(s);
    }
    // Nothing more to ask the store: close the channel now, or gRPC's backup
    // poller, idle through a long run, complains about shutdown at exit.
    rules_.reset();
    jobs_.reset();
    stores_.reset();
    return FuzzAndReport(rules, options_.fuzz, options_.json, out_);
  }

  // Our rules from the store unless --rules names a file (cli/rules_derive_command.h).
  int Derive(const rules_db::ListRulesRequest& request) {
    if (absl::Status s = CheckDeriveOptions(options_.derive); !s.ok()) return Fail(2, std::string(s.message()));
    std::vector<rules::Rule> rules;
    if (options_.derive.rules_file.empty()) {
      if (int code = Connect(); code != 0) return code;
      if (auto s = ForEachRule(request, [&](const rules::Rule& r) { rules.push_back(r); return true; }); !s.ok()) {
        return FailStatus(s);
      }
      rules_.reset();  // as Fuzz: nothing more to ask the store
      jobs_.reset();
      stores_.reset();
    }
    return RunDerive(options_.derive, std::move(rules), options_.json, out_, err_);
  }

  int ListOrExport(rules_db::ListRulesRequest request) {
    const bool exporting = options_.subcommand == "export";
    std::ofstream file;
    std::ostream* out = &out_;
    if (exporting && !options_.output.empty()) {
      file.open(options_.output, std::ios::binary | std::ios::trunc);
      if (!file) return Fail(1, absl::StrCat("cannot write ", options_.output));
      out = &file;
    }
    std::optional<RuleCollectionWriter> collection;
    if (exporting && options_.format == "proto") collection.emplace(*out);
    int64_t count = 0;
    int code = 0;
    absl::Status listed = ForEachRule(std::move(request), [&](const rules::Rule& rule) {
      if (!exporting && options_.limit > 0 && count >= options_.limit) return false;
      ++count;
      if (collection) {
        collection->Add(rule);
        return true;
      }
      if (exporting && options_.format == "json") {
        std::string json;
        (void)google::protobuf::util::MessageToJsonString(rule, &json, {});
        *out << json << "\n";
        return true;
      }
      auto sexpr = RuleToSexpr(rule);
      if (!sexpr.ok()) {
        code = Fail(1, absl::StrCat("rule ", rule.id(), ": ", sexpr.status().message()));
        return false;
      }
      if (exporting) {
        *out << *sexpr << "\n";
      } else {
        *out << rule.id() << "  " << StatusName(rule.status()) << "  " << rules_db::KindsOf(rule).max_ops << "  "
             << *sexpr << "\n";
      }
      return true;
    });
    if (!listed.ok()) return FailStatus(listed);
    if (code != 0) return code;
    if (collection && !collection->Finish()) return Fail(1, absl::StrCat("cannot write ", options_.output));
    if (exporting && !options_.output.empty()) {
      file.close();
      if (!file) return Fail(1, absl::StrCat("cannot write ", options_.output));
      err_ << "taso rules: exported " << count << " rules to " << options_.output << "\n";
    }
    return 0;
  }

  const RulesOptions& options_;
  std::ostream& out_;
  std::ostream& err_;
  std::unique_ptr<cluster::StoreSet> stores_;
  std::unique_ptr<cluster::ShardJobs> shard_jobs_;
  std::unique_ptr<cluster::PrunedJobs> recomputed_;
  std::string address_;
  std::unique_ptr<rules_db::RuleDb::Stub> rules_;
  std::unique_ptr<rules_db::HashStore::Stub> jobs_;
};

}  // namespace

int RunRules(const RulesOptions& options, std::ostream& out, std::ostream& err) {
  Rules rules(options, out, err);
  return rules.Run();
}

}  // namespace taso::cli
