#!/usr/bin/env bash
# bench/suite_report.js on canned results (bench/testdata/suite: reports, speedup.js outputs and
# whole-graph measurements for two models x two searches, one search failed and one output differing):
# the collected numbers, the table, the exit code, and a well-formed SVG with a panel per thread count,
# a row per entry (its label once, never stacked), a measured bar from 1 where ORT timed it, a predicted
# diamond where the optimizer predicted, and the A/A band where there was a control. Needs node and python3 (standard library only).
set -euo pipefail
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v node >/dev/null || fail "node is not on PATH (deploy/setup.sh expects node 20 for bench/)"
command -v python3 >/dev/null || fail "python3 is not on PATH"
src=${TEST_SRCDIR:-}/${TEST_WORKSPACE:-}
[[ -f "$src/bench/suite_report.js" ]] || src=$(cd "$(dirname "$0")/.." && pwd)
data="$src/bench/testdata/suite"
tmp=${TEST_TMPDIR:-$(mktemp -d)}
sed "s#@DIR@#$data#g" "$data/manifest.jsonl" >"$tmp/manifest.jsonl"

rc=0
node "$src/bench/suite_report.js" --manifest "$tmp/manifest.jsonl" --json "$tmp/suite.json" --svg "$tmp/suite.svg" \
  --set 'threads=["1","2"]' --set time_limit=30 --set aa_tolerance=0.02 >"$tmp/table.txt" || rc=$?
cat "$tmp/table.txt"
[[ $rc -eq 1 ]] || fail "exit $rc, want 1 (one search failed, one output differs)"
grep -q '^a  *eqsat .* 1\.250x  *-  1\.099x  1\.081x  1\.000x  *0\.992x  *1\.250x  *1\.2  *1234  *equal$' "$tmp/table.txt" ||
  fail "row a/eqsat is wrong"
grep -q '^b  *eqsat .*DIFFER$' "$tmp/table.txt" || fail "row b/eqsat does not say DIFFER"
# b/eqsat's 2-thread timing was repeated until its A/A came within tolerance: the column counts the tries.
grep -q '^b  *eqsat .* 1\.000x  *1\.000x (3) ' "$tmp/table.txt" || fail "row b/eqsat does not show its 3 A/A tries"
grep -q '^a  *eqsat .* 1\.000x  *0\.992x  ' "$tmp/table.txt" || fail "row a/eqsat shows tries it did not repeat"
grep -q '^A/A (n): the ORT timing ran n times, the A/A control outside 1 +- 2 %' "$tmp/table.txt" ||
  fail "the table does not say what A/A (n) means"
grep -q '^geomean (2)  *eqsat  *1\.118x' "$tmp/table.txt" || fail "no geometric-mean row for eqsat"
grep -q '^\*\*\* b backtrack: taso optimize exit 1: cannot import$' "$tmp/table.txt" || fail "the failure is not shown"
grep -q "^whole-graph n/a: taso profile graph --measure failed on the output: unknown flag$" "$tmp/table.txt" ||
  fail "why the whole-graph figure is n/a is not shown"

python3 - "$tmp/suite.json" "$tmp/suite.svg" <<'PY'
import json, math, sys
import xml.etree.ElementTree as ET
suite = json.load(open(sys.argv[1]))
e = {(x["model"], x["search"]): x for x in suite["entries"]}
assert len(e) == 4, e.keys()
a = e[("a", "eqsat")]
assert a["cost_baseline_source"] == "cost_before_ms" and a["predicted_speedup"] == 1.25, a
assert a["enodes"] == 1234 and a["enodes_source"] == "stop_detail", a
assert {k: a["whole_graph"][k] for k in ("input_ms", "output_ms", "speedup", "detail")} == \
    {"input_ms": 5.0, "output_ms": 4.0, "speedup": 1.25, "detail": None}, a["whole_graph"]
assert a["whole_graph"]["source"].startswith("taso profile graph"), a["whole_graph"]
w = e[("b", "eqsat")]["whole_graph"]  # the report's own interleaved measurement wins over profile graph
assert math.isclose(w["speedup"], 1.1) and w["source"].startswith("report"), w
assert math.isclose(a["ort"]["1"]["speedup"], math.sqrt(10 / 9.0 * 10 / 9.2)), a["ort"]["1"]
assert a["report"]["search"] == "eqsat"  # the whole report is kept
bt = e[("a", "backtrack")]
assert bt["cost_raw_ms"] == 12 and bt["cost_baseline_source"] == "cost_baseline_ms", bt
assert bt["whole_graph"]["speedup"] is None and "unknown flag" in bt["whole_graph"]["detail"]
assert e[("b", "eqsat")]["cost_raw_ms"] == 4 and e[("b", "eqsat")]["enodes"] == 50000  # camelCase report
assert e[("b", "eqsat")]["outputs_equal"] is False
assert e[("b", "eqsat")]["ort"]["2"]["aa_tries"] == [1.031, 0.97, 1], e[("b", "eqsat")]["ort"]["2"]
assert a["ort"]["2"]["aa_tries"] is None, a["ort"]["2"]
assert e[("b", "backtrack")]["errors"] and e[("b", "backtrack")]["predicted_speedup"] is None

root = ET.parse(sys.argv[2]).getroot()  # raises on malformed XML
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
panels = [g for g in root.iter(ns + "g") if g.get("class") == "panel"]
assert [p.get("data-threads") for p in panels] == ["1", "2"], [p.get("data-threads") for p in panels]
labels = sorted(f"{x['model']}/{x['search']}" for x in suite["entries"])
# Every entry has a row label of its own, at a y of its own: none stack on another.
texts = [t for t in root.iter(ns + "text") if t.text in labels]
assert sorted(t.text for t in texts) == labels, [t.text for t in texts]
assert len({t.get("y") for t in texts}) == len(labels), "two labels share a row"
for panel in panels:
    t = panel.get("data-threads")
    entries = {g.get("data-label"): g for g in panel.iter(ns + "g") if g.get("class") == "entry"}
    assert sorted(entries) == labels, sorted(entries)
    one = float(next(l for l in panel.iter(ns + "line") if l.get("class") == "one").get("x1"))
    for x in suite["entries"]:
        g = entries[f"{x['model']}/{x['search']}"]
        bars = [r for r in g.iter(ns + "rect") if r.get("class") == "measured"]
        speedup = x["ort"].get(t, {}).get("speedup")
        assert len(bars) == (1 if speedup else 0), (t, x["model"], x["search"], len(bars))
        if bars:
            left, width = float(bars[0].get("x")), float(bars[0].get("width"))
            assert width > 0
            # From 1 rightwards for a speedup, leftwards to 1 for a slowdown.
            assert (abs(left - one) < 0.2) if speedup >= 1 else (abs(left + width - one) < 0.2), (speedup, left, width, one)
        diamonds = [d for d in g.iter(ns + "path") if d.get("class") == "predicted"]
        assert len(diamonds) == (1 if x["predicted_speedup"] is not None else 0), (t, x["model"], x["search"])
        bands = [r for r in g.iter(ns + "rect") if r.get("class") == "aa-band"]
        assert len(bands) == (1 if x["ort"].get(t, {}).get("control") else 0), (t, x["model"], x["search"])
PY

# A report whose never-slower measurement was made in ONNX Runtime and rejected the candidate does not
# fill the whole-graph column (that figure is about a discarded graph, timed on another runtime): the
# column falls back to `taso profile graph --measure` of what was returned.
python3 - "$data/a.eqsat.optimize.json" "$tmp/ort_rejected.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r.update(measured_baseline_ms=1.0, measured_after_ms=3.0, measured_speedup=0.333, candidate_cost_ms=8.0,
         measured_backend="BACKEND_ORT", measurement="MEASURED_KEPT_BASELINE")
json.dump(r, open(sys.argv[2], "w"))
PY
printf '{"model": "a", "search": "eqsat", "optimize_exit": 0, "optimize_json": "%s", "speedup": {}, "profile_input": "%s", "profile_output": "%s", "profile_detail": "", "errors": []}\n' \
  "$tmp/ort_rejected.json" "$data/a.profile.json" "$data/a.eqsat.profile.json" >"$tmp/ort_rejected.jsonl"
node "$src/bench/suite_report.js" --manifest "$tmp/ort_rejected.jsonl" --json "$tmp/ort_rejected_suite.json" \
  --svg "$tmp/ort_rejected.svg" --set 'threads=["1"]' >"$tmp/ort_rejected.txt" || fail "the ORT-rejected case did not render"
# The rejected candidate's own prediction (base 10 ms / 8 ms) beside what never-slower measured.
grep -q '^a  *eqsat .* 1\.250x/0\.333x ' "$tmp/ort_rejected.txt" || fail "the rejected candidate's prediction is not shown"
python3 - "$tmp/ort_rejected_suite.json" <<'PY'
import json, sys
w = json.load(open(sys.argv[1]))["entries"][0]["whole_graph"]
assert w["speedup"] == 1.25 and w["source"].startswith("taso profile graph"), w
c = json.load(open(sys.argv[1]))["entries"][0]["candidate"]
assert c == {"predicted_speedup": 1.25, "measured_speedup": 0.333, "measured_backend": "BACKEND_ORT",
             "verdict": "MEASURED_KEPT_BASELINE"}, c
PY

# A result that is the input byte for byte (output_is_input) counts as exactly 1 in the ORT and whole-graph
# columns: its timing against itself is noise, kept as same_file_ratio, never a speedup or a slowdown.
python3 - "$data/a.eqsat.optimize.json" "$tmp/same_file.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r.update(output_is_input=True, cost_after_ms=r["cost_before_ms"])
json.dump(r, open(sys.argv[2], "w"))
PY
printf '{"model": "a", "search": "eqsat", "optimize_exit": 0, "optimize_json": "%s", "speedup": {"1": "%s"}, "profile_input": "%s", "profile_output": "%s", "profile_detail": "", "errors": []}\n' \
  "$tmp/same_file.json" "$data/a.ort1t.json" "$data/a.profile.json" "$data/a.eqsat.profile.json" >"$tmp/same_file.jsonl"
node "$src/bench/suite_report.js" --manifest "$tmp/same_file.jsonl" --json "$tmp/same_file_suite.json" \
  --svg "$tmp/same_file.svg" --set 'threads=["1"]' >"$tmp/same_file.txt" || fail "the same-file case did not render"
grep -q '^a  *eqsat .* 1\.000x  *-  *= input  .*= input ' "$tmp/same_file.txt" || fail "the same-file row does not say = input"
python3 - "$tmp/same_file_suite.json" <<'PY'
import json, math, sys
e = json.load(open(sys.argv[1]))["entries"][0]
assert e["output_is_input"] is True, e
o = e["ort"]["1"]
assert o["speedup"] == 1 and math.isclose(o["same_file_ratio"], math.sqrt(10 / 9.0 * 10 / 9.2)), o
assert e["whole_graph"]["speedup"] == 1, e["whole_graph"]
PY

# Rendering a suite JSON again gives the same table.
node "$src/bench/suite_report.js" --suite "$tmp/suite.json" --svg "$tmp/again.svg" >"$tmp/again.txt" && fail "render: exit 0"
diff "$tmp/table.txt" "$tmp/again.txt" || fail "the table differs when rendered from suite.json"
cmp "$tmp/suite.svg" "$tmp/again.svg" || fail "the SVG differs when rendered from suite.json"
node "$src/bench/suite_report.js" --suite "$tmp/nonexistent.json" 2>/dev/null && fail "a missing suite JSON exits 0"
echo PASS
