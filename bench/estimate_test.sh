#!/usr/bin/env bash
# bench/estimate.py's arithmetic on a synthetic measurement whose answers are known: graphs scaled from
# the sampled shards, the walk and per-graph costs separated by the K- and 2K-shard runs, ratios grown
# by the factor they grew, and a plan whose settings keep their invariants; --plan-only round trip.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || fail "python3 is not on PATH (deploy/setup.sh installs it)"
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}
[[ -f "$src/bench/estimate.py" ]] || src=$(cd "$(dirname "$0")/.." && pwd)
tmp=${TEST_TMPDIR:-$(mktemp -d)}
# bench/testdata/estimate-synthetic.json: sizes 2 and 3 in full; size 4 sampled as shard 1 of 100, then
# shard 1 of 50. Each shard walks for 10 core-s and each graph costs 1 ms: 11 s for 1,000 graphs, then
# 12.2 s for 2,200.
measured="$src/bench/testdata/estimate-synthetic.json"
# What every check below starts from: a plan's --json output (argv[1]) and near().
cat >"$tmp/plan_check.py" <<'PY'
import json, sys
out = json.load(open(sys.argv[1]))
e, p = out["estimate"], out["plan"]
def near(name, got, want):
    if abs(got - want) > 1e-6 * max(1, abs(want)):
        sys.exit(f"{name}: {got}, want {want}")
    print(f"ok: {name} = {got:g}")
PY
export PYTHONPATH="$tmp"
python3 "$src/bench/estimate.py" --plan-only "$measured" --machines 2 --cores 4 --json >"$tmp/plan.json" ||
  fail "estimate.py --plan-only failed"
python3 - "$tmp/plan.json" <<'PY' || fail "the estimate is wrong"
from plan_check import e, p, near
near("graphs (the two runs' 100,000 and 110,000, averaged, + size 2's 1,000)", e["graphs"], 106000)
near("core-s per graph", e["generate_core_s_per_graph"], 0.001)
near("walk core-s per shard", e["walk_core_s_per_shard"], 10)
near("generation core-s (walks apart)", e["generate_core_s"], e["graphs"] * 0.001)
near("plan: generation hours (graphs and 16 walks on 4 cores)", p["generate_hours"],
     (e["graphs"] * 0.001 + 16 * 10) / 4 / 3600)
# pairs per graph 0.01 -> 0.02, so 0.03 at size 4; renamings per pair 0.5 -> 0.75, so 1.0 (capped).
near("pairs", e["candidate_pairs"], e["graphs"] * 0.03)
near("proofs (every pair a renaming of another)", e["proofs"], 0)
near("rules after renaming (0.4 -> 0.2 of pairs: 0.1)", e["after_renaming"], e["candidate_pairs"] * 0.1)
near("disk bytes (50 per graph)", e["peak_disk_bytes"], e["graphs"] * 50)
assert e["max_ops"] == 4, e["max_ops"]
# The plan: stores for the ingest (half of generation CPU at size 3: 4 of 8 cores), the rest generate.
assert p["stores"] == 4 and p["generator_parallelism"] == 4 and p["verifier_replicas"] == 4, p
assert p["shards"] % p["generator_parallelism"] == 0 and p["shards"] >= 4 * p["generator_parallelism"], p
assert p["storage_per_store_gib"] >= 5 and p["store_memory_gib"] == 8, p
print("ok: plan", {k: p[k] for k in ("stores", "shards", "generator_parallelism", "verifier_replicas")})
PY
# Finalization measured at size 3 (2 of its 10 core-s of generation, all in the store): charged per graph
# at size 4, run by the stores after the last shard, and left out of the stores' ingest share.
python3 - "$measured" "$tmp/finalize.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["full"][1]["store_finalize_cpu_s"] = 2
json.dump(m, open(sys.argv[2], "w"))
PY
python3 "$src/bench/estimate.py" --plan-only "$tmp/finalize.json" --machines 2 --cores 4 --json >"$tmp/finalize-plan.json" ||
  fail "estimate.py --plan-only with finalization failed"
python3 - "$tmp/finalize-plan.json" <<'PY' || fail "the finalization estimate is wrong"
from plan_check import e, p, near
near("finalization core-s (0.2 ms per graph)", e["finalize_core_s"], e["graphs"] * 0.0002)
near("the stores' share of streaming ((5 - 2) / (10 - 2))", e["store_share_of_generation"], 0.375)
assert p["stores"] == 3 and p["generator_parallelism"] == 5, p
near("plan: finalization hours (3 stores, 2 threads each)", p["finalize_hours"], e["finalize_core_s"] / 6 / 3600)
near("plan: generation hours include it", p["generate_hours"],
     (e["generate_core_s"] + p["shards"] * 10) / 5 / 3600 + p["finalize_hours"])
PY
# --plan-only takes its own --json output back, and plans for another cluster size.
python3 "$src/bench/estimate.py" --plan-only "$tmp/plan.json" --machines 1 --cores 2 >"$tmp/small.txt" ||
  fail "--plan-only on a --json output failed"
grep -q "on 1 machine(s) x 2 cores: 1 store(s)" "$tmp/small.txt" || fail "small plan: $(cat "$tmp/small.txt")"
echo "ok: --plan-only re-plans its own output ($(grep -c . "$tmp/small.txt") lines)"
# Fewer than three operators cannot scale from two sizes below.
if python3 "$src/bench/estimate.py" --max-ops 2 >"$tmp/two.txt" 2>&1; then fail "--max-ops 2 was accepted"; fi
grep -q "at least 3" "$tmp/two.txt" || fail "--max-ops 2: $(cat "$tmp/two.txt")"
echo "PASS"
