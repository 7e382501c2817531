#!/usr/bin/env bash
# Writes the benchmark suite's ONNX models into DIR, skipping any already there:
#   models/make_suite.sh DIR [NAMES...]     (default: the whole suite)
#   models/make_suite.sh --list             prints the suite's names, one a line
# A name may carry its configuration: NAME_b8 is NAME at batch 8,
# transformer_layer_s512 the transformer layer at sequence 512 (transformer_layer_s512_b8 both).
# torchvision CNNs come from models/export_torchvision.py (random weights), the
# hand-built structures from models/build_structures.py; both need Debian's
# /usr/bin/python3 (onnx; torch and torchvision for the CNNs). A model is
# written to NAME.onnx.tmp first, so an interrupted run leaves no partial file.
# Exit 1 if any model could not be made (the others are still written).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
py=${PYTHON:-/usr/bin/python3}

# The suite: TASO's CNN benchmarks and a few cheap others, then the structures.
TORCHVISION=(resnet50 resnext50_32x4d inception_v3 squeezenet1_1 shufflenet_v2_x1_0 mobilenet_v2 resnet18 densenet121)
STRUCTURES=(transformer_layer rnn_cell nasrnn_cell inception_cell nasnet_cell)

if [[ "${1:-}" == "--list" ]]; then
  printf '%s\n' "${TORCHVISION[@]}" "${STRUCTURES[@]}"
  exit 0
fi
if (($# < 1)) || [[ "$1" == -* ]]; then
  echo "usage: make_suite.sh DIR [NAMES...] | make_suite.sh --list" >&2
  exit 2
fi
dir=$1
shift
if (($#)); then names=("$@"); else names=("${TORCHVISION[@]}" "${STRUCTURES[@]}"); fi
mkdir -p "$dir"

structures=$("$py" "$here/build_structures.py" --list)
status=0
for name in "${names[@]}"; do
  out="$dir/$name.onnx"
  [[ -f "$out" ]] && continue
  # A configuration other than the default is a suffix: NAME_bN (batch N), transformer_layer_sN
  # (sequence N), both as NAME_sN_bN.
  base=$name batch=1 seq=0
  if [[ $base =~ ^(.+)_b([0-9]+)$ ]]; then base=${BASH_REMATCH[1]} batch=${BASH_REMATCH[2]}; fi
  if [[ $base =~ ^(transformer_layer)_s([0-9]+)$ ]]; then base=${BASH_REMATCH[1]} seq=${BASH_REMATCH[2]}; fi
  if grep -qx "$base" <<<"$structures"; then
    cmd=("$py" "$here/build_structures.py" "$base" "$out.tmp" --batch "$batch")
    ((seq == 0)) || cmd+=(--seq "$seq")
  else
    cmd=("$py" "$here/export_torchvision.py" "$base" "$out.tmp" "$batch")
  fi
  echo "make_suite: $name" >&2
  if "${cmd[@]}" 2>"$dir/$name.make.err"; then
    mv "$out.tmp" "$out"
    rm -f "$dir/$name.make.err"
  else
    echo "make_suite: $name failed: $(tail -1 "$dir/$name.make.err")" >&2
    rm -f "$out.tmp"
    status=1
  fi
done
exit $status
