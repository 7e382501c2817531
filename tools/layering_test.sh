#!/usr/bin/env bash
# Runs tools/check_includes.py over one package's sources (see layers.bzl).
set -euo pipefail
root="${TEST_SRCDIR}/${TEST_WORKSPACE}"
package="$1"; shift
exec python3 "$root/tools/check_includes.py" "$package" "$root/$package" "$@"
