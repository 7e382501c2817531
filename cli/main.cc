// `taso`: the one command people type. Subcommands are thin wrappers over the
// libraries; each stage of the pipeline adds its own.
#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "app/command_flags.h"
#include "app/startup.h"
#include "cli/egraph_command.h"
#include "cli/generate_command.h"
#include "cli/job_command.h"
#include "cli/ir_command.h"
#include "cli/optimize_command.h"
#include "cli/profile_command.h"
#include "cli/prune_command.h"
#include "cli/rules_command.h"
#include "cli/up_command.h"
#include "cli/verify_command.h"
#include "costs/backend.h"
#include "net/security_flags.h"
#include "optimizer/passes/numeric_check.h"
#include "profiler/ort/ort_backend.h"
#include "profiler/ort/ort_flags.h"

ABSL_FLAG(std::vector<std::string>, input_shape, {},
          "optimize: the shape to optimize a graph input for, NAME=1x3x224x224 (repeatable); inputs' other symbolic "
          "dimensions are 1");
ABSL_FLAG(uint64_t, seed, 1, "ir: seed of the deterministic input values; optimize: seed of the final "
          "numerical check's random inputs; rules fuzz: seed of shapes and inputs");
ABSL_FLAG(bool, json, false, "print machine-readable JSON (on failure, an error object: code, message, exit_code)");
ABSL_FLAG(bool, quiet, false, "optimize: no progress lines on stderr (-q)");
ABSL_FLAG(int32_t, max_ops, 3, "generate: largest graph size (operators)");
ABSL_FLAG(int32_t, shards, 2, "generate: generator shards (one process each)");
ABSL_FLAG(std::string, store, "", "generate, job, verify, rules: store address(es), comma-separated, every store "
          "shard in any order; default: start local stores");
ABSL_FLAG(std::string, db, "taso-db", "generate: directory of the local stores' databases and logs; verify, rules, "
          "optimize: the local database to read (optimize: only when given)");
ABSL_FLAG(int32_t, store_shards, 1, "generate: local store processes, each owning a slice of fingerprints");
ABSL_FLAG(std::string, spec, "", "generate: generation spec file (text proto); default: TASO's");
ABSL_FLAG(std::string, job, "", "generate: job id; default: derived from spec, size and shards, so a rerun resumes");
ABSL_FLAG(int32_t, max_restarts, 3, "generate: restarts allowed per generator shard");
ABSL_FLAG(int32_t, batch_records, 50000, "generate: records per batch sent to a store");
ABSL_FLAG(std::vector<std::string>, shards_here, {},
          "generate: run only these shards (e.g. 0,2) of a job made by `taso job create`; needs --job and --store");
ABSL_FLAG(int32_t, workers, 2, "verify: taso_verifier processes");
ABSL_FLAG(int32_t, threads, 0, "optimize, profile: the intra-op threads the model will run with; costs are measured "
          "and the result is timed at this count (0: what ONNX Runtime uses here, one per physical core); verify: "
          "prover threads per verifier process (0: 1)");
ABSL_FLAG(int64_t, lease_ms, 30000, "verify: how long a verifier may hold a class without reporting");
ABSL_FLAG(bool, prove_once_per_form, true,
          "verify: prove one candidate pair per form (pairs equal up to renaming their variables) and derive the "
          "others' verdicts from its proof; false: prove every pair (the local store only)");
ABSL_FLAG(bool, prove_from_smaller, true,
          "verify: derive the verdicts of the pairs that follow from a smaller rule of the job (what pruning would "
          "drop as a common subgraph or supergraph) from its proof; false: prove them (the local store only)");
ABSL_FLAG(int64_t, rlimit, 20000000, "verify: Z3 resource limit per proof");
ABSL_FLAG(double, stall_s, -1,
          "verify: a verifier with a Z3 query running this many seconds (Z3 overran its own limits) ends and is "
          "restarted, that class counted as expired (0: never; default: taso_verifier's, 5 minutes)");
ABSL_FLAG(int32_t, max_lease_expiries, -1,
          "verify: the local store gives a class up (its rules stored timeout) once its lease expired this many times "
          "(0: never; default: taso_rules_db's, 3)");
ABSL_FLAG(std::vector<std::string>, status, {}, "rules: statuses to list (proved, pruned, unknown, ...); default proved");
ABSL_FLAG(std::vector<std::string>, op, {}, "rules: only rules using one of these operators");
ABSL_FLAG(std::vector<std::string>, op_all, {}, "rules: only rules using every one of these operators");
ABSL_FLAG(std::vector<std::string>, only_ops, {}, "rules: only rules using no operator but these");
ABSL_FLAG(std::string, pattern, "", "rules: only rules whose side contains this S-expression, variables matching "
          "anything, e.g. '(relu (conv2d ?sh ?sw ?pad 0 ?x ?w))'");
ABSL_FLAG(std::string, side, "either", "rules: the side --pattern looks at: source | target | either");
ABSL_FLAG(std::vector<std::string>, axiom, {}, "rules: only rules whose proof used every one of these axioms");
ABSL_FLAG(int32_t, max_sites, 5, "rules match: places listed per rule (all are counted)");
ABSL_FLAG(bool, structural, false, "rules match: also the rewrites the searches make for the model (bias and "
          "activation fusion, convolution and matmul merges)");
ABSL_FLAG(int32_t, size, 0, "rules: only rules whose larger side has at most this many operators");
ABSL_FLAG(int32_t, limit, 0, "rules list: print at most this many");
ABSL_FLAG(int64_t, union_prune_max_rules, taso::cli::RulesOptions().union_prune_max_rules,
          "rules over several stores: a job verified but not pruned as one set is pruned in memory to be read, up to "
          "this many proved rules (above it: run `taso rules prune` first)");
ABSL_FLAG(int64_t, memory_limit_mb, taso::cli::PruneCommandOptions().memory_limit_mb,
          "rules prune, verify: memory the pruner may use (MiB); it stops with a message rather than pass it");
ABSL_FLAG(int64_t, batch_rules, taso::cli::PruneCommandOptions().batch_rules,
          "rules prune, verify: rules fetched, judged and written back (with a checkpoint) at a time");
ABSL_FLAG(bool, prune, true, "verify: prune the rules as one set when the stores did not (more rules than "
          "taso_rules_db --prune_max_rules, or several store shards; with --memory-limit-mb and --batch-rules); "
          "--noprune leaves it to `taso rules prune`");
ABSL_FLAG(bool, restart, false, "rules prune: start over instead of resuming from the stored checkpoint");
ABSL_FLAG(bool, wait, false, "rules prune --store: wait until --job is verified (DONE on every shard), then prune");
ABSL_FLAG(std::string, format, "sexpr", "rules export: sexpr | json | proto");
ABSL_FLAG(int32_t, instances, taso::verifier::FuzzOptions().instances, "rules fuzz: random instances per rule");
ABSL_FLAG(int64_t, max_dim, taso::verifier::FuzzOptions().max_dim, "rules fuzz: largest sampled dimension");
ABSL_FLAG(int64_t, max_elements, taso::verifier::FuzzOptions().max_elements,
          "rules fuzz: largest tensor of an instance (elements; variables and intermediates)");
ABSL_FLAG(int32_t, attempts, taso::verifier::FuzzOptions().attempts,
          "rules fuzz: shape samples per instance before it counts as not found");
ABSL_FLAG(std::string, against, "", "rules derive: the other rule set (Tensat's converted.txt syntax or ours, or a "
          "RuleCollection .pb/.json)");
ABSL_FLAG(bool, self, false, "rules derive: derive each of our rules from all the others (redundancy)");
ABSL_FLAG(std::string, mode, taso::cli::DeriveCommandOptions().mode,
          "rules derive: lhs (saturate the rule's source) or lhs-and-rhs (both sides)");
ABSL_FLAG(int32_t, iter_limit, taso::cli::DeriveCommandOptions().iter_limit, "rules derive: rounds per rule");
ABSL_FLAG(int32_t, node_limit, taso::cli::DeriveCommandOptions().node_limit, "rules derive: e-nodes per rule");
ABSL_FLAG(double, time_limit_s, taso::cli::DeriveCommandOptions().time_limit_s, "rules derive: seconds per rule");
ABSL_FLAG(bool, kinds_as_declared, false, "rules derive: our weight variables bind only weights and what is computed "
          "from them, as in the optimizer (default: any variable of the rule derived)");
ABSL_FLAG(int32_t, sample, 0, "rules derive: derive only this many rules of the set, spread evenly (0: all)");
ABSL_FLAG(std::string, part, "0/1", "rules derive: I/N derives rules I, I+N, I+2N, ... of the set (after --sample), so "
          "N processes or machines share it; their totals add up");
ABSL_FLAG(std::string, o, "", "rules export, profile cache export: output file (default: stdout)");
ABSL_FLAG(std::string, server, "", "profile: taso_profiler address; optimize: taso_optimizer address; "
          "default: embedded (the library in this process)");
ABSL_FLAG(std::string, search, "backtrack", "optimize: backtrack (TASO) or eqsat (Tensat)");
ABSL_FLAG(double, time_limit, 60, "optimize: search time limit in seconds; egraph extract: the ILP's per file");
ABSL_FLAG(bool, eqsat_backoff, true, "optimize (eqsat): ban rules that match more than their limit in a "
          "round, for growing numbers of rounds; false: apply every rule each round (the cap doubling when cut)");
ABSL_FLAG(int32_t, eqsat_match_limit, 1000, "optimize (eqsat): matches a rule may have in a round at first (before "
          "its first ban; doubles with each ban, or each cut without --eqsat-backoff)");
ABSL_FLAG(int32_t, eqsat_node_limit, 0, "optimize (eqsat): e-nodes the e-graph may grow to before saturation stops "
          "(0: the default, 50,000)");
ABSL_FLAG(int32_t, eqsat_ban_length, 5, "optimize (eqsat): rounds of a rule's first ban (doubles with each ban)");
ABSL_FLAG(std::string, rules, "", "optimize (embedded), rules match, rules derive: rules file from `taso rules export "
          "--format proto -o FILE`; optimize: default the proved size-3 set built into taso, 'none' for structural "
          "rewrites only");
ABSL_FLAG(std::string, profiler, "", "optimize (embedded): taso_profiler address; default: the profiler in-process");
ABSL_FLAG(std::string, cache_dir, "", "profile (embedded): cost cache directory; default ~/.cache/taso/costs; "
          "'none': memory only");
ABSL_FLAG(std::string, backend, "auto", "profile, optimize: where costs are measured: auto (cuda if a GPU, else ort if "
          "ONNX Runtime runs here, else cpu; the report says which and why) | cuda | cpu (oneDNN) | analytic | ort (ONNX "
          "Runtime's CPU kernels through node)");
ABSL_FLAG(std::string, analytic_device, "cpu", "profile: device the analytic backend models (v100, t4, a100, h100, cpu)");
ABSL_FLAG(int32_t, cpu_threads, 0, "profile (embedded): oneDNN threads alone (0: --threads)");
ABSL_FLAG(std::string, calibration, "", "profile, optimize (embedded profiler): the cpu cost model's calibration "
          "JSON (default: the one compiled in, profiler/cpu/calibration/cpu_default.json; 'none': plain kernel sums)");
ABSL_FLAG(bool, bypass_cache, false, "profile: measure even when a cost is cached (and refresh it)");
ABSL_FLAG(int32_t, repetitions, 0, "profile measure: minimum timed runs (0: the profiler's default, 32); "
          "profile graph --measure: minimum timed runs of the whole graph (0: the profiler's default, 10)");
ABSL_FLAG(std::string, device, "", "profile cache: only entries of this device");
ABSL_FLAG(bool, no_measure, false, "optimize: skip the end-to-end measurement of the result against the input's "
          "runtime baseline (never slower; on by default where the backend can run whole graphs)");
ABSL_FLAG(bool, export_baseline, false, "optimize: when the search finds nothing beyond what a runtime does itself, "
          "return that runtime baseline re-exported (constants and batch norms folded, bias and activations fused) "
          "instead of the input byte for byte");
ABSL_FLAG(std::string, target, "onnx", "optimize: the runtime the result is written for: onnx (standard operators "
          "only, any runtime loads it) | ort (also ONNX Runtime's contrib operators, such as com.microsoft FusedGemm; "
          "the result then loads in ONNX Runtime only)");
ABSL_FLAG(std::string, measure_backend, "", "optimize: the backend the never-slower step times the result and the "
          "input on (default: ort, the input and output files in ONNX Runtime, when the costs came from the cpu "
          "backend, else the cost backend; cpu: our oneDNN graph runner)");
ABSL_FLAG(double, min_gain, -1, "optimize: a result predicted, or measured by the never-slower step, faster than the "
          "input's runtime baseline by less than this fraction comes back as the input, byte for byte (default: 0.01 "
          "embedded, the server's with --server; 0 keeps any predicted gain and any result not measured slower)");
ABSL_FLAG(double, measure_tolerance, 0.01, "optimize (embedded), with --min-gain 0: keep the result unless measured "
          "slower than the baseline by more than this fraction (over --server, taso_optimizer's own flag decides)");
ABSL_FLAG(bool, measure, false, "profile graph: also run the whole graph end to end and print its measured time "
          "beside the per-operator sum (cpu backend)");
ABSL_FLAG(std::string, views, "copy", "profile graph --measure: views (split, transpose by strides) of run-time "
          "values run as copies, as ONNX Runtime runs them (copy), or alias their input as in TASO (alias)");
ABSL_FLAG(int32_t, stores, 1, "up: store processes (each a slice of fingerprints, --store_index/--store_count)");
ABSL_FLAG(int32_t, verifiers, 1, "up: taso_verifier processes (--wait on every store)");
ABSL_FLAG(std::string, optimizer_token_file, "", "up, with --tokens-file: token (role optimize) the optimizer "
          "reads rules from the stores and measures costs with");
ABSL_FLAG(std::string, worker_token_file, "", "up, with --tokens-file: token (role worker) the verifiers use");
ABSL_FLAG(int32_t, startup_timeout, 60, "up: seconds each process has to pass its health check");
ABSL_FLAG(int32_t, stop_timeout, 30, "up, down: seconds each group has to exit after SIGTERM before SIGKILL");
ABSL_FLAG(bool, all, false, "profile cache invalidate: every entry matching --backend/--device");
ABSL_FLAG(std::string, svg, "", "rules show: also draw the rule's source and target side by side to this SVG file "
          "(needs Graphviz: deploy/setup.sh)");
ABSL_FLAG(std::string, diff_svg, "", "optimize: draw what the optimizer changed (the regions of IN before and OUT "
          "after) to this SVG file (needs Graphviz: deploy/setup.sh)");
ABSL_FLAG(std::string, dump_egraph, "", "optimize (embedded, --search eqsat): write the costed e-graph to this file "
          "as egraph-serialize JSON, for `taso egraph extract` and other extractors");
ABSL_FLAG(std::string, extractor, "all", "egraph extract: greedy, greedy-dag, sharing, ilp (comma-separated, in that order) "
          "or all");
ABSL_FLAG(int64_t, max_enodes, taso::cli::EGraphCommandOptions().max_nodes,
          "egraph extract: refuse files with more e-nodes than this");
ABSL_FLAG(int64_t, ilp_memory_mb, taso::cli::EGraphCommandOptions().ilp_memory_mb,
          "optimize (embedded, eqsat), egraph extract: memory cap in MiB of the child process that solves the "
          "extraction ILP (over it, the greedy choice is kept and the report says why)");
ABSL_FLAG(int64_t, max_check_mb, taso::optimizer::NumericCheckOptions().max_bytes >> 20,
          "optimize (embedded): refuse models whose numerical check would hold more tensor data than this many "
          "MiB (with --server, taso_optimizer's own flag decides)");
ABSL_FLAG(double, max_check_gflop, taso::optimizer::NumericCheckOptions().max_flops / 1e9,
          "optimize (embedded): refuse models whose numerical check would run more than this many GFLOP per "
          "model run in the interpreter (with --server, taso_optimizer's own flag decides)");
ABSL_FLAG(int64_t, max_model_mb, taso::cli::kEmbeddedMaxModelMb,
          "optimize (embedded): refuse models larger than this many MiB, external data included (with --server, "
          "taso_optimizer's own flag decides)");
ABSL_FLAG(int32_t, diff_svg_max_nodes, 2000, "optimize --diff-svg: nodes drawn at most; regions past it are counted "
          "in the caption, not drawn");

namespace {

using Args = std::vector<std::string>;  // args[0] is taso, args[1] the command, then its arguments

// The flags given on the command line (absl names), from ParseCommandFlags.
std::set<std::string>& GivenFlags() {
  static auto* given = new std::set<std::string>();
  return *given;
}

// Under `bazel run`, relative paths mean the caller's directory.
std::string Resolve(std::string path) {
  const char* cwd = std::getenv("BUILD_WORKING_DIRECTORY");
  if (cwd && !path.empty() && path[0] != '/') path = std::string(cwd) + "/" + path;
  return path;
}

// Whether a flag was given, so a server's own defaults apply otherwise.
bool Given(const char* name) { return GivenFlags().count(name) > 0; }

// --threads for optimize and profile: "" when usable, else why not. It
// names the configuration, so the per-backend counts may not contradict it.
std::string CheckThreadsFlag() {
  const int threads = absl::GetFlag(FLAGS_threads);
  if (threads < 0 || threads > 256) return "--threads must be in 0..256 (0: what ONNX Runtime uses here)";
  if (threads > 0 && (Given("ort_threads") || Given("cpu_threads"))) {
    return "give --threads alone: it sets the ort and cpu backends' thread counts both";
  }
  return "";
}

// --cache-dir, resolved unless it is 'none' (memory only).
std::string CacheDirFlag() {
  const std::string dir = absl::GetFlag(FLAGS_cache_dir);
  return dir == "none" ? dir : Resolve(dir);
}

// --calibration, resolved unless it is 'none' (plain kernel sums).
std::string CalibrationFlag() {
  const std::string file = absl::GetFlag(FLAGS_calibration);
  return file == "none" ? file : Resolve(file);
}

// The --ort_* flags, --threads their count when given (CheckThreadsFlag has
// refused it beside --ort-threads); nullopt after saying what is wrong.
std::optional<taso::profiler::OrtBackendOptions> OrtFlags(const char* command) {
  auto options = taso::profiler::OrtBackendOptionsFromFlags(Resolve);
  if (!options.ok()) {
    std::cerr << "taso " << command << ": " << options.status().message() << "\n";
    return std::nullopt;
  }
  if (absl::GetFlag(FLAGS_threads) > 0) options->threads = absl::GetFlag(FLAGS_threads);
  return *options;
}

// "I/N" as two numbers; false when it is not that.
bool ParsePart(absl::string_view text, int& part, int& parts) {
  std::vector<absl::string_view> pieces = absl::StrSplit(text, '/');
  return pieces.size() == 2 && absl::SimpleAtoi(pieces[0], &part) && absl::SimpleAtoi(pieces[1], &parts);
}

// True, after saying so, when a command that takes no arguments got one.
bool UnexpectedArgument(const Args& args) {
  if (args.size() <= 2) return false;
  std::cerr << "taso " << args[1] << ": unexpected argument '" << args[2] << "'\n";
  return true;
}

int Version(const Args&) {
  std::cout << taso::app::VersionLine("taso") << "\n";
  return 0;
}

int Ir(const Args& args) {
  if (args.size() > 3) {
    std::cerr << "taso ir: expected at most one FILE\n";
    return 2;
  }
  taso::cli::IrCommandOptions options;
  if (args.size() == 3) options.path = args[2];
  options.seed = absl::GetFlag(FLAGS_seed);
  options.json = absl::GetFlag(FLAGS_json);
  absl::Status s = taso::cli::RunIrCommand(options, std::cout);
  if (!s.ok()) {
    std::cerr << "taso ir: " << s.message() << "\n";
    return 1;
  }
  return 0;
}

int Generate(const Args& args) {
  if (UnexpectedArgument(args)) return 2;
  taso::cli::GenerateOptions options;
  options.max_ops = absl::GetFlag(FLAGS_max_ops);
  options.shards = absl::GetFlag(FLAGS_shards);
  for (absl::string_view a : absl::StrSplit(absl::GetFlag(FLAGS_store), ',', absl::SkipEmpty())) {
    options.stores.emplace_back(a);
  }
  options.db = Resolve(absl::GetFlag(FLAGS_db));
  options.store_shards = absl::GetFlag(FLAGS_store_shards);
  options.spec_path = Resolve(absl::GetFlag(FLAGS_spec));
  options.job_id = absl::GetFlag(FLAGS_job);
  options.json = absl::GetFlag(FLAGS_json);
  options.max_restarts = absl::GetFlag(FLAGS_max_restarts);
  options.batch_records = absl::GetFlag(FLAGS_batch_records);
  for (const std::string& shard : absl::GetFlag(FLAGS_shards_here)) {
    int value = 0;
    if (!absl::SimpleAtoi(shard, &value)) {
      std::cerr << "taso generate: --shards-here takes shard numbers, e.g. 0,2; got '" << shard << "'\n";
      return 2;
    }
    options.shards_here.push_back(value);
  }
  return taso::cli::RunGenerate(options, std::cout, std::cerr);
}

int Job(const Args& args) {
  if (args.size() != 3) {
    std::cerr << "taso job: give one subcommand: create, status or cancel\n";
    return 2;
  }
  taso::cli::JobOptions options;
  options.subcommand = args[2];
  options.store = absl::GetFlag(FLAGS_store);
  options.job_id = absl::GetFlag(FLAGS_job);
  options.spec_path = Resolve(absl::GetFlag(FLAGS_spec));
  options.max_ops = absl::GetFlag(FLAGS_max_ops);
  options.shards = absl::GetFlag(FLAGS_shards);
  options.json = absl::GetFlag(FLAGS_json);
  return taso::cli::RunJob(options, std::cout, std::cerr);
}

int Verify(const Args& args) {
  if (UnexpectedArgument(args)) return 2;
  taso::cli::VerifyOptions options;
  options.store = absl::GetFlag(FLAGS_store);
  options.db = Resolve(absl::GetFlag(FLAGS_db));
  options.job_id = absl::GetFlag(FLAGS_job);
  options.workers = absl::GetFlag(FLAGS_workers);
  options.threads = absl::GetFlag(FLAGS_threads) > 0 ? absl::GetFlag(FLAGS_threads) : 1;
  options.lease_ms = absl::GetFlag(FLAGS_lease_ms);
  options.prove_once_per_form = absl::GetFlag(FLAGS_prove_once_per_form);
  options.prove_from_smaller = absl::GetFlag(FLAGS_prove_from_smaller);
  options.rlimit = absl::GetFlag(FLAGS_rlimit);
  options.stall_s = absl::GetFlag(FLAGS_stall_s);
  options.max_lease_expiries = absl::GetFlag(FLAGS_max_lease_expiries);
  options.json = absl::GetFlag(FLAGS_json);
  options.prune = absl::GetFlag(FLAGS_prune);
  options.prune_memory_limit_mb = absl::GetFlag(FLAGS_memory_limit_mb);
  options.prune_batch_rules = absl::GetFlag(FLAGS_batch_rules);
  return taso::cli::RunVerify(options, std::cout, std::cerr);
}

int Rules(const Args& args) {
  if (args.size() < 3) {
    std::cerr << "taso rules: give a subcommand: stats, list, show ID, export, import FILE, fuzz, match MODEL, derive or prune\n";
    return 2;
  }
  if (std::string(args[2]) == "prune") {
    if (args.size() > 3) {
      std::cerr << "taso rules prune: takes no arguments (--job ID chooses the job)\n";
      return 2;
    }
    taso::cli::PruneCommandOptions prune;
    prune.db = Resolve(absl::GetFlag(FLAGS_db));
    prune.store = absl::GetFlag(FLAGS_store);
    prune.job_id = absl::GetFlag(FLAGS_job);
    prune.memory_limit_mb = absl::GetFlag(FLAGS_memory_limit_mb);
    prune.batch_rules = absl::GetFlag(FLAGS_batch_rules);
    prune.restart = absl::GetFlag(FLAGS_restart);
    prune.wait = absl::GetFlag(FLAGS_wait);
    prune.json = absl::GetFlag(FLAGS_json);
    return taso::cli::RunRulesPrune(prune, std::cout, std::cerr);
  }
  taso::cli::RulesOptions options;
  options.subcommand = args[2];
  for (size_t i = 3; i < args.size(); ++i) {
    options.args.emplace_back(options.subcommand == "import" || options.subcommand == "match" ? Resolve(args[i]) : args[i]);
  }
  options.store = absl::GetFlag(FLAGS_store);
  options.db = Resolve(absl::GetFlag(FLAGS_db));
  options.job_id = absl::GetFlag(FLAGS_job);
  options.statuses = absl::GetFlag(FLAGS_status);
  options.ops = absl::GetFlag(FLAGS_op);
  options.ops_all = absl::GetFlag(FLAGS_op_all);
  options.only_ops = absl::GetFlag(FLAGS_only_ops);
  options.pattern = absl::GetFlag(FLAGS_pattern);
  options.side = absl::GetFlag(FLAGS_side);
  options.axioms = absl::GetFlag(FLAGS_axiom);
  options.rules_file = Resolve(absl::GetFlag(FLAGS_rules));
  options.max_sites = absl::GetFlag(FLAGS_max_sites);
  options.structural = absl::GetFlag(FLAGS_structural);
  options.size = absl::GetFlag(FLAGS_size);
  options.limit = absl::GetFlag(FLAGS_limit);
  options.union_prune_max_rules = absl::GetFlag(FLAGS_union_prune_max_rules);
  options.format = absl::GetFlag(FLAGS_format);
  options.output = Resolve(absl::GetFlag(FLAGS_o));
  options.json = absl::GetFlag(FLAGS_json);
  options.svg = Resolve(absl::GetFlag(FLAGS_svg));
  options.fuzz.instances = absl::GetFlag(FLAGS_instances);
  options.fuzz.seed = absl::GetFlag(FLAGS_seed);
  options.fuzz.max_dim = absl::GetFlag(FLAGS_max_dim);
  options.fuzz.max_elements = absl::GetFlag(FLAGS_max_elements);
  options.fuzz.attempts = absl::GetFlag(FLAGS_attempts);
  options.derive.against = Resolve(absl::GetFlag(FLAGS_against));
  options.derive.self = absl::GetFlag(FLAGS_self);
  options.derive.mode = absl::GetFlag(FLAGS_mode);
  options.derive.iter_limit = absl::GetFlag(FLAGS_iter_limit);
  options.derive.node_limit = absl::GetFlag(FLAGS_node_limit);
  options.derive.time_limit_s = absl::GetFlag(FLAGS_time_limit_s);
  options.derive.rules_file = Resolve(absl::GetFlag(FLAGS_rules));
  options.derive.kinds_as_declared = absl::GetFlag(FLAGS_kinds_as_declared);
  options.derive.sample = absl::GetFlag(FLAGS_sample);
  if (!ParsePart(absl::GetFlag(FLAGS_part), options.derive.part, options.derive.parts)) {
    std::cerr << "taso rules derive: --part takes I/N (e.g. 0/4), got '" << absl::GetFlag(FLAGS_part) << "'\n";
    return 2;
  }
  return taso::cli::RunRules(options, std::cout, std::cerr);
}

// The optimizer's options from the optimize flags (one type from flag to
// search: optimizer/optimize_options.h). Returns what a flag got wrong, or
// "" when all became options.
std::string OptimizeOptionsFromFlags(taso::optimizer::OptimizeOptions& o) {
  using taso::profiler::BackendChoices;
  using taso::profiler::BackendFromName;
  const std::string search = absl::GetFlag(FLAGS_search);
  if (search != "backtrack" && search != "eqsat") return "--search is backtrack or eqsat";
  o.set_search(search == "eqsat" ? taso::optimizer::SEARCH_EQSAT : taso::optimizer::SEARCH_BACKTRACK);
  if (!(absl::GetFlag(FLAGS_time_limit) > 0)) return "--time-limit must be > 0 seconds";
  o.set_time_limit_s(absl::GetFlag(FLAGS_time_limit));
  if (Given("eqsat_backoff")) {
    o.set_eqsat_backoff(absl::GetFlag(FLAGS_eqsat_backoff) ? taso::optimizer::EQSAT_BACKOFF_ON
                                                           : taso::optimizer::EQSAT_BACKOFF_OFF);
  }
  if (Given("eqsat_match_limit")) {
    if (absl::GetFlag(FLAGS_eqsat_match_limit) < 1) return "--eqsat-match-limit must be at least 1";
    o.set_eqsat_match_limit(absl::GetFlag(FLAGS_eqsat_match_limit));
  }
  if (Given("eqsat_ban_length")) {
    if (absl::GetFlag(FLAGS_eqsat_ban_length) < 1) return "--eqsat-ban-length must be at least 1";
    o.set_eqsat_ban_length(absl::GetFlag(FLAGS_eqsat_ban_length));
  }
  if (Given("eqsat_node_limit")) {
    if (absl::GetFlag(FLAGS_eqsat_node_limit) < 1) return "--eqsat-node-limit must be at least 1";
    o.set_eqsat_node_limit(absl::GetFlag(FLAGS_eqsat_node_limit));
  }
  for (const std::string& shape : absl::GetFlag(FLAGS_input_shape)) o.add_input_shapes(shape);
  if (std::string bad = CheckThreadsFlag(); !bad.empty()) return bad;
  o.set_threads(absl::GetFlag(FLAGS_threads));
  auto backend = BackendFromName(absl::GetFlag(FLAGS_backend));
  if (!backend) return absl::StrCat("--backend is ", BackendChoices());
  o.set_cost_backend(*backend);
  o.set_seed(absl::GetFlag(FLAGS_seed));
  o.set_skip_measure(absl::GetFlag(FLAGS_no_measure));
  if (!absl::GetFlag(FLAGS_measure_backend).empty()) {
    auto measure_backend = BackendFromName(absl::GetFlag(FLAGS_measure_backend));
    if (!measure_backend) return absl::StrCat("--measure-backend is ", BackendChoices());
    o.set_measure_backend(*measure_backend);
  }
  if (Given("min_gain")) {
    const double gain = absl::GetFlag(FLAGS_min_gain);
    if (!(gain >= 0 && gain < 1)) return "--min-gain must be in [0, 1) (a fraction: 0.01 is 1 %)";
    o.set_min_gain(gain);
  }
  o.set_export_baseline(absl::GetFlag(FLAGS_export_baseline));
  const std::string target = absl::GetFlag(FLAGS_target);
  if (target == "ort") {
    o.set_target(taso::optimizer::EXPORT_TARGET_ORT);
  } else if (target != "onnx") {
    return absl::StrCat("--target is onnx or ort, not '", target, "'");
  }
  return "";
}

int Optimize(const Args& args) {
  taso::cli::OptimizeCommandOptions options;
  if (args.size() > 3) options.extra_argument = args[3];
  if (args.size() >= 3) options.input = Resolve(args[2]);
  options.output = Resolve(absl::GetFlag(FLAGS_o));
  options.server = absl::GetFlag(FLAGS_server);
  options.invalid_flag = OptimizeOptionsFromFlags(options.request);
  options.calibration = CalibrationFlag();
  auto ort = OrtFlags("optimize");
  if (!ort) return 2;
  options.ort = *ort;
  options.threads = absl::GetFlag(FLAGS_threads);
  options.rules = absl::GetFlag(FLAGS_rules) == "none" ? "none" : Resolve(absl::GetFlag(FLAGS_rules));
  options.store = absl::GetFlag(FLAGS_store);
  if (Given("db")) options.db = Resolve(absl::GetFlag(FLAGS_db));
  options.profiler = absl::GetFlag(FLAGS_profiler);
  options.cache_dir = CacheDirFlag();
  options.measure_tolerance = absl::GetFlag(FLAGS_measure_tolerance);
  options.json = absl::GetFlag(FLAGS_json);
  options.quiet = absl::GetFlag(FLAGS_quiet);
  options.diff_svg = Resolve(absl::GetFlag(FLAGS_diff_svg));
  options.diff_svg_max_nodes = absl::GetFlag(FLAGS_diff_svg_max_nodes);
  options.dump_egraph = Resolve(absl::GetFlag(FLAGS_dump_egraph));
  if (Given("ilp_memory_mb")) options.ilp_memory_mb = absl::GetFlag(FLAGS_ilp_memory_mb);
  if (Given("max_check_mb")) options.max_check_mb = absl::GetFlag(FLAGS_max_check_mb);
  if (Given("max_check_gflop")) options.max_check_gflop = absl::GetFlag(FLAGS_max_check_gflop);
  if (Given("max_model_mb")) options.max_model_mb = absl::GetFlag(FLAGS_max_model_mb);
  return taso::cli::RunOptimize(options, std::cout, std::cerr);
}

int EGraph(const Args& args) {
  taso::cli::EGraphCommandOptions options;
  if (args.size() > 2) options.subcommand = args[2];
  for (size_t i = 3; i < args.size(); ++i) options.files.push_back(Resolve(args[i]));
  options.extractors = absl::GetFlag(FLAGS_extractor);
  options.time_limit_s = absl::GetFlag(FLAGS_time_limit);
  options.max_nodes = absl::GetFlag(FLAGS_max_enodes);
  options.ilp_memory_mb = absl::GetFlag(FLAGS_ilp_memory_mb);
  options.json = absl::GetFlag(FLAGS_json);
  return taso::cli::RunEGraph(options, std::cout, std::cerr);
}

int Profile(const Args& args) {
  if (args.size() < 3) {
    std::cerr << "taso profile: give a subcommand: measure SIG..., graph FILE, backends or cache\n";
    return 2;
  }
  taso::cli::ProfileOptions options;
  options.subcommand = args[2];
  for (size_t i = 3; i < args.size(); ++i) {
    const bool file = options.subcommand == "graph" && std::string(args[i]) != "resnet50";
    options.args.emplace_back(file ? Resolve(args[i]) : args[i]);
  }
  options.server = absl::GetFlag(FLAGS_server);
  options.cache_dir = CacheDirFlag();
  options.backend = absl::GetFlag(FLAGS_backend);
  options.analytic_device = absl::GetFlag(FLAGS_analytic_device);
  if (std::string bad = CheckThreadsFlag(); !bad.empty()) {
    std::cerr << "taso profile: " << bad << "\n";
    return 2;
  }
  options.threads = absl::GetFlag(FLAGS_threads);
  options.cpu_threads = absl::GetFlag(FLAGS_cpu_threads) > 0 ? absl::GetFlag(FLAGS_cpu_threads) : options.threads;
  options.calibration = CalibrationFlag();
  auto ort = OrtFlags("profile");
  if (!ort) return 2;
  options.ort = *ort;
  options.bypass_cache = absl::GetFlag(FLAGS_bypass_cache);
  options.repetitions = absl::GetFlag(FLAGS_repetitions);
  options.measure = absl::GetFlag(FLAGS_measure);
  options.views = absl::GetFlag(FLAGS_views);
  options.device = absl::GetFlag(FLAGS_device);
  options.ops = absl::GetFlag(FLAGS_op);
  options.all = absl::GetFlag(FLAGS_all);
  const std::string format = absl::GetFlag(FLAGS_format);
  options.format = format == "sexpr" ? "json" : format;  // sexpr is the rules default
  options.output = Resolve(absl::GetFlag(FLAGS_o));
  options.json = absl::GetFlag(FLAGS_json);
  return taso::cli::RunProfile(options, std::cout, std::cerr);
}

// `taso up|status|down [DIR]`.
template <int (*Run)(const taso::cli::ClusterOptions&, std::ostream&, std::ostream&)>
int Cluster(const Args& args) {
  if (args.size() > 3) {
    std::cerr << "taso " << args[1] << ": expected at most one DIR\n";
    return 2;
  }
  taso::cli::ClusterOptions options;
  options.dir = Resolve(args.size() == 3 ? args[2] : "taso-cluster");
  options.stores = absl::GetFlag(FLAGS_stores);
  options.verifiers = absl::GetFlag(FLAGS_verifiers);
  options.rules = Resolve(absl::GetFlag(FLAGS_rules));
  options.server = taso::net::ServerSecurityFromFlags();
  options.client = taso::net::ClientSecurityFromFlags();
  // The cluster's processes get their tokens from --optimizer/--worker-token-file.
  options.client.token_file.clear();
  options.optimizer_token_file = Resolve(absl::GetFlag(FLAGS_optimizer_token_file));
  options.worker_token_file = Resolve(absl::GetFlag(FLAGS_worker_token_file));
  options.startup_timeout_s = absl::GetFlag(FLAGS_startup_timeout);
  options.stop_timeout_s = absl::GetFlag(FLAGS_stop_timeout);
  options.json = absl::GetFlag(FLAGS_json);
  return Run(options, std::cout, std::cerr);
}

// `taso health ADDRESS`.
int HealthCheck(const Args& args) {
  if (args.size() != 3) {
    std::cerr << "taso health: expected one ADDRESS (HOST:PORT)\n";
    return 2;
  }
  return taso::cli::RunHealth(args[2], absl::GetFlag(FLAGS_startup_timeout), std::cout);
}

// Flag groups several commands take.
using FlagList = std::vector<std::string>;
const FlagList kClientSecurity = {"tls_ca", "tls_client_cert", "tls_client_key", "token_file"};
const FlagList kServerSecurity = {"tls_cert", "tls_key", "tls_client_ca", "tokens_file", "insecure"};
const FlagList kOrt = {"ort_worker", "ort_threads", "ort_level", "ort_weight_mb", "ort_timings", "ort_timeout_s"};
const FlagList kRuleFilters = {"status", "op", "op_all", "only_ops", "pattern", "side", "axiom", "size"};

FlagList Join(std::initializer_list<FlagList> lists) {
  FlagList all;
  for (const FlagList& list : lists) all.insert(all.end(), list.begin(), list.end());
  return all;
}

// One command (or one subcommand: "rules list"): its flags, help and handler.
struct Command {
  std::string name;  // "optimize", "rules list"
  taso::app::CommandFlags flags;
  int (*run)(const Args& args);
};

std::vector<Command> Commands() {
  const FlagList rules_common =
      Join({{"store", "db", "job", "json", "union_prune_max_rules"}, kRuleFilters, kClientSecurity});
  const FlagList profile = Join({{"server", "cache_dir", "backend", "analytic_device", "threads", "cpu_threads", "calibration",
                                  "bypass_cache", "repetitions", "measure", "views", "device", "op", "all", "format",
                                  "o", "json"},
                                 kOrt, kClientSecurity});
  const FlagList cluster = Join({{"stores", "verifiers", "rules", "optimizer_token_file", "worker_token_file",
                                  "startup_timeout", "stop_timeout", "json"},
                                 kServerSecurity, kClientSecurity});
  const FlagList job = Join({{"store", "job", "spec", "max_ops", "shards", "json"}, kClientSecurity});
  auto command = [](std::string name, std::string arguments, std::string summary, FlagList flags,
                    int (*run)(const Args&)) {
    return Command{
        name, {"taso " + name, std::move(arguments), std::move(summary), std::move(flags), {{'o', "o"}, {'q', "quiet"}}},
        run};
  };
  return {
      command("optimize", "IN.onnx -o OUT.onnx",
              "Rewrites an ONNX model into a faster equivalent one.\n"
              "Uses proved rules (by default the size-3 set built into taso), checks the result numerically against\n"
              "the input, and keeps it only if it is not slower than the input as the runtime runs it. Embedded by\n"
              "default; --server sends the model to a taso_optimizer. Progress lines go to stderr (-q: none).\n"
              "Exit codes: 0 optimized, checked and measured not slower, 2 bad flags or input, 3 a server\n"
              "unreachable or busy, 4 OUT is the input unchanged (the report says why), 5 optimized and checked\n"
              "but not measured (analytic or cuda costs, --no-measure: its speed is a prediction), 1 internal error.",
              Join({{"o", "quiet", "server", "search", "time_limit", "eqsat_backoff", "eqsat_match_limit",
                     "eqsat_ban_length", "eqsat_node_limit", "input_shape", "calibration", "rules", "store", "db", "profiler", "cache_dir",
                     "backend", "threads", "seed",
                     "no_measure", "measure_tolerance", "measure_backend", "min_gain", "export_baseline", "target", "json",
                     "diff_svg", "diff_svg_max_nodes", "dump_egraph", "ilp_memory_mb", "max_check_mb", "max_check_gflop", "max_model_mb"},
                    kOrt, kClientSecurity}),
              Optimize),
      command("generate", "",
              "Runs or resumes a generation job (finding candidate rules).\n"
              "Enumerates every graph of up to --max-ops operators over the spec in --shards generator processes and\n"
              "streams their fingerprints into the store(s).\n"
              "taso generate --job ID --shards-here 0,2 --store A,B,C runs some shards of a job made by `taso job create`.",
              Join({{"max_ops", "shards", "store", "db", "store_shards", "spec", "job", "json", "max_restarts",
                     "batch_records", "shards_here"},
                    kClientSecurity}),
              Generate),
      command("verify", "",
              "Proves a generated job's candidates and prunes the rules.\n"
              "Proves the candidate pairs from the operator axioms with Z3 in --workers verifier processes, one\n"
              "pair per form (the others, equal up to renaming their variables, take its proof), prunes the\n"
              "redundant rules (streaming, in --memory-limit-mb, when the stores did not) and prints the reduction\n"
              "table. Resumable.",
              Join({{"store", "db", "job", "workers", "threads", "lease_ms", "prove_once_per_form", "prove_from_smaller",
                     "rlimit", "stall_s", "max_lease_expiries", "prune", "memory_limit_mb", "batch_rules", "json"},
                    kClientSecurity}),
              Verify),
      command("rules stats", "", "Counts the rules by status.", rules_common, Rules),
      command("rules list", "", "Lists rules (default: proved), one per line.", Join({rules_common, {"limit"}}), Rules),
      command("rules show", "ID", "Shows one rule, its proof and side conditions; --svg draws its two sides.",
              Join({rules_common, {"svg"}}), Rules),
      command("rules export", "[-o FILE]",
              "Writes the selected rules to a file or stdout.\n"
              "As S-expressions (Tensat's syntax), JSON or a binary RuleCollection (--format proto, which\n"
              "`taso optimize --rules FILE` reads).",
              Join({rules_common, {"format", "o", "limit"}}), Rules),
      command("rules import", "FILE", "Verifies hand-written rules (Tensat syntax, ?x@2_4) and stores them.",
              rules_common, Rules),
      command("rules fuzz", "",
              "Runs the rules on random instances.\n"
              "Every selected rule (default: proved) at random shapes that keep its side conditions; exit 1 if any\n"
              "instance differs.",
              Join({rules_common, {"instances", "seed", "max_dim", "max_elements", "attempts"}}), Rules),
      command("rules match", "MODEL.onnx", "Which proved rules apply to the model, and where.",
              Join({rules_common, {"rules", "max_sites", "structural", "limit"}}), Rules),
      command("rules derive", "--against FILE | --self",
              "Which rules of another set ours derive.\n"
              "Which rules of FILE (Tensat's converted.txt syntax or ours, or a .pb/.json collection) our rules\n"
              "derive by equality saturation; --self: each of ours from all the others.",
              Join({rules_common, {"against", "self", "mode", "iter_limit", "node_limit", "time_limit_s",
                                   "kinds_as_declared", "sample", "part", "rules"}}),
              Rules),
      command("rules prune", "",
              "Prunes a verified job over every store shard as one set, streaming (size 4), resumable.\n"
              "--db DIR opens the stopped stores' databases; --store A,B,C prunes over gRPC while they serve\n"
              "(an admin token writes the statuses); --wait waits for --job to be verified first.",
              Join({{"db", "store", "job", "wait", "memory_limit_mb", "batch_rules", "restart", "json"},
                    kClientSecurity}),
              Rules),
      command("profile measure", "SIG...",
              "Measures operator signatures.\n"
              "A signature is e.g. 'conv2d[stride=1x1,pad=same,act=relu](f32[1,64,56,56],f32[64,64,3,3])'.",
              profile, Profile),
      command("profile graph", "FILE|resnet50",
              "Costs a whole graph per operator; --measure also runs it end to end.", profile, Profile),
      command("profile backends", "", "Lists the cost backends and whether each is available here.", profile, Profile),
      command("profile memory", "", "How reads slow down past the last-level cache (the weight term).", profile,
              Profile),
      command("profile cache", "list|export|invalidate [SIG...]", "Reads or invalidates the cost cache.", profile,
              Profile),
      command("job create", "", "Creates a generation job that several machines share.", job, Job),
      command("job status", "", "Shows a shared job's progress.", job, Job),
      command("job cancel", "", "Cancels a shared job.", job, Job),
      command("egraph extract", "FILE.json...",
              "Extracts programs from e-graph files.\n"
              "E-graphs in egraph-serialize JSON (ours from --dump-egraph, or anyone's): tree and DAG cost, time,\n"
              "and what the ILP proved (its bound and gap).",
              {"extractor", "time_limit", "max_enodes", "ilp_memory_mb", "json"}, EGraph),
      command("up", "[DIR]",
              "Starts the services as a local cluster.\n"
              "In DIR (default ./taso-cluster): stores, profiler, optimizer and verifiers as background processes,\n"
              "health-checked, recorded in DIR/cluster.json. TLS and tokens by default: without --tls-cert and\n"
              "--tokens-file the cluster gets its own CA, certificates and a token per role in DIR/pki (files\n"
              "0600); --insecure runs it in plaintext without tokens.",
              cluster, Cluster<taso::cli::RunUp>),
      command("status", "[DIR]", "Health of each process of a local cluster; exit 0 when all serve.",
              Join({{"json"}, kClientSecurity}), Cluster<taso::cli::RunStatus>),
      command("down", "[DIR]", "Stops a local cluster (verifiers, optimizer, profiler, then stores).",
              {"stop_timeout", "json"}, Cluster<taso::cli::RunDown>),
      command("health", "ADDRESS", "One server's gRPC health check (a Kubernetes exec probe); exit 0 SERVING.",
              Join({{"startup_timeout"}, kClientSecurity}), HealthCheck),
      command("ir", "[FILE]",
              "Shows the IR path every stage shares on one graph.\n"
              "Validates a graph (taso.ir.Graph text proto; default: an embedded example) and prints its canonical\n"
              "form, structural hash, fingerprint and float outputs.",
              {"seed", "json"}, Ir),
      command("version", "", "Prints the version.", {}, Version),
  };
}

// The command word and, for commands with subcommands, the subcommand word.
std::string GroupOf(const std::string& name) { return name.substr(0, name.find(' ')); }

void PrintOverview(std::ostream& out) {
  out << "usage: taso <command> [arguments] [flags]\n\n"
         "taso is a graph superoptimizer for ONNX models: it rewrites a model with proved rules into a faster\n"
         "equivalent one. Commands:\n";
  for (const Command& c : Commands()) {
    const std::string first_line = c.flags.summary.substr(0, c.flags.summary.find('\n'));
    out << absl::StrFormat("  %-18s %s\n", c.name, first_line);
  }
  out << "\n`taso COMMAND --help` lists a command's flags. Flags are spelled with dashes (--time-limit).\n";
}

// A refused command line: the reason and the usage line on stderr (and, with
// --json, the error object on stdout); exit 2.
int UsageError(const taso::app::CommandFlags& command, const std::string& error, bool json) {
  std::cerr << command.command << ": " << error << "\n" << taso::app::UsageLine(command) << "\n";
  if (json) std::cout << taso::app::ErrorJson(absl::StatusCode::kInvalidArgument, error, 2) << "\n";
  return 2;
}

// `taso`, `taso --help`, `taso help [COMMAND...]`, `taso --version`: exit code, or nullopt to go on.
std::optional<int> TopLevel(const std::vector<std::string>& words) {
  if (words.empty()) {
    PrintOverview(std::cerr);
    return 2;
  }
  const std::string& first = words[0];
  if (first == "--version" || first == "-V") return Version({});
  if (first == "-h" || first == "--help" || first == "-help") {
    PrintOverview(std::cout);
    return 0;
  }
  if (first != "help") return std::nullopt;
  if (words.size() == 1) {
    PrintOverview(std::cout);
    return 0;
  }
  std::string asked = words[1];
  if (words.size() > 2) asked += " " + words[2];
  for (const Command& c : Commands()) {
    if (c.name == asked || (GroupOf(c.name) == asked && c.name != asked)) {
      std::cout << taso::app::CommandHelp(c.flags);
      if (c.name == asked) return 0;
    }
  }
  std::cerr << "taso help: unknown command '" << asked << "'\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  // `taso rules list | head` closes the pipe early: a write then fails
  // instead of killing taso before it stops the local store it started.
  signal(SIGPIPE, SIG_IGN);
  const std::vector<std::string> words(argv + 1, argv + argc);
  if (std::optional<int> done = TopLevel(words)) return *done;
  const std::vector<Command> commands = Commands();
  const std::string group = words[0];
  std::vector<const Command*> in_group;
  for (const Command& c : commands) {
    if (GroupOf(c.name) == group) in_group.push_back(&c);
  }
  if (in_group.empty()) {
    std::cerr << "taso: unknown command '" << group << "'\n\n";
    PrintOverview(std::cerr);
    return 2;
  }
  // A command with subcommands takes the subcommand as its next word.
  const Command* command = in_group.front();
  size_t first_argument = 1;
  if (in_group.size() > 1 || command->name != group) {
    const std::string sub = words.size() > 1 ? words[1] : "";
    command = nullptr;
    for (const Command* c : in_group) {
      if (c->name == group + " " + sub) command = c;
    }
    if (command == nullptr) {
      const bool help = sub == "-h" || sub == "--help" || sub == "-help";
      std::ostream& out = help ? std::cout : std::cerr;
      if (!help) out << "taso " << group << ": " << (sub.empty() ? "give a subcommand" : "unknown subcommand '" + sub + "'") << "\n";
      out << "subcommands:\n";
      for (const Command* c : in_group) out << "  " << taso::app::UsageLine(c->flags).substr(7) << "\n";
      return help ? 0 : 2;
    }
    first_argument = 2;
  }
  const taso::app::ParsedCommand parsed = taso::app::ParseCommandFlags(
      command->flags, std::vector<std::string>(words.begin() + first_argument, words.end()));
  switch (parsed.outcome) {
    case taso::app::ParseOutcome::kHelp:
      std::cout << taso::app::CommandHelp(command->flags);
      return 0;
    case taso::app::ParseOutcome::kError:
      return UsageError(command->flags, parsed.error,
                        std::find(words.begin(), words.end(), "--json") != words.end());
    case taso::app::ParseOutcome::kRun:
      break;
  }
  GivenFlags() = parsed.given;
  if (absl::Status s = taso::net::ConfigureClientsFromFlags(); !s.ok()) return taso::app::Error(s.message(), 2);
  Args args = {"taso", group};
  if (first_argument == 2) args.push_back(words[1]);
  args.insert(args.end(), parsed.positional.begin(), parsed.positional.end());
  return command->run(args);
}
