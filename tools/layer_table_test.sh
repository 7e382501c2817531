#!/usr/bin/env bash
# tools/layers.bzl refuses an unsound table when it is loaded: a copy of it
# with one planted row (upward, sideways onto the same floor, a stage naming a
# peer, a lower optimizer step naming a higher one, a cycle) fails a real
# Bazel load in a scratch workspace, naming the row; the table as committed
# loads.
set -euo pipefail
layers="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/layers.bzl"
fail() { echo "FAIL: $*"; exit 1; }
command -v bazel >/dev/null || fail "bazel is not on PATH (deploy/setup.sh installs it)"
export HOME="${TEST_TMPDIR}/home"
mkdir -p "$HOME"
root="${TEST_TMPDIR}/bazel-root"

# load ROW-EDIT: 0 when a workspace with the edited table loads; output in $out.
load() {
  local ws="${TEST_TMPDIR}/ws"
  rm -rf "$ws" && mkdir -p "$ws/tools" "$ws/pkg"
  touch "$ws/WORKSPACE" "$ws/tools/BUILD.bazel"
  sed -e "$1" "$layers" > "$ws/tools/layers.bzl"
  printf 'load("//tools:layers.bzl", "visible_to")\nfilegroup(name = "x", visibility = visible_to("core"))\n' \
    > "$ws/pkg/BUILD.bazel"
  out=$(cd "$ws" && bazel --batch --output_user_root="$root" query //pkg:x 2>&1)
}

load 's/^//' || fail "the committed table does not load: $out"

expect_refused() {  # NAME SED-EDIT EXPECTED-TEXT
  if load "$2"; then fail "$1: the table loaded"; fi
  grep -qF "$3" <<<"$out" || fail "$1: no mention of '$3' in: $out"
  echo "refused as it should: $1"
}
expect_refused "ground names a vocabulary" \
  's|"core": _row(1, \["//proto"\])|"core": _row(1, ["//proto", "//records"])|' \
  'core (floor 1, step 0) names //records (floor 2, step 0)'
expect_refused "a vocabulary names another on its floor" \
  's|"onnx_io": _row(2, _VOCABULARY)|"onnx_io": _row(2, _VOCABULARY + ["//costs"])|' \
  'onnx_io (floor 2, step 0) names //costs (floor 2, step 0)'
expect_refused "a stage names a peer" \
  's|"generator": _row(3, _VOCABULARY + \["//records", "//net"\])|"generator": _row(3, _VOCABULARY + ["//records", "//net", "//verifier"])|' \
  'generator (floor 3, step 0) names //verifier (floor 3, step 0)'
expect_refused "the rewrite engine names the passes over it" \
  's|"optimizer/rewrite": _row(3, _VOCABULARY, step = 0)|"optimizer/rewrite": _row(3, _VOCABULARY + ["//optimizer/passes"], step = 0)|' \
  'optimizer/rewrite (floor 3, step 0) names //optimizer/passes (floor 3, step 1)'
expect_refused "a cycle" \
  's|"net": _row(1)|"net": _row(1, ["//storage"])|; s|"storage": _row(1)|"storage": _row(1, ["//net"])|' \
  'net depends on itself through the table (a cycle)'
expect_refused "a package with no row" \
  's|"gpu": _row(1)|"gpu": _row(1, ["//nowhere"])|' \
  'gpu names //nowhere, which has no row'
echo "layers.bzl: every planted row refused at load time"
