#!/bin/sh
# Gates a CI job on one `taso optimize --json` run: reads its report and its
# exit code and decides as docs/ci.md's table says.
#
#   taso-gate.sh REPORT.json [EXIT_CODE]
#
#   0  use the output: it must be checked (verified_numerically) or the input
#      byte for byte (output_is_input), and a candidate kept by the
#      never-slower step must not have measured slower than MIN_SPEEDUP (a
#      re-export asked for with --export-baseline that did is a warning)
#   4  the output file is the input unchanged (the optimized graph failed its
#      check): keep it and warn, with the report's error
#   5  use the output, checked but not measured against the input (its
#      speedup is a prediction): warn, or fail when REQUIRE_MEASURED=true
#   2  fail: bad options, an unreadable input or invalid ONNX
#   3  fail: a server unreachable or busy (retry with backoff before calling
#      the gate; a 3 here is the last attempt's)
#   1  fail: an internal error (file the report)
#
# EXIT_CODE is what `taso optimize` returned; without it the report's
# .error.exit_code is used (a failed run's report is
# {"error":{"code":..,"message":..,"exit_code":..}}). Numbers in the report may
# be JSON numbers or strings. Environment:
#   EXPECTED_RULES  the rules_digest the job pins: another one fails (a new
#                   rule set is a change to review); empty: not checked
#   MIN_SPEEDUP     lowest measured_speedup accepted for a kept candidate
#                   (default 0.99)
#   REQUIRE_MEASURED  true: an output that was not measured (exit 5) fails
# Exit status: 0 pass (use the output, or keep the input with a warning),
# 1 fail. Messages are GitHub Actions annotations when GITHUB_ACTIONS=true.
# Needs jq (1.6 or later) and a POSIX sh.
set -u

say() { # LEVEL MESSAGE: LEVEL is error, warning or notice
  if [ "${GITHUB_ACTIONS:-}" = true ]; then
    echo "::$1::$2"
  else
    echo "taso-gate: $1: $2"
  fi
}
fail() {
  say error "$1"
  exit 1
}

if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  echo "usage: taso-gate.sh REPORT.json [EXIT_CODE]" >&2
  exit 2
fi
command -v jq >/dev/null 2>&1 || { echo "taso-gate: jq not found" >&2; exit 2; }
report=$1
code=${2:-}
case $code in
  '' | *[!0-9]*) [ -z "$code" ] || fail "the exit code '$code' is not a number" ;;
esac

# The report: one JSON object, or nothing (a run that failed before writing one).
json=false
if [ -s "$report" ] && jq -e 'type == "object"' "$report" >/dev/null 2>&1; then json=true; fi
get() { # JQ-FILTER: its raw value, "" when not a JSON report
  if [ "$json" = true ]; then jq -r "$1" "$report"; fi
}
error_text=$(get '.error | if type == "object" then (.message // "" | tostring)
                           elif type == "string" then . else "" end')
report_code=$(get '.error | if type == "object" and .exit_code != null then .exit_code | tonumber | tostring
                           else "" end')

if [ -z "$code" ]; then
  [ -n "$report_code" ] || fail "no exit code given and none in $report (.error.exit_code)"
  code=$report_code
elif [ -n "$report_code" ] && [ "$report_code" != "$code" ]; then
  say warning "the report says exit $report_code, the process returned $code: going by $code"
fi

# EXPECTED_RULES, when set, against the report's rules_digest.
check_rules() {
  digest=$(get '.rules_digest // ""')
  if [ -n "${EXPECTED_RULES:-}" ]; then
    [ "$digest" = "$EXPECTED_RULES" ] || fail "rule set changed: rules_digest ${digest:-missing}, pinned $EXPECTED_RULES"
  fi
}

no_message="no message in the report; see the job's log"
case $code in
  0)
    [ "$json" = true ] || fail "exit 0 but $report is not a JSON report: run taso optimize with --json"
    check_rules
    if [ "$(get '.output_is_input == true')" = true ]; then
      what="the output is the input byte for byte (nothing found beyond a runtime's own passes, or below --min-gain)"
    elif [ "$(get '.returned_original == true')" = true ]; then
      fail "exit 0 but the report says the input was returned: ${error_text:-no reason given}"
    elif [ "$(get '.verified_numerically == true')" = true ]; then
      what="optimized and checked (max_abs_error $(get '.max_abs_error // "?"'))"
    else
      fail "the output is not verified (verified_numerically is not true)"
    fi
    measurement=$(get '.measurement // ""')
    case $measurement in
      MEASURED_KEPT_CANDIDATE | MEASURED_KEPT_REEXPORT)
        slow=$(jq -r --arg min "${MIN_SPEEDUP:-0.99}" \
          'if .measured_speedup == null then "missing"
           elif (.measured_speedup | tonumber) < ($min | tonumber) then "slower" else "" end' "$report") ||
          fail "MIN_SPEEDUP '${MIN_SPEEDUP:-}' is not a number"
        [ "$slow" != missing ] || fail "a kept output ($measurement) without measured_speedup"
        slower="measured_speedup $(get '.measured_speedup') < ${MIN_SPEEDUP:-0.99}"
        if [ -n "$slow" ] && [ "$measurement" = MEASURED_KEPT_CANDIDATE ]; then
          fail "the output measured slower: $slower"
        fi
        # A re-export (--export-baseline) holds nothing the search found: the
        # job asked for it, and its timing against the input is reported.
        [ -z "$slow" ] || say warning "the re-export of the input (--export-baseline) measured slower: $slower"
        ;;
    esac
    say notice "$what"
    get '"taso \(.taso_version // "?"): \(.cost_baseline_ms // "?") -> \(.cost_after_ms // "?") ms predicted; measured \(.measured_baseline_ms // "?") -> \(.measured_after_ms // "?") ms (\(.measurement // "?")); rules \((.rules_digest // "?")[0:12]); in \((.input_sha256 // "?")[0:12]) out \((.output_sha256 // "?")[0:12])"'
    echo "taso-gate: pass: use the output"
    ;;
  5)
    [ "$json" = true ] || fail "exit 5 but $report is not a JSON report: run taso optimize with --json"
    check_rules
    [ "$(get '.verified_numerically == true')" = true ] || fail "exit 5 but the output is not verified"
    why="not measured against the input ($(get '.measurement // "?"'): $(get '.measurement_detail // ""')); its speedup is the cost model's prediction"
    [ "${REQUIRE_MEASURED:-}" != true ] || fail "$why (REQUIRE_MEASURED=true)"
    say warning "$why"
    echo "taso-gate: pass: use the output (checked, not measured)"
    ;;
  4)
    [ "$json" = false ] || check_rules
    say warning "the optimized graph failed its check; the output file is the input unchanged: ${error_text:-no reason in the report}"
    echo "taso-gate: pass: keep the input (a bug worth filing with the model and the report)"
    ;;
  2) fail "bad options, an unreadable input or invalid ONNX (exit 2): ${error_text:-$no_message}" ;;
  3) fail "the optimizer server was unreachable or busy (exit 3), after the job's retries: ${error_text:-$no_message}" ;;
  1) fail "internal error (exit 1), worth filing with the report: ${error_text:-$no_message}" ;;
  *) fail "taso optimize exit $code, which docs/ci.md does not list: ${error_text:-$no_message}" ;;
esac
