#!/usr/bin/env bash
# Installs everything the project needs on Debian 12, from Debian's packages
# only, then builds. Idempotent: on a machine that is already set up it only
# checks and returns in seconds.
#   deploy/setup.sh            install and build
#   deploy/setup.sh --no-build install only
set -euo pipefail

PACKAGES=(
  bazel-bootstrap          # Bazel 4.2.3, the build
  g++                      # toolchain
  protobuf-compiler        # protoc 3.21
  libprotobuf-dev
  protobuf-compiler-grpc   # grpc_cpp_plugin
  libgrpc++-dev            # gRPC 1.51 (+ grpc++_reflection)
  libabsl-dev              # Abseil 20220623
  nlohmann-json3-dev       # nlohmann/json 3.11: the tools' --json output
  librocksdb-dev           # RocksDB 7.8: hash store, rule db, cost cache
  libz3-dev                # Z3 4.8.12: rule proofs
  libgtest-dev libgmock-dev  # GoogleTest 1.12
  libdnnl-dev              # oneDNN 2.6: CPU operator costs
  libonnx-dev              # ONNX 1.12: model import/export
  libonnx-testdata         # ONNX 1.12 conformance models (//optimizer/onnx:onnx_testdata_test)
  python3-onnx             # build and inspect test models (/usr/bin/python3)
  python3-torchvision      # ResNet-50 and friends exported to ONNX (models/export_torchvision.py)
  coinor-libcbc-dev        # CBC: ILP extraction for equality saturation
  time                     # /usr/bin/time: peak RSS in bench/extract_run.sh
)

missing=()
for pkg in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#PACKAGES[@]} Debian packages present"
fi

# onnxruntime-node for bench/ort_compare.sh, from npm with bench/ort's committed
# lockfile (its .npmrc skips the CUDA download). Skipped when node_modules was
# installed from the same lockfile. node/npm are not among the Debian packages above.
if command -v npm >/dev/null; then
  ort_dir="$(cd "$(dirname "$0")/.." && pwd)/bench/ort"
  lock_sum=$(sha256sum "$ort_dir/package-lock.json" | cut -d' ' -f1)
  if [[ "$(cat "$ort_dir/node_modules/.lock-sha256" 2>/dev/null)" != "$lock_sum" ]]; then
    echo "setup: installing bench/ort npm dependencies (npm ci)"
    if (cd "$ort_dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
      echo "$lock_sum" >"$ort_dir/node_modules/.lock-sha256"
    else  # only the benchmark needs it: the build and the tests go on
      echo "setup: warning: npm ci in bench/ort failed; bench/ort_compare.sh will not run" >&2
    fi
  fi
else
  echo "setup: warning: npm not found; bench/ort_compare.sh will not run" >&2
fi

# CUDA is not a Debian package here; the GPU code builds against /usr/local/cuda
# when it exists and its tests skip (saying why) where no GPU is present.
if [[ ! -e /usr/local/cuda/lib/libcudart.so ]]; then
  echo "setup: warning: /usr/local/cuda/lib/libcudart.so not found; the GPU targets will not build" >&2
fi

if [[ "${1:-}" != "--no-build" ]]; then
  cd "$(dirname "$0")/.."
  bazel build //...
fi
