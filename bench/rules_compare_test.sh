#!/usr/bin/env bash
# bench/rules_compare.js on two suite documents: the canned suite (bench/testdata/suite, collected by
# bench/suite_report.js) and a copy whose rule set did better on one entry and lost another: the joined
# rows, the geometric-mean rows, the exit code (1: an output differs) and the JSON it writes.
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not on PATH (deploy/setup.sh expects node 20 for bench/)"
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}
[[ -f "$src/bench/rules_compare.js" ]] || src=$(cd "$(dirname "$0")/.." && pwd)
data="$src/bench/testdata/suite"
tmp=${TEST_TMPDIR:-$(mktemp -d)}
sed "s#@DIR@#$data#g" "$data/manifest.jsonl" >"$tmp/manifest.jsonl"
node "$src/bench/suite_report.js" --manifest "$tmp/manifest.jsonl" --json "$tmp/a.json" --svg "$tmp/a.svg" \
  --set 'threads=["1","2"]' >/dev/null || true
[[ -s "$tmp/a.json" ]] || fail "suite_report.js wrote no suite JSON"
# B: a/eqsat predicted 1.5x with 9 rewrites and 30.5 s of search; b/backtrack missing.
node -e '
const fs = require("fs");
const s = JSON.parse(fs.readFileSync(process.argv[1], "utf8"));
const a = s.entries.find((e) => e.model === "a" && e.search === "eqsat");
a.predicted_speedup = 1.5; a.search_time_s = 30.5; a.report = Object.assign({}, a.report, {rules_available: 9});
s.entries = s.entries.filter((e) => !(e.model === "b" && e.search === "backtrack"));
fs.writeFileSync(process.argv[2], JSON.stringify(s));' "$tmp/a.json" "$tmp/b.json"

rc=0
node "$src/bench/rules_compare.js" --a "$tmp/a.json" --b "$tmp/b.json" --labels "size 3,size 4" \
  --json "$tmp/compare.json" >"$tmp/table.txt" || rc=$?
cat "$tmp/table.txt"
[[ $rc -eq 1 ]] || fail "exit $rc, want 1 (b/eqsat's outputs differ)"
head -1 "$tmp/table.txt" | grep -q "pred size 3  *pred size 4  *ORT size 3  *ORT size 4" || fail "header"
grep -q '^a  *eqsat  *1\.250x  *1\.500x  *1\.099x  *1\.099x  *1\.2  *30\.5 .* 9 ' "$tmp/table.txt" || fail "row a/eqsat"
grep -q '^b  *backtrack  *n/a  *-  *n/a  *-  *-  *-' "$tmp/table.txt" ||
  fail "row b/backtrack (missing from B) should show B's columns as missing"
grep -q '^geomean (2)  *eqsat' "$tmp/table.txt" || fail "no geometric-mean row for eqsat"
grep -q '^outputs differ: b/eqsat' "$tmp/table.txt" || fail "the differing output is not named"
node -e '
const c = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
if (c.labels.join() !== "size 3,size 4" || c.thread !== "1" || c.rows.length !== 4) throw new Error("shape");
const a = c.rows.find((r) => r.model === "a" && r.search === "eqsat");
if (a.a.predicted !== 1.25 || a.b.predicted !== 1.5 || a.b.rewrites !== 9) throw new Error(JSON.stringify(a));
if (c.rows.find((r) => r.model === "b" && r.search === "backtrack").b !== null) throw new Error("b/backtrack");' \
  "$tmp/compare.json" || fail "compare.json"
echo PASS
