#include "net/roles.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace taso::net {
namespace {

struct RoleNameEntry {
  Role role;
  const char* name;
};
constexpr RoleNameEntry kRoleNames[] = {
    {Role::kRead, "read"},
    {Role::kWorker, "worker"},
    {Role::kOptimize, "optimize"},
    {Role::kAdmin, "admin"},
};

const absl::flat_hash_map<std::string, Role>& MethodRoles() {
  static const auto* table = new absl::flat_hash_map<std::string, Role>{
      // taso_rules_db: hash store
      {"/taso.rules_db.HashStore/GetJob", Role::kRead},
      {"/taso.rules_db.HashStore/ListJobs", Role::kRead},
      {"/taso.rules_db.HashStore/ListCandidateClasses", Role::kRead},
      {"/taso.rules_db.HashStore/GetStoreInfo", Role::kRead},  // every client asks it to order a store list
      {"/taso.rules_db.HashStore/CancelJob", Role::kAdmin},
      {"/taso.rules_db.HashStore/CreateJob", Role::kWorker},
      {"/taso.rules_db.HashStore/StreamGraphs", Role::kWorker},
      {"/taso.rules_db.HashStore/ReportProgress", Role::kWorker},
      // taso_rules_db: rule database. PutRules is the one RPC that can write
      // a PROVED rule directly (the store re-proves it, but it still decides
      // what the optimizers apply), so it is admin's; verifiers write
      // verdicts on leased classes only.
      {"/taso.rules_db.RuleDb/ListRules", Role::kRead},
      {"/taso.rules_db.RuleDb/GetRule", Role::kRead},
      {"/taso.rules_db.RuleDb/Stats", Role::kRead},
      {"/taso.rules_db.RuleDb/MatchRules", Role::kRead},  // a query: reads rules, writes nothing
      {"/taso.rules_db.RuleDb/LeaseCandidates", Role::kWorker},
      {"/taso.rules_db.RuleDb/ReportVerdicts", Role::kWorker},
      {"/taso.rules_db.RuleDb/ReportClasses", Role::kWorker},
      {"/taso.rules_db.RuleDb/PutRules", Role::kAdmin},
      // Pruning from outside reads like any reader, and writes statuses
      // (which decide what optimizers apply) as admin.
      {"/taso.rules_db.RuleDb/GetRules", Role::kRead},
      {"/taso.rules_db.RuleDb/GetPruneCheckpoint", Role::kRead},
      {"/taso.rules_db.RuleDb/StorePruning", Role::kAdmin},
      {"/taso.rules_db.RuleDb/RecordPruning", Role::kAdmin},
      // taso_profiler: measuring spends GPU time and fills the cache.
      {"/taso.profiler.Profiler/ListCache", Role::kRead},
      {"/taso.profiler.Profiler/MeasureBatch", Role::kOptimize},
      {"/taso.profiler.Profiler/MeasureGraph", Role::kOptimize},
      {"/taso.profiler.Profiler/InvalidateCache", Role::kAdmin},
      // taso_optimizer
      {"/taso.optimizer.Optimizer/Optimize", Role::kOptimize},
      // Reflection describes the schema only.
      {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", Role::kRead},
  };
  return *table;
}

}  // namespace

absl::StatusOr<Role> ParseRole(absl::string_view name) {
  for (const RoleNameEntry& e : kRoleNames) {
    if (name == e.name) return e.role;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown role '", name, "' (roles: read, worker, optimize, admin)"));
}

std::string RoleName(Role role) {
  for (const RoleNameEntry& e : kRoleNames) {
    if (e.role == role) return e.name;
  }
  return "unknown";
}

bool RoleAllows(Role held, Role needed) {
  if (held == Role::kAdmin || held == needed) return true;
  return needed == Role::kRead;
}

bool IsClassified(absl::string_view method) { return MethodRoles().contains(method); }

std::optional<Role> RequiredRole(absl::string_view method) {
  if (absl::StartsWith(method, "/grpc.health.v1.Health/")) return std::nullopt;
  auto it = MethodRoles().find(method);
  return it == MethodRoles().end() ? Role::kAdmin : it->second;
}

}  // namespace taso::net
