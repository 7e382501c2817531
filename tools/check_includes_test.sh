#!/usr/bin/env bash
# tools/check_includes.py must accept allowed includes and reject the rest:
# a library including a peer stage, a test using a test-only dependency in a
# library file, and a main.cc left in a stage folder wiring in a peer (mains
# live in //bin, on the top floor).
set -euo pipefail
check="${TEST_SRCDIR}/${TEST_WORKSPACE}/tools/check_includes.py"
dir="${TEST_TMPDIR}/verifier"
mkdir -p "$dir"
packages="proto,core,records,generator,verifier,testing,cli"
run() { python3 "$check" verifier "$dir" "proto,core,records" "testing" "$packages"; }
fail() { echo "FAIL: $*"; exit 1; }

cat > "$dir/prover.cc" <<'CC'
#include "verifier/prover.h"
#include "core/graph.h"
#include "records/spec.h"
#include "absl/status/status.h"
#include <vector>
CC
cat > "$dir/prover_test.cc" <<'CC'
#include "testing/types.h"
CC
cat > "$dir/main.cc" <<'CC'
#include "verifier/prover.h"
CC
out=$(run) || fail "allowed includes rejected: $out"

echo '#include "generator/recheck.h"' >> "$dir/prover.cc"
if out=$(run); then fail "a peer stage's header was accepted"; fi
grep -q 'prover.cc:6: lib file includes generator/recheck.h' <<<"$out" || fail "unexpected report: $out"
sed -i '$d' "$dir/prover.cc"

echo '#include "testing/types.h"' >> "$dir/prover.cc"
if out=$(run); then fail "a test-only package was accepted in a library file"; fi
sed -i '$d' "$dir/prover.cc"

echo '#include "generator/recheck.h"' >> "$dir/main.cc"
if out=$(run); then fail "a main.cc in a stage folder wiring in a peer was accepted"; fi
grep -q 'main.cc:2: lib file includes generator/recheck.h' <<<"$out" || fail "unexpected report: $out"

rm "$dir"/*.cc
if out=$(run); then fail "a package without sources passed having checked nothing"; fi
grep -q "no C++ sources to check" <<<"$out" || fail "unexpected report for an empty package: $out"
echo "check_includes: all cases behave"
