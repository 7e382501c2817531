# Sourced by the ORT benchmark commands (bench/ort_compare.sh, bench/suite.sh): what they share.
# Expects `root` (the repository) and `work` (an absolute work dir) to be set and the caller to be in
# `root`; `bench_log` prints with the caller's name.
#   bench_taso        sets `taso`: $TASO, or //cli:taso built -c opt and copied (with the executables its
#                     commands start) to $work/bin, so a concurrent build cannot swap it mid-run
#   bench_ort_deps    npm ci in bench/ort and profiler/ort (the ort backend's worker) when onnxruntime-node is
#                     missing there
#   bench_rules       sets `rules`: $RULES, or a size-3 rule file made once in $work (generate, verify, export)

bench_log() { echo "$(basename "$0" .sh): $*" >&2; }

bench_taso() {
  if [[ -n "${TASO:-}" ]]; then
    taso=$TASO
    return
  fi
  bench_log "building //cli:taso (-c opt)"
  bazel build -c opt //cli:taso >"$work/build.log" 2>&1 || { tail -20 "$work/build.log" >&2; return 1; }
  # `taso generate/verify` find the executables they start at ../PACKAGE/NAME beside taso.
  local bin f
  bin=$(bazel info -c opt bazel-bin 2>/dev/null)
  for f in cli/taso bin/taso_rules_db bin/taso_generator bin/taso_verifier; do
    mkdir -p "$work/bin/$(dirname "$f")"
    cp -f "$bin/$f" "$work/bin/$f"
  done
  taso="$work/bin/cli/taso"
}

bench_ort_deps() {
  local dir
  for dir in bench/ort profiler/ort; do
    if [[ ! -f $dir/node_modules/onnxruntime-node/package.json ]]; then
      bench_log "installing onnxruntime-node (npm ci in $dir)"
      (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    fi
  done
}

bench_rules() {
  rules=${RULES:-}
  if [[ -z "$rules" ]]; then
    rules="$work/rules.pb"
    if [[ ! -f "$rules" ]]; then
      bench_log "making rules: generate --max-ops 3, verify, export (a few minutes)"
      "$taso" generate --max-ops 3 --shards 2 --db "$work/db" >"$work/generate.log" &&
        "$taso" verify --db "$work/db" >"$work/verify.log" &&
        "$taso" rules export --db "$work/db" --format proto -o "$rules.tmp" 2>>"$work/verify.log" &&
        mv "$rules.tmp" "$rules" || { bench_log "making rules failed: see $work/generate.log, verify.log"; return 1; }
    fi
  fi
  [[ -f "$rules" ]] || { bench_log "no rule file $rules"; return 1; }
}
