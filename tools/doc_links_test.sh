#!/usr/bin/env bash
# Every link in the README, the guides and the measurement log resolves
# inside the repository. The runfiles are links into the source tree, so the
# tree the links point into is found through the README's.
set -euo pipefail
root=$(dirname "$(readlink -f README.md)")
[ -f "$root/tools/doc_links.js" ] || { echo "FAIL: cannot find the source tree from README.md" >&2; exit 1; }
cd "$root"
node tools/doc_links.js README.md docs/*.md bench/results/README.md deploy/debian/README
