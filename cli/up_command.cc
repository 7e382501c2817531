#include "cli/up_command.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cluster/processes.h"
#include "core/file_write.h"
#include "core/json_text.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/impl/client_unary_call.h"
#include "grpcpp/support/byte_buffer.h"
#include "net/local_pki.h"

namespace taso::cli {
namespace {

namespace fs = std::filesystem;

// Listed in start order; `down` stops them in reverse (clients first).
enum class Kind { kStore, kProfiler, kOptimizer, kVerifier };
enum class Health { kServing, kNotServing, kRunning, kDead };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kStore: return "store";
    case Kind::kProfiler: return "profiler";
    case Kind::kOptimizer: return "optimizer";
    case Kind::kVerifier: return "verifier";
  }
  return "?";
}

std::optional<Kind> KindFromName(const std::string& name) {
  for (Kind k : {Kind::kStore, Kind::kProfiler, Kind::kOptimizer, Kind::kVerifier}) {
    if (name == KindName(k)) return k;
  }
  return std::nullopt;
}

const char* HealthName(Health health) {
  switch (health) {
    case Health::kServing: return "SERVING";
    case Health::kNotServing: return "NOT_SERVING";
    case Health::kRunning: return "RUNNING";  // a verifier: alive, serves nothing
    case Health::kDead: return "DEAD";
  }
  return "?";
}

struct Member {
  std::string name;
  Kind kind = Kind::kStore;
  std::string address;  // empty for verifiers (clients only)
  pid_t pid = -1;
  std::string exe;  // canonical path, to tell our process from a reused pid
  std::string log;
};

struct Cluster {
  std::vector<Member> members;
  net::ClientSecurity client;  // what a client of this cluster needs (no token)
  std::string stores;          // comma-separated store addresses
  std::string optimizer, profiler;
  bool tokens = false;
  std::string pki;  // DIR/pki when the cluster made its own CA and tokens
};

std::string ClusterFile(const std::string& dir) { return dir + "/cluster.json"; }

std::string Absolute(const std::string& path) {
  if (path.empty()) return path;
  std::error_code error;
  fs::path absolute = fs::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

// Whether `pid` is still the process we started (not a zombie, not a reused pid).
bool Alive(pid_t pid, const std::string& exe) {
  if (pid <= 0 || kill(pid, 0) != 0) return false;
  char buffer[4096];
  ssize_t n = readlink(absl::StrCat("/proc/", pid, "/exe").c_str(), buffer, sizeof(buffer) - 1);
  if (n <= 0) return false;  // zombies have no exe
  buffer[n] = '\0';
  return absl::StartsWith(buffer, exe);
}

// grpc.health.v1.Health/Check for the whole server (empty request); the
// response's field 1 is the status, SERVING = 1. Health calls need no token.
Health CheckHealth(const std::string& address, absl::Duration timeout) {
  std::shared_ptr<grpc::Channel> channel = net::NewChannel(address);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + absl::ToChronoMilliseconds(timeout));
  grpc::ByteBuffer request, response;
  grpc::Slice empty("");
  request = grpc::ByteBuffer(&empty, 1);
  grpc::Status status = grpc::internal::BlockingUnaryCall<grpc::ByteBuffer, grpc::ByteBuffer>(
      channel.get(), grpc::internal::RpcMethod("/grpc.health.v1.Health/Check", grpc::internal::RpcMethod::NORMAL_RPC),
      &context, request, &response);
  if (!status.ok()) return Health::kNotServing;
  std::vector<grpc::Slice> slices;
  if (!response.Dump(&slices).ok()) return Health::kNotServing;
  std::string bytes;
  for (const grpc::Slice& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  return bytes == std::string("\x08\x01", 2) ? Health::kServing : Health::kNotServing;
}

}  // namespace

int RunHealth(const std::string& address, int timeout_s, std::ostream& out) {
  const Health health = CheckHealth(address, absl::Seconds(timeout_s));
  out << address << " " << HealthName(health) << "\n";
  return health == Health::kServing ? 0 : 1;
}

namespace {

Health HealthOf(const Member& m) {
  if (!Alive(m.pid, m.exe)) return Health::kDead;
  if (m.address.empty()) return Health::kRunning;
  return CheckHealth(m.address, absl::Seconds(3));
}

Json ToJson(const Cluster& cluster) {
  Json members = Json::array();
  for (const Member& m : cluster.members) {
    members.push_back({{"name", m.name}, {"kind", KindName(m.kind)}, {"address", m.address}, {"pid", m.pid},
                       {"exe", m.exe}, {"log", m.log}});
  }
  return {{"stores", cluster.stores},
          {"optimizer", cluster.optimizer},
          {"profiler", cluster.profiler},
          {"tls_ca", cluster.client.ca},
          {"tls_client_cert", cluster.client.client_cert},
          {"tls_client_key", cluster.client.client_key},
          {"tokens", cluster.tokens},
          {"pki", cluster.pki},
          {"processes", members}};
}

absl::StatusOr<std::optional<Cluster>> ReadCluster(const std::string& dir) {
  std::ifstream in(ClusterFile(dir));
  if (!in) return std::optional<Cluster>();
  Json json = Json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object() || !json.contains("processes")) {
    return absl::DataLossError(absl::StrCat(ClusterFile(dir), " is not a cluster file; stop the processes by hand "
                                            "and remove it"));
  }
  Cluster cluster;
  cluster.stores = json.value("stores", "");
  cluster.optimizer = json.value("optimizer", "");
  cluster.profiler = json.value("profiler", "");
  cluster.client.ca = json.value("tls_ca", "");
  cluster.client.client_cert = json.value("tls_client_cert", "");
  cluster.client.client_key = json.value("tls_client_key", "");
  cluster.tokens = json.value("tokens", false);
  cluster.pki = json.value("pki", "");
  for (const Json& p : json["processes"]) {
    Member m;
    m.name = p.value("name", "");
    std::optional<Kind> kind = KindFromName(p.value("kind", ""));
    if (!kind) return absl::DataLossError(absl::StrCat(ClusterFile(dir), ": unknown process kind"));
    m.kind = *kind;
    m.address = p.value("address", "");
    m.pid = p.value("pid", -1);
    m.exe = p.value("exe", "");
    m.log = p.value("log", "");
    cluster.members.push_back(m);
  }
  return std::optional<Cluster>(cluster);
}

absl::Status WriteCluster(const std::string& dir, const Cluster& cluster) {
  return WriteFileAtomically(ClusterFile(dir), ToJson(cluster).dump(2) + "\n");
}

// Health checks go over TLS when the cluster has it (no token: they are open).
absl::Status ConfigureHealthClient(const Cluster& cluster) { return net::ConfigureClients(cluster.client); }

// SIGTERM to every live process of `group`, up to `timeout` for all to exit, then SIGKILL.
void StopGroup(const std::vector<const Member*>& group, absl::Duration timeout) {
  for (const Member* m : group) {
    if (Alive(m->pid, m->exe)) kill(m->pid, SIGTERM);
  }
  const absl::Time deadline = absl::Now() + timeout;
  for (;;) {
    bool any = false;
    for (const Member* m : group) {
      cluster::PollExit(m->pid);  // reaps it when `up` itself started it
      any = any || Alive(m->pid, m->exe);
    }
    if (!any) return;
    if (absl::Now() > deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  for (const Member* m : group) {
    if (Alive(m->pid, m->exe)) kill(m->pid, SIGKILL);
    cluster::PollExit(m->pid);
  }
}

void StopAll(const std::vector<Member>& members, absl::Duration timeout) {
  for (Kind kind : {Kind::kVerifier, Kind::kOptimizer, Kind::kProfiler, Kind::kStore}) {
    std::vector<const Member*> group;
    for (const Member& m : members) {
      if (m.kind == kind) group.push_back(&m);
    }
    StopGroup(group, timeout);
  }
}

std::vector<std::string> ServerFlags(const net::ServerSecurity& s) {
  std::vector<std::string> flags;
  if (!s.cert.empty()) flags.push_back("--tls_cert=" + Absolute(s.cert));
  if (!s.key.empty()) flags.push_back("--tls_key=" + Absolute(s.key));
  if (!s.client_ca.empty()) flags.push_back("--tls_client_ca=" + Absolute(s.client_ca));
  if (!s.tokens_file.empty()) flags.push_back("--tokens_file=" + Absolute(s.tokens_file));
  return flags;
}

std::vector<std::string> ClientFlags(const net::ClientSecurity& c, const std::string& token_file) {
  std::vector<std::string> flags;
  if (!c.ca.empty()) flags.push_back("--tls_ca=" + Absolute(c.ca));
  if (!c.client_cert.empty()) flags.push_back("--tls_client_cert=" + Absolute(c.client_cert));
  if (!c.client_key.empty()) flags.push_back("--tls_client_key=" + Absolute(c.client_key));
  if (!token_file.empty()) flags.push_back("--token_file=" + Absolute(token_file));
  return flags;
}

// Starts one process detached; a server (its binary writing its port) is waited for until its health check says SERVING, a verifier until
// it has stayed up a moment.
class Launcher {
 public:
  Launcher(std::string dir, absl::Duration timeout) : dir_(std::move(dir)), timeout_(timeout) {}

  absl::StatusOr<Member> Start(const std::string& name, Kind kind, const std::string& binary,
                               std::vector<std::string> args) {
    auto exe = cluster::FindExecutable(binary);
    if (!exe.ok()) return exe.status();
    Member m;
    m.name = name;
    m.kind = kind;
    m.log = absl::StrCat(dir_, "/logs/", name, ".log");
    std::error_code error;
    m.exe = fs::canonical(*exe, error).string();
    if (error) m.exe = *exe;
    const std::string port_file = absl::StrCat(dir_, "/run/", name, ".port");
    const bool server = kind != Kind::kVerifier;
    if (server) {
      unlink(port_file.c_str());
      args.insert(args.begin(), {"--listen=127.0.0.1:0", "--port_file=" + port_file});
    }
    auto pid = cluster::Spawn(*exe, args, m.log, /*detach=*/true);
    if (!pid.ok()) return pid.status();
    m.pid = *pid;
    const absl::Time deadline = absl::Now() + timeout_;
    const absl::Time settled = absl::Now() + absl::Milliseconds(500);
    for (;;) {
      if (auto code = cluster::PollExit(m.pid)) {
        return Failed(m, absl::StrCat("exited (code ", *code, ")"));
      }
      if (server && m.address.empty()) m.address = cluster::LoopbackAddressFromPortFile(port_file).value_or("");
      if (server && !m.address.empty() && CheckHealth(m.address, absl::Seconds(2)) == Health::kServing) return m;
      if (!server && absl::Now() > settled) return m;
      if (absl::Now() > deadline) {
        return Failed(m, absl::StrCat("did not pass its health check within ", absl::FormatDuration(timeout_)));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  // The process that failed, so the caller stops it with the rest.
  const std::optional<Member>& failed() const { return failed_; }

 private:
  absl::Status Failed(const Member& m, const std::string& what) {
    failed_ = m;
    return absl::UnavailableError(
        absl::StrCat(m.name, " ", what, "; last lines of ", m.log, ":\n", cluster::TailFile(m.log, 10)));
  }

  std::string dir_;
  absl::Duration timeout_;
  std::optional<Member> failed_;
};

void PrintUsage(const Cluster& cluster, const ClusterOptions& options, std::ostream& out) {
  for (const Member& m : cluster.members) {
    out << "  " << m.name << "  " << (m.address.empty() ? "-" : m.address) << "  pid " << m.pid << "\n";
  }
  std::string client;
  if (!cluster.client.ca.empty()) client += " --tls-ca " + cluster.client.ca;
  if (!cluster.client.client_cert.empty()) {
    client += " --tls-client-cert " + cluster.client.client_cert + " --tls-client-key " + cluster.client.client_key;
  }
  // The cluster's own tokens are named; a tokens file of the caller's is theirs to hand out.
  auto token_of = [&](const std::string& role) {
    return cluster.pki.empty() ? std::string("YOUR_TOKEN") : absl::StrCat(cluster.pki, "/", role, ".token");
  };
  const std::string token = cluster.tokens ? " --token-file " + token_of("optimize") : "";
  out << "optimize: taso optimize MODEL.onnx -o OUT.onnx --server " << cluster.optimizer << client << token
      << (cluster.tokens && cluster.pki.empty() ? "   (a token with role optimize)" : "") << "\n";
  // The generator processes `taso generate` starts read TLS settings from the environment only.
  std::string env;
  if (!cluster.client.ca.empty()) env += "TASO_TLS_CA=" + cluster.client.ca + " ";
  if (!cluster.client.client_cert.empty()) {
    env += "TASO_TLS_CLIENT_CERT=" + cluster.client.client_cert + " ";
    env += "TASO_TLS_CLIENT_KEY=" + cluster.client.client_key + " ";
  }
  if (cluster.tokens) env += "TASO_TOKEN_FILE=" + token_of("worker") + " ";
  out << "generate: " << env << "taso generate --store " << cluster.stores << " --max-ops 2"
      << (cluster.tokens && cluster.pki.empty() ? "   (a token with role worker)" : "") << "\n";
  if (!cluster.pki.empty()) {
    out << "security: TLS and tokens, the cluster's own CA and a token per role (admin, worker, optimize, read) in "
        << cluster.pki << " (--insecure for plaintext)\n";
  }
  out << "stop:     taso down " << options.dir << "\n";
}

absl::Status CheckOptions(const ClusterOptions& options) {
  if (options.stores < 1) return absl::InvalidArgumentError("--stores must be >= 1");
  if (options.verifiers < 0) return absl::InvalidArgumentError("--verifiers must be >= 0");
  if (options.server.tls() && options.client.ca.empty()) {
    return absl::InvalidArgumentError("with --tls-cert, give --tls-ca: the CA that signed it, which the optimizer, "
                                      "the verifiers and the health checks trust");
  }
  if (!options.server.tokens_file.empty()) {
    if (options.optimizer_token_file.empty()) {
      return absl::InvalidArgumentError("with --tokens-file, give --optimizer-token-file: a token with role optimize "
                                        "the optimizer uses to read rules and measure costs");
    }
    if (options.verifiers > 0 && options.worker_token_file.empty()) {
      return absl::InvalidArgumentError("with --tokens-file, give --worker-token-file: a token with role worker the "
                                        "verifiers use (or --verifiers 0)");
    }
  }
  if (!options.server.client_ca.empty() && options.client.client_cert.empty()) {
    return absl::InvalidArgumentError("with --tls-client-ca, give --tls-client-cert and --tls-client-key: the "
                                      "optimizer's and verifiers' certificate");
  }
  return absl::OkStatus();
}

// The live members of a recorded cluster, or an error that says what to do.
int ReportExisting(const Cluster& cluster, const ClusterOptions& options, std::ostream& out, std::ostream& err) {
  int alive = 0;
  for (const Member& m : cluster.members) alive += Alive(m.pid, m.exe) ? 1 : 0;
  if (alive == 0) return -1;  // stale file: start afresh
  if (alive == static_cast<int>(cluster.members.size())) {
    out << "taso up: already running in " << options.dir << "\n";
    PrintUsage(cluster, options, out);
    return 0;
  }
  err << "taso up: " << alive << " of " << cluster.members.size() << " processes of " << options.dir
      << " are running; `taso status " << options.dir << "` shows which, `taso down " << options.dir
      << "` stops them\n";
  return 1;
}

}  // namespace

int RunUp(const ClusterOptions& raw, std::ostream& out, std::ostream& err) {
  ClusterOptions options = raw;
  options.dir = Absolute(options.dir);
  // Secure by default: with neither TLS nor tokens asked for, the cluster
  // makes its own CA, a certificate per server and a token per role.
  std::optional<net::LocalPki> pki;
  if (!options.server.insecure && !options.server.tls() && options.server.tokens_file.empty()) {
    auto made = net::EnsureLocalPki(options.dir + "/pki", {"store", "profiler", "optimizer"});
    if (!made.ok()) {
      err << "taso up: " << made.status().message() << " (--insecure runs without TLS and tokens)\n";
      return 1;
    }
    pki = *std::move(made);
    options.server.tokens_file = pki->tokens_file;
    options.server.cert = pki->servers.at("store").cert;  // each server gets its own below
    options.server.key = pki->servers.at("store").key;
    options.client = net::ClientSecurity();
    options.client.ca = pki->ca_cert;
    options.optimizer_token_file = pki->token_files.at("optimize");
    options.worker_token_file = pki->token_files.at("worker");
  }
  // Plaintext servers: a TASO_TLS_CA left in the environment must not make
  // the internal clients and the health checks speak TLS to them.
  if (!options.server.tls()) options.client = net::ClientSecurity();
  // The processes get their security by flags only: the caller's own
  // TASO_TLS_* / TASO_TOKEN_FILE (say, an admin token) must not leak into them.
  for (const char* name : {"TASO_TLS_CA", "TASO_TLS_CLIENT_CERT", "TASO_TLS_CLIENT_KEY", "TASO_TOKEN_FILE"}) {
    unsetenv(name);
  }
  if (absl::Status s = CheckOptions(options); !s.ok()) {
    err << "taso up: " << s.message() << "\n";
    return 2;
  }
  auto existing = ReadCluster(options.dir);
  if (!existing.ok()) {
    err << "taso up: " << existing.status().message() << "\n";
    return 1;
  }
  if (existing->has_value()) {
    if (int code = ReportExisting(**existing, options, out, err); code >= 0) return code;
  }
  std::error_code error;
  for (const char* sub : {"/logs", "/run"}) {
    fs::create_directories(options.dir + sub, error);
    if (error) {
      err << "taso up: cannot create " << options.dir << sub << ": " << error.message() << "\n";
      return 1;
    }
  }
  Cluster cluster;
  cluster.client = options.client;
  cluster.client.ca = Absolute(cluster.client.ca);
  cluster.client.client_cert = Absolute(cluster.client.client_cert);
  cluster.client.client_key = Absolute(cluster.client.client_key);
  cluster.client.token_file.clear();
  cluster.tokens = !options.server.tokens_file.empty();
  if (pki) cluster.pki = pki->dir;
  if (absl::Status s = ConfigureHealthClient(cluster); !s.ok()) {
    err << "taso up: " << s.message() << "\n";
    return 2;
  }
  // One certificate per server when the cluster made them.
  auto server_flags = [&](const std::string& service) {
    net::ServerSecurity security = options.server;
    if (pki) {
      security.cert = pki->servers.at(service).cert;
      security.key = pki->servers.at(service).key;
    }
    return ServerFlags(security);
  };
  Launcher launcher(options.dir, absl::Seconds(options.startup_timeout_s));
  auto start = [&](const std::string& name, Kind kind, const std::string& binary,
                   std::vector<std::string> args) -> absl::Status {
    auto m = launcher.Start(name, kind, binary, std::move(args));
    if (!m.ok()) return m.status();
    cluster.members.push_back(*m);
    return absl::OkStatus();
  };
  auto with = [](std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  absl::Status s;
  std::vector<std::string> stores;
  for (int i = 0; i < options.stores && s.ok(); ++i) {
    std::vector<std::string> args = {absl::StrCat("--db=", options.dir, "/store-", i)};
    if (options.stores > 1) {
      args.push_back(absl::StrCat("--store_index=", i));
      args.push_back(absl::StrCat("--store_count=", options.stores));
    }
    s = start(absl::StrCat("store-", i), Kind::kStore, "taso_rules_db", with(args, server_flags("store")));
    if (s.ok()) stores.push_back(cluster.members.back().address);
  }
  cluster.stores = absl::StrJoin(stores, ",");
  if (s.ok()) {
    s = start("profiler", Kind::kProfiler, "taso_profiler",
              with({"--cache_dir=" + options.dir + "/profiler-cache"}, server_flags("profiler")));
    if (s.ok()) cluster.profiler = cluster.members.back().address;
  }
  if (s.ok()) {
    std::vector<std::string> args = {options.rules.empty() ? "--rules_db=" + cluster.stores
                                                           : "--rules=" + Absolute(options.rules),
                                     "--profiler=" + cluster.profiler};
    args = with(with(args, server_flags("optimizer")), ClientFlags(options.client, options.optimizer_token_file));
    s = start("optimizer", Kind::kOptimizer, "taso_optimizer", args);
    if (s.ok()) cluster.optimizer = cluster.members.back().address;
  }
  for (int i = 0; i < options.verifiers && s.ok(); ++i) {
    std::vector<std::string> args = {"--store=" + cluster.stores, "--wait", absl::StrCat("--worker_id=verifier-", i),
                                     "--quiet"};
    s = start(absl::StrCat("verifier-", i), Kind::kVerifier, "taso_verifier",
              with(args, ClientFlags(options.client, options.worker_token_file)));
  }
  if (s.ok()) s = WriteCluster(options.dir, cluster);
  if (!s.ok()) {
    std::vector<Member> started = cluster.members;
    if (launcher.failed()) started.push_back(*launcher.failed());
    StopAll(started, absl::Seconds(options.stop_timeout_s));
    err << "taso up: " << s.message() << "\ntaso up: stopped the " << started.size() << " processes started\n";
    return 1;
  }
  if (options.json) {
    out << JsonLine(ToJson(cluster)) << "\n";
    return 0;
  }
  out << "taso up: " << cluster.members.size() << " processes serving in " << options.dir << " ("
      << ClusterFile(options.dir) << ")\n";
  PrintUsage(cluster, options, out);
  return 0;
}

int RunStatus(const ClusterOptions& raw, std::ostream& out, std::ostream& err) {
  const std::string dir = Absolute(raw.dir);
  auto cluster = ReadCluster(dir);
  if (!cluster.ok()) {
    err << "taso status: " << cluster.status().message() << "\n";
    return 1;
  }
  if (!cluster->has_value()) {
    if (raw.json) out << JsonLine({{"running", false}, {"processes", Json::array()}}) << "\n";
    err << "taso status: no cluster in " << dir << " (not running; start one with `taso up " << raw.dir << "`)\n";
    return 1;
  }
  if (absl::Status s = ConfigureHealthClient(**cluster); !s.ok()) {
    err << "taso status: " << s.message() << "\n";
    return 1;
  }
  bool all = true;
  Json rows = Json::array();
  for (const Member& m : (*cluster)->members) {
    const Health health = HealthOf(m);
    all = all && (health == Health::kServing || health == Health::kRunning);
    if (raw.json) {
      rows.push_back({{"name", m.name}, {"address", m.address}, {"pid", m.pid}, {"state", HealthName(health)}});
    } else {
      out << m.name << "\t" << (m.address.empty() ? "-" : m.address) << "\tpid " << m.pid << "\t"
          << HealthName(health) << "\n";
    }
  }
  if (raw.json) out << JsonLine({{"running", all}, {"processes", rows}}) << "\n";
  return all ? 0 : 1;
}

int RunDown(const ClusterOptions& raw, std::ostream& out, std::ostream& err) {
  const std::string dir = Absolute(raw.dir);
  auto cluster = ReadCluster(dir);
  if (!cluster.ok()) {
    err << "taso down: " << cluster.status().message() << "\n";
    return 1;
  }
  if (!cluster->has_value()) {
    out << "taso down: nothing running in " << dir << "\n";
    return 0;
  }
  const std::vector<Member>& members = (*cluster)->members;
  StopAll(members, absl::Seconds(raw.stop_timeout_s));
  std::vector<std::string> left;
  for (const Member& m : members) {
    if (Alive(m.pid, m.exe)) left.push_back(absl::StrCat(m.name, " (pid ", m.pid, ")"));
  }
  if (!left.empty()) {
    err << "taso down: still running after SIGKILL: " << absl::StrJoin(left, ", ") << "\n";
    return 1;
  }
  unlink(ClusterFile(dir).c_str());
  out << "taso down: stopped " << members.size() << " processes in " << dir << "\n";
  return 0;
}

}  // namespace taso::cli
