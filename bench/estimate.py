#!/usr/bin/env python3
"""Plans a rule-discovery job before it is launched: graphs, candidate pairs, proofs, rules, disk,
memory and hours for MAX_OPS at a given cluster size, and the Kubernetes settings (shards, store
count, verifier replicas, storage) that follow, as a kustomize overlay.

What it runs (every figure is measured by the real pipeline on this machine, then scaled):
  - full runs at MAX_OPS-2 and MAX_OPS-1 (`taso generate` + `taso verify`): counts, CPU, disk, RSS;
  - a sample at MAX_OPS: K shards of a job of N generator shards (`taso job create` + `taso
    generate --shards-here`) into a real store, then the same K shards of a job of N/2 (about twice
    the graphs, the same walks), so the per-graph cost is separated from the walk every shard makes
    down to the split depth.
How it scales (docs/cluster.md, "Planning a job"):
  - graphs(n) = sampled graphs * N / K + graphs(n-2): a shard holds every N-th subtree at the split
    depth (n-1) and the graphs below it; the shallower graphs are exactly the size-(n-2) run's;
  - pairs per graph keep growing by the step they grew from n-2 to n-1; renamings, proofs, rules
    and the pruned rules per pair by the factor (fractions are capped at 1);
  - generation core-seconds per graph and disk bytes per graph come from the sample; verification
    core-seconds per proof from the size-(n-1) run, grown as from n-2 to n-1 when that run was long
    enough for fixed start-up costs not to dominate.
With --check the full MAX_OPS run is made too (or read from WORK) and each estimate's error printed.

  bench/estimate.py --max-ops 5 [--spec FILE] [--machines M --cores C] [--overlay DIR] [--work DIR]
  bench/estimate.py --plan-only MEASURED.json ...   plans from saved measurements (no runs; see --json)
TASO=path/to/cli/taso uses that build (taso_rules_db, taso_generator, taso_verifier in ../bin).
"""
import argparse
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time

PROCESS_NAMES = ("taso", "taso_rules_db", "taso_generator", "taso_verifier")
GIB = 1 << 30


def log(message):
    print(f"estimate: {message}", file=sys.stderr, flush=True)


class Sampler:
    """Samples, every `period` seconds, the summed RSS of the pipeline's processes, the largest
    single one, the CPU each store process has used (and had used at the last sample a generator
    was running: what is left after it is the job's finalization), and the size of `directory`."""

    def __init__(self, directory, period=1.0):
        self.directory, self.period = directory, period
        self.peak_rss = self.peak_process_rss = self.peak_store_rss = self.peak_disk = 0
        self.store_cpu = {}  # pid -> core-seconds last seen
        self.store_cpu_while_generating = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()  # a run shorter than a period still counts

    def _run(self):
        while not self._stop.wait(self.period):
            self._sample()

    def _sample(self):
        page = os.sysconf("SC_PAGE_SIZE")
        stats = {}
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                stats[pid] = read_stat(pid)
            except OSError:
                continue
        total = 0
        generating = False
        for pid, (name, fields) in stats.items():
            # Only this process's descendants: another job on the machine is not this one's.
            if name not in PROCESS_NAMES or not descends_from(pid, stats, str(os.getpid())):
                continue
            rss = int(fields[21]) * page
            total += rss
            self.peak_process_rss = max(self.peak_process_rss, rss)
            generating = generating or name == "taso_generator"
            if name == "taso_rules_db":
                self.peak_store_rss = max(self.peak_store_rss, rss)
                self.store_cpu[pid] = cpu_seconds(fields)
        if generating:
            self.store_cpu_while_generating = sum(self.store_cpu.values())
        self.peak_rss = max(self.peak_rss, total)
        self.peak_disk = max(self.peak_disk, disk_bytes(self.directory))


def descends_from(pid, stats, ancestor):
    for _ in range(64):
        if pid == ancestor:
            return True
        if pid not in stats:
            return False
        pid = stats[pid][1][1]  # the parent's pid
    return False


def disk_bytes(directory):
    total = 0
    for parent, _, files in os.walk(directory):
        for name in files:
            try:
                total += os.lstat(os.path.join(parent, name)).st_size
            except OSError:
                pass
    return total


def read_stat(pid):
    """A live process's name and the fields of /proc/PID/stat after it (state first)."""
    with open(f"/proc/{pid}/stat") as f:
        stat = f.read()
    return stat[stat.index("(") + 1:stat.rindex(")")], stat[stat.rindex(")") + 2:].split()


def cpu_seconds(fields):
    """Core-seconds (user + system) from read_stat's fields."""
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_cpu(pid):
    """Core-seconds a live process has used."""
    return cpu_seconds(read_stat(pid)[1])


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_json(command):
    """Runs a taso command with --json; returns its summary, wall seconds and CPU core-seconds of
    its whole process tree (the processes it starts are reaped by it, so they count)."""
    cpu0, t0 = children_cpu(), time.time()
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall, cpu = time.time() - t0, children_cpu() - cpu0
    if done.returncode != 0:
        sys.exit(f"estimate: {' '.join(command)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return json.loads(lines[-1]), wall, cpu


class Pipeline:
    def __init__(self, taso, spec, work):
        self.taso, self.spec, self.work = taso, spec, work
        self.bin = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(taso))), "bin")

    def spec_flags(self):
        return ["--spec", self.spec] if self.spec else []

    def full_run(self, max_ops, shards, workers):
        """One size end to end on this machine, as `taso generate` and `taso verify` run it."""
        db = os.path.join(self.work, f"full{max_ops}")
        shutil.rmtree(db, ignore_errors=True)
        with Sampler(self.work) as sampler:
            gen, gen_wall, gen_cpu = run_json([self.taso, "generate", "--max-ops", str(max_ops), "--shards",
                                               str(shards), "--db", db, "--json"] + self.spec_flags())
            store_gen_cpu = sum(sampler.store_cpu.values())
            # The store's CPU once the generators are gone: the job's finalization (re-checking
            # every class), which a sample's shards never reach (their job is not complete).
            store_finalize_cpu = max(0.0, store_gen_cpu - sampler.store_cpu_while_generating)
            sampler.store_cpu.clear()
            ver, ver_wall, ver_cpu = run_json([self.taso, "verify", "--db", db, "--workers", str(workers),
                                               "--json"])
            if ver["proved"] > 0 and ver["after_common_subgraph"] == 0:
                # Above --prune_max_rules the store leaves pruning to `taso rules prune`, which streams.
                pruned, prune_wall, prune_cpu = run_json([self.taso, "rules", "prune", "--db", db, "--json"])
                ver.update(after_renaming=pruned["after_renaming"], after_common_subgraph=pruned["after_common_subgraph"])
                ver_wall, ver_cpu = ver_wall + prune_wall, ver_cpu + prune_cpu
        shutil.rmtree(db, ignore_errors=True)
        return {
            "max_ops": max_ops, "graphs": gen["graphs"], "distinct_fingerprints": gen["distinct_fingerprints"],
            # Pairs not leased: renamings of a form proved, and (since 2026-12-06) instances of a more general one,
            # and (since 2026-12-07) first pairs of forms that follow from a smaller rule.
            "candidate_pairs": gen["candidate_pairs"],
            "renaming_pairs": gen.get("renaming_pairs", 0) + gen.get("instance_pairs", 0)
            + gen.get("from_smaller_rule_pairs", 0),
            "proved": ver["proved"], "unknown": ver["unknown"], "after_renaming": ver["after_renaming"],
            "after_common_subgraph": ver["after_common_subgraph"],
            "generate_wall_s": round(gen_wall, 2), "generate_cpu_s": round(gen_cpu, 2),
            "store_generate_cpu_s": round(store_gen_cpu, 2), "store_finalize_cpu_s": round(store_finalize_cpu, 2),
            "verify_wall_s": round(ver_wall, 2), "verify_cpu_s": round(ver_cpu, 2),
            "peak_rss_bytes": sampler.peak_rss, "peak_process_rss_bytes": sampler.peak_process_rss,
            "peak_store_rss_bytes": sampler.peak_store_rss,
            "peak_disk_bytes": sampler.peak_disk, "cores": os.cpu_count(),
        }

    def sample(self, max_ops, jobs):
        """For each (of_shards, shards) in `jobs`, runs those shards of a size-`max_ops` job of
        `of_shards` shards into a fresh store, one job after the other; returns per job the graphs
        its shards enumerated, their CPU (with the store's), the store's own CPU and its disk."""
        results = []
        for of_shards, shards in jobs:
            db = os.path.join(self.work, "sample")
            shutil.rmtree(db, ignore_errors=True)
            os.makedirs(db)
            port_file = os.path.join(db, "port")
            with Sampler(db) as sampler:
                cpu0 = children_cpu()
                # The store logs a line per call: to a file, as a pipe nobody reads would fill and stall it.
                store_log = open(os.path.join(self.work, "sample-store.log"), "w")
                store = subprocess.Popen([os.path.join(self.bin, "taso_rules_db"), "--db", os.path.join(db, "store"),
                                          "--listen", "127.0.0.1:0", "--port_file", port_file],
                                         stdout=subprocess.DEVNULL, stderr=store_log)
                for _ in range(300):
                    if os.path.exists(port_file) and open(port_file).read().strip():
                        break
                    time.sleep(0.1)
                address = "127.0.0.1:" + open(port_file).read().strip()
                try:
                    subprocess.run([self.taso, "job", "create", "--store", address, "--max-ops", str(max_ops),
                                    "--shards", str(of_shards), "--job", "sample"] + self.spec_flags(),
                                   check=True, stdout=subprocess.DEVNULL)
                    gen, wall, _ = run_json([self.taso, "generate", "--job", "sample", "--store", address,
                                             "--shards-here", ",".join(map(str, shards)), "--json"])
                    store_cpu = process_cpu(store.pid)
                finally:
                    store.terminate()
                    store.wait()
                    store_log.close()
                cpu = children_cpu() - cpu0
            results.append({"of_shards": of_shards, "shards": shards, "graphs": gen["graphs_enumerated_here"],
                            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
                            "store_cpu_s": round(store_cpu, 2), "peak_disk_bytes": sampler.peak_disk})
            shutil.rmtree(db, ignore_errors=True)
        return results


def stepped(at_n1, at_n2):
    """The value at n from n-1 and n-2, growing by the same difference again (never below n-1's
    value times n-1's over n-2's when that shrinks it, nor below 0)."""
    value = 2 * at_n1 - at_n2
    if value < at_n1:
        value = grown(at_n1, at_n2)
    return max(value, 0.0)


def grown(at_n1, at_n2, cap=None):
    """The value at n from n-1 and n-2, growing by the same factor again."""
    if at_n2 <= 0 or at_n1 <= 0:
        return at_n1
    value = at_n1 * at_n1 / at_n2
    return min(value, cap) if cap is not None else value


def estimate(measured):
    """The size-n figures on one core-second scale, from `measured`: the full runs of sizes n-2 and
    n-1 and the sample of size n, as main() collects them (runs.json)."""
    n2, n1, sample = measured["full"][0], measured["full"][1], measured["sample"]
    a, b = sample["runs"]
    ka, kb = len(a["shards"]), len(b["shards"])
    # Each run alone estimates the graphs of sizes n-1 and n (its shards hold 1/of_shards of the
    # subtrees each); the smaller graphs are exactly size n-2's.
    graphs = (a["graphs"] * a["of_shards"] / ka + b["graphs"] * b["of_shards"] / kb) / 2 + n2["graphs"]
    # cpu = shards * walk + graphs * per_graph: the runs have the same shards, and the second about
    # twice the graphs (its job has half as many shards), so the two unknowns separate.
    det = ka * b["graphs"] - kb * a["graphs"]
    per_graph = (ka * b["cpu_s"] - kb * a["cpu_s"]) / det if det else 0
    if per_graph <= 0:  # the runs did not separate the costs: charge the walk to the graphs
        per_graph = (a["cpu_s"] + b["cpu_s"]) / (a["graphs"] + b["graphs"])
    walk = max(0.0, (a["cpu_s"] - a["graphs"] * per_graph) / ka)
    disk_per_graph = max(a["peak_disk_bytes"] / max(a["graphs"], 1), b["peak_disk_bytes"] / max(b["graphs"], 1))

    def per(run, key, base="graphs"):
        return run[key] / run[base] if run[base] else 0

    # Pairs per graph grow by the same step again (by the same factor overshot: +20% on the matmul
    # family's size 5, +27% on the default spec's size 4; the step: -1.5% and +17%).
    pairs = graphs * stepped(per(n1, "candidate_pairs"), per(n2, "candidate_pairs"))
    fractions = {key: grown(per(n1, key, "candidate_pairs"), per(n2, key, "candidate_pairs"), cap=1.0)
                 for key in ("renaming_pairs", "proved", "unknown", "after_renaming", "after_common_subgraph")}
    proofs = pairs * (1 - fractions["renaming_pairs"])
    n1_proofs = max(n1["candidate_pairs"] - n1["renaming_pairs"], 1)
    n2_proofs = max(n2["candidate_pairs"] - n2["renaming_pairs"], 1)
    per_proof = n1["verify_cpu_s"] / n1_proofs
    per_proof_growth = 1.0
    if n2["verify_cpu_s"] >= 10:
        per_proof_growth = per_proof / (n2["verify_cpu_s"] / n2_proofs)
    # Finalization (after the last shard, in the stores) per graph as at size n-1; runs recorded
    # before it was measured have none, and their estimate leaves it out. The stores' share of
    # the streaming alone sets how many stores ingest needs.
    finalize = n1.get("store_finalize_cpu_s", 0.0)
    streaming = n1["generate_cpu_s"] - finalize
    store_share = (n1["store_generate_cpu_s"] - finalize) / streaming if streaming > 0 else 0
    return {
        "max_ops": n1["max_ops"] + 1,
        "graphs": graphs,
        "candidate_pairs": pairs,
        "proofs": proofs,
        "proved": pairs * fractions["proved"],
        "unknown": pairs * fractions["unknown"],
        "after_renaming": pairs * fractions["after_renaming"],
        "after_common_subgraph": pairs * fractions["after_common_subgraph"],
        "generate_core_s": graphs * per_graph,  # and each shard's walk (plan())
        "generate_core_s_per_graph": per_graph,
        "finalize_core_s": graphs * per(n1, "store_finalize_cpu_s") if finalize else 0.0,
        "walk_core_s_per_shard": walk,
        "store_share_of_generation": store_share,
        "verify_core_s": proofs * per_proof * per_proof_growth,
        "verify_core_s_per_proof": per_proof * per_proof_growth,
        "peak_disk_bytes": graphs * disk_per_graph,
        "store_peak_rss_bytes": n1.get("peak_store_rss_bytes", n1["peak_process_rss_bytes"]),
    }


def plan(est, machines, cores, volume_gib, shard_core_hours):
    """Cluster settings for `est` on `machines` x `cores`: the stores take the first cores."""
    total_cores = machines * cores
    disk_gib = est["peak_disk_bytes"] / GIB
    # Stores: enough that each holds at most a volume, and that their ingest (the store's share of
    # generation CPU at this size) needs at most one core each while every other core generates.
    by_disk = math.ceil(disk_gib * 1.3 / volume_gib)
    by_ingest = math.ceil(total_cores * est["store_share_of_generation"])
    stores = max(1, by_disk, by_ingest)
    if stores >= total_cores:
        stores = max(1, total_cores // 2)
    workers = total_cores - stores
    # Shards: a retried shard repeats at most shard_core_hours; at least 4 per generator so the last
    # ones to finish are short, and a multiple of the generators so each runs the same count.
    shards = max(4 * workers, math.ceil(est["generate_core_s"] / 3600 / shard_core_hours))
    shards = math.ceil(shards / workers) * workers
    walk_s = est["walk_core_s_per_shard"] * shards  # every shard walks to the split depth
    # Then each store finalizes its slice on 2 threads (taso_rules_db --finalize_threads).
    finalize_h = est.get("finalize_core_s", 0.0) / (stores * min(2, cores)) / 3600
    generate_h = (est["generate_core_s"] + walk_s) / workers / 3600 + finalize_h
    verify_h = est["verify_core_s"] / workers / 3600
    storage_gib = max(5, math.ceil(disk_gib * 1.5 / stores))
    return {
        "machines": machines, "cores_per_machine": cores, "stores": stores, "store_reasons":
            {"disk": by_disk, "ingest": by_ingest}, "generator_parallelism": workers, "shards": shards,
        "verifier_replicas": workers, "storage_per_store_gib": storage_gib,
        "store_memory_gib": max(8, math.ceil(est["store_peak_rss_bytes"] * 1.5 / GIB)),  # the workloads: 8Gi
        "generate_hours": generate_h, "finalize_hours": finalize_h, "verify_hours": verify_h, "total_hours": generate_h + verify_h,
    }


def overlay(settings, est, directory, base):
    """A kustomize overlay over deploy/k8s/base (secure: TLS and tokens, docs/security.md) with the
    plan's settings, in namespace taso."""
    os.makedirs(directory, exist_ok=True)
    resources = os.path.relpath(base, directory)
    memory = settings["store_memory_gib"]
    stores = ",".join(f"taso-store-{i}.taso-store:7070" for i in range(settings["stores"]))
    text = f"""# Planned by bench/estimate.py for size {est['max_ops']}: {est['graphs']:.3g} graphs, \
{est['candidate_pairs']:.3g} pairs,
# {settings['generate_hours']:.1f} h generation + {settings['verify_hours']:.1f} h verification on \
{settings['machines']} x {settings['cores_per_machine']} cores.
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: taso
resources:
  - {resources}
configMapGenerator:
  - name: taso-config
    behavior: merge
    literals:
      - JOB_ID=size{est['max_ops']}
      - MAX_OPS={est['max_ops']}
      - SHARDS={settings['shards']}
      - STORE_COUNT={settings['stores']}
      - STORES={stores}
patches:
  - target: {{kind: Job, name: taso-generate}}
    patch: |-
      - op: replace
        path: /spec/completions
        value: {settings['shards']}
      - op: replace
        path: /spec/parallelism
        value: {settings['generator_parallelism']}
  - target: {{kind: Deployment, name: taso-verifier}}
    patch: |-
      - op: replace
        path: /spec/replicas
        value: {settings['verifier_replicas']}
  - target: {{kind: StatefulSet, name: taso-store}}
    patch: |-
      - op: replace
        path: /spec/replicas
        value: {settings['stores']}
      - op: replace
        path: /spec/volumeClaimTemplates/0/spec/resources/requests/storage
        value: {settings['storage_per_store_gib']}Gi
      - op: replace
        path: /spec/template/spec/containers/0/resources/limits/memory
        value: {memory}Gi
"""
    with open(os.path.join(directory, "kustomization.yaml"), "w") as f:
        f.write(text)


def quantity(value, unit=""):
    for limit, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= limit:
            return f"{value / limit:.3g}{suffix}{unit}"
    return f"{value:.3g}{unit}"


def report(est, settings, truth=None, truth_cores=None):
    rows = [
        ("graphs", est["graphs"], "graphs", quantity),
        ("candidate pairs", est["candidate_pairs"], "candidate_pairs", quantity),
        ("proofs (pairs not renamings)", est["proofs"], None, quantity),
        ("proved", est["proved"], "proved", quantity),
        ("rules after renaming", est["after_renaming"], "after_renaming", quantity),
        ("rules after common subgraph", est["after_common_subgraph"], "after_common_subgraph", quantity),
        ("peak disk", est["peak_disk_bytes"], "peak_disk_bytes", lambda v: quantity(v, "B")),
        ("generation core-hours, 2 shards",
         (est["generate_core_s"] + 2 * est["walk_core_s_per_shard"] + est.get("finalize_core_s", 0.0)) / 3600,
         "generate_core_h", lambda v: f"{v:.3g}"),
        ("verification core-hours", est["verify_core_s"] / 3600, "verify_core_h", lambda v: f"{v:.3g}"),
    ]
    print(f"size {est['max_ops']}, estimated{' (measured beside it)' if truth else ''}:")
    for label, value, key, fmt in rows:
        line = f"  {label:30s} {fmt(value):>10s}"
        if truth and key and truth.get(key):
            line += f"   measured {fmt(truth[key]):>10s}   error {100 * (value - truth[key]) / truth[key]:+.1f}%"
        print(line)
    print(f"  per graph {est['generate_core_s_per_graph'] * 1e6:.2f} core-us to generate, "
          f"per proof {est['verify_core_s_per_proof'] * 1e3:.2f} core-ms to verify; "
          f"walk to the split depth {est['walk_core_s_per_shard']:.1f} core-s per shard; "
          + (f"finalizing {est['finalize_core_s'] / max(est['graphs'], 1) * 1e6:.2f} core-us per graph"
             if est.get("finalize_core_s") else "finalization not measured (a run recorded before it was)"))
    s = settings
    print(f"on {s['machines']} machine(s) x {s['cores_per_machine']} cores: {s['stores']} store(s) "
          f"(disk needs {s['store_reasons']['disk']}, ingest {s['store_reasons']['ingest']}), "
          f"{s['shards']} shards at parallelism {s['generator_parallelism']}, {s['verifier_replicas']} verifier "
          f"replicas, {s['storage_per_store_gib']} GiB and {s['store_memory_gib']} GiB of memory per store")
    print(f"  generation {s['generate_hours']:.2f} h (finalizing {s.get('finalize_hours', 0):.2f} h of it) + "
          f"verification {s['verify_hours']:.2f} h = "
          f"{s['total_hours']:.2f} h wall")
    if truth and truth_cores:
        hours = (truth["generate_wall_s"] + truth["verify_wall_s"]) / 3600
        print(f"  measured on this machine ({truth_cores} cores): {hours:.2f} h wall")


def truth_of(run):
    return dict(run, generate_core_h=run["generate_cpu_s"] / 3600, verify_core_h=run["verify_cpu_s"] / 3600)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-ops", type=int, default=5)
    parser.add_argument("--spec", default="", help="generation spec (text proto); default: TASO's")
    parser.add_argument("--sample-shards", type=int, default=1,
                        help="K: the sample runs K shards of a job of N shards, then of N/2 (default 1)")
    parser.add_argument("--of", type=int, default=0,
                        help="N: the first sampled job's shard count, at most 4096 (default: 64, 256, 4096 by size)")
    parser.add_argument("--machines", type=int, default=10)
    parser.add_argument("--cores", type=int, default=8, help="cores per machine")
    parser.add_argument("--volume-gib", type=float, default=500, help="largest volume a store may have")
    parser.add_argument("--shard-core-hours", type=float, default=0.5, help="most work a retried shard repeats")
    parser.add_argument("--overlay", default="", help="write a kustomize overlay for the plan to this directory")
    parser.add_argument("--k8s-base", default="", help="the kustomize base the overlay names (default: deploy/k8s/base)")
    parser.add_argument("--work", default="", help="keep measurements here (reused when present)")
    parser.add_argument("--check", action="store_true", help="also run size MAX_OPS in full and print the errors")
    parser.add_argument("--plan-only", default="", help="plan from this saved measurement; run nothing")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if args.max_ops < 3:
        sys.exit("estimate: --max-ops must be at least 3 (it scales from the two sizes below)")

    if args.plan_only:
        with open(args.plan_only) as f:
            saved = json.load(f)
        measured = saved.get("measured", saved)  # an earlier --json output, or its "measured" part
    else:
        taso = os.environ.get("TASO") or os.path.join(root, "bazel-bin", "cli", "taso")
        work = args.work or tempfile.mkdtemp(prefix="taso-estimate-")
        os.makedirs(work, exist_ok=True)
        # One file per work directory: the full runs serve every size that scales from them (the
        # size-4 run is size 5's n-1 and size 4's --check), so a directory holds one spec's runs.
        path = os.path.join(work, "runs.json")
        runs = json.load(open(path)) if os.path.exists(path) else {"spec": args.spec, "full": {}, "samples": {}}
        if runs["spec"] != args.spec:
            sys.exit(f"estimate: {path} holds runs of spec '{runs['spec']}'; use another --work for '{args.spec}'")

        def save():
            with open(path + ".tmp", "w") as f:
                json.dump(runs, f, indent=1)
            os.replace(path + ".tmp", path)

        pipeline = Pipeline(taso, args.spec, work)
        sizes = [args.max_ops - 2, args.max_ops - 1] + ([args.max_ops] if args.check else [])
        for size in sizes:
            if str(size) not in runs["full"]:
                log(f"size {size} end to end on this machine")
                runs["full"][str(size)] = pipeline.full_run(size, 2, 2)
                save()
        if str(args.max_ops) not in runs["samples"]:
            # Job A of N shards, then job B of N/2, each running the same K shards (spread over the
            # numbering; shard 0 also holds the shallower graphs, so it is left out).
            of = args.of or (64 if args.max_ops <= 3 else 256 if args.max_ops == 4 else 4096)
            k = args.sample_shards
            shards = [1 + i * max(1, (of // 2 - 1) // k) for i in range(k)]
            log(f"size {args.max_ops} sample: shards {shards} of {of}, then of {of // 2}")
            runs["samples"][str(args.max_ops)] = {
                "runs": pipeline.sample(args.max_ops, [(of, shards), (of // 2, shards)])}
            save()
        measured = {"full": [runs["full"][str(args.max_ops - 2)], runs["full"][str(args.max_ops - 1)]],
                    "sample": runs["samples"][str(args.max_ops)]}
        if args.check:
            measured["truth"] = runs["full"][str(args.max_ops)]
        log(f"measurements in {path}")

    est = estimate(measured)
    settings = plan(est, args.machines, args.cores, args.volume_gib, args.shard_core_hours)
    truth = measured.get("truth")
    if args.json:
        print(json.dumps({"measured": measured, "estimate": est, "plan": settings}, indent=1))
    else:
        report(est, settings, truth_of(truth) if truth else None, truth["cores"] if truth else None)
    if args.overlay:
        overlay(settings, est, args.overlay, args.k8s_base or os.path.join(root, "deploy", "k8s", "base"))
        log(f"overlay: {os.path.join(args.overlay, 'kustomization.yaml')} (kubectl kustomize {args.overlay})")


if __name__ == "__main__":
    main()
