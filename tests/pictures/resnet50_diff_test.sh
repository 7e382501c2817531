#!/usr/bin/env bash
# `taso optimize --diff-svg` on ResNet-50 as torchvision exports it (random weights):
# the picture shows the convolutions with their bias add and relu before, and the
# fused convolutions (act=relu) after. Needs python3-torchvision and Graphviz
# (deploy/setup.sh); fails saying so where either is missing.
source tests/generate/lib.sh
CHECK="$PWD/tests/pictures/check_svg.py"
command -v dot >/dev/null || fail "Graphviz's dot is not on PATH: run deploy/setup.sh (it installs graphviz)"
/usr/bin/python3 -c "import torchvision" || fail "python3-torchvision is missing: run deploy/setup.sh"
/usr/bin/python3 models/export_torchvision.py resnet50 "$WORK/resnet50.onnx" || fail "exporting resnet50"
# --export-baseline: the fusions are drawn even if the search finds nothing beyond what a
# runtime does itself (then the input would come back byte for byte: no changes to draw).
optimize_checked "$WORK/resnet50.onnx" -o "$WORK/resnet50.opt.onnx" --backend analytic --cache-dir none \
  --no-measure --export-baseline --time-limit 30 --diff-svg "$WORK/resnet50.svg" >"$WORK/out" 2>"$WORK/err" ||
  fail "optimize --diff-svg: $(cat "$WORK/err")"
grep "^diff picture:" "$WORK/out" || fail "no summary: $(cat "$WORK/out")"
/usr/bin/python3 "$CHECK" "$WORK/resnet50.svg" --text before --text after --text "input input" \
  --removed conv2d --removed "act=none" --removed relu --removed ewadd \
  --added conv2d --added "act=relu" || fail "the ResNet-50 diff picture"
check "ResNet-50: conv, bias add and relu before; fused convolutions after"
echo PASS
