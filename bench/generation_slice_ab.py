#!/usr/bin/env python3
"""Generation's CPU on a slice of a job, for two or more builds, alternating (so that a machine's drift
falls on every build alike): for each build, a fresh store, `taso job create --shards OF`, then
`taso generate --shards-here SHARDS`. Prints per run the wall time, the store's CPU, the CPU of
`taso generate` and the generators it ran, and both per graph. The store's CPU is its ingest only: a
job whose other shards never run is never finalized.

  bench/generation_slice_ab.py [--max-ops 4] [--of 32] [--shards 1,2] [--rounds 2] BUILD...

A BUILD is a directory holding cli/taso and bin/taso_rules_db, bin/taso_generator (as `bazel build
-c opt //cli:taso //bin:...` lays them out under bazel-out/k8-opt/bin, copied).
"""
import argparse
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time


def process_cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read()
    fields = fields[fields.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(build, args, work):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    port_file = os.path.join(work, "port")
    with open(os.path.join(work, "store.log"), "w") as log:
        store = subprocess.Popen([os.path.join(build, "bin", "taso_rules_db"), "--db", os.path.join(work, "db"),
                                  "--listen", "127.0.0.1:0", "--port_file", port_file],
                                 stdout=subprocess.DEVNULL, stderr=log)
        try:
            for _ in range(600):
                if os.path.exists(port_file) and open(port_file).read().strip():
                    break
                time.sleep(0.1)
            address = "127.0.0.1:" + open(port_file).read().strip()
            taso = os.path.join(build, "cli", "taso")
            subprocess.run([taso, "job", "create", "--store", address, "--max-ops", str(args.max_ops),
                            "--shards", str(args.of), "--job", "slice"], check=True, stdout=subprocess.DEVNULL)
            cpu0, t0 = children_cpu(), time.time()
            out = subprocess.run([taso, "generate", "--job", "slice", "--store", address, "--shards-here", args.shards,
                                  "--json"], check=True, stdout=subprocess.PIPE, text=True).stdout
            wall, generate_cpu = time.time() - t0, children_cpu() - cpu0
            store_cpu = process_cpu(store.pid)
        finally:
            store.terminate()
            store.wait()
    graphs = json.loads(out.strip().splitlines()[-1])["graphs_enumerated_here"]
    return wall, store_cpu, generate_cpu, graphs


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-ops", type=int, default=4)
    parser.add_argument("--of", type=int, default=32, help="the job's shard count")
    parser.add_argument("--shards", default="1,2", help="the shards run (two generator processes by default)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="taso-slice-")
    try:
        for _ in range(args.rounds):
            for build in args.builds:
                wall, store, generate, graphs = run(build, args, os.path.join(work, "run"))
                per_graph = f"store {store / graphs * 1e6:.2f}, all {(store + generate) / graphs * 1e6:.2f} core-us"
                print(f"{build}: {graphs} graphs, wall {wall:.1f} s, store {store:.1f} core-s, "
                      f"generate {generate:.1f} core-s; per graph: {per_graph}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
