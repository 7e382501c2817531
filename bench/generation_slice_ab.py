#!/usr/bin/env python3
"""Generation's CPU on a slice of a job, for two or more builds, alternating (so that a machine's drift
falls on every build alike): for each build, estimate.py's sample run (a fresh store, `taso job create
--shards OF`, then `taso generate --shards-here SHARDS`). Prints per run the wall time, the store's CPU,
the CPU of the rest (`taso job create`, `taso generate` and the generators it ran), and both per graph.
The store's CPU is its ingest only: a job whose other shards never run is never finalized.

  bench/generation_slice_ab.py [--max-ops 4] [--of 32] [--shards 1,2] [--rounds 2] BUILD...

A BUILD is a directory holding cli/taso and bin/taso_rules_db, bin/taso_generator (as `bazel build
-c opt //cli:taso //bin:...` lays them out under bazel-out/k8-opt/bin, copied).
"""
import argparse
import os
import shutil
import tempfile

from estimate import Pipeline


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--max-ops", type=int, default=4)
    parser.add_argument("--of", type=int, default=32, help="the job's shard count")
    parser.add_argument("--shards", default="1,2", help="the shards run (two generator processes by default)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("builds", nargs="+")
    args = parser.parse_args()
    shards = [int(s) for s in args.shards.split(",")]
    work = tempfile.mkdtemp(prefix="taso-slice-")
    try:
        for _ in range(args.rounds):
            for build in args.builds:
                pipeline = Pipeline(os.path.join(build, "cli", "taso"), "", work)
                run = pipeline.sample(args.max_ops, [(args.of, shards)])[0]
                graphs, store = run["graphs"], run["store_cpu_s"]
                rest = run["cpu_s"] - store
                per_graph = f"store {store / graphs * 1e6:.2f}, all {run['cpu_s'] / graphs * 1e6:.2f} core-us"
                print(f"{build}: {graphs} graphs, wall {run['wall_s']:.1f} s, store {store:.1f} core-s, "
                      f"the rest {rest:.1f} core-s; per graph: {per_graph}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
