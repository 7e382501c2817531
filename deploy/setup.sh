#!/usr/bin/env bash
# Installs everything the project needs on Debian 12, from Debian's packages
# only, then builds. Idempotent: on a machine that is already set up it only
# checks and returns in seconds.
#   deploy/setup.sh            install and build
#   deploy/setup.sh --no-build install only
#   deploy/setup.sh --runtime  only the shared libraries the built binaries
#                              load (deploy/Dockerfile.cuda's last stage)
#   deploy/setup.sh --print-runtime-packages
#                              print RUNTIME_PACKAGES, one a line, and exit
#                              (deploy/package.sh's Depends come from it)
set -euo pipefail

# What the six binaries link against at run time (ldd, mapped with dpkg -S),
# besides libc, libstdc++, libgcc and CUDA (not a Debian package: copied into
# the CUDA image). The one list of them: deploy/package.sh reads it for the
# Debian package's Depends and fails when ldd finds a package missing here.
RUNTIME_PACKAGES=(
  libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 libre2-9 libc-ares2 libssl3
  librocksdb7.8 libsnappy1v5 liblz4-1 libzstd1 libgflags2.2
  libz3-4 libdnnl2 libonnx1 ocl-icd-libopencl1
  coinor-libcbc3 coinor-libcgl1 coinor-libclp1 coinor-libcoinutils3v5 coinor-libosi1v5
  libblas3 liblapack3 libgfortran5 libgomp1 libquadmath0
  libtcmalloc-minimal4
)

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
  libgoogle-perftools-dev  # tcmalloc: the binaries' allocator (third_party:tcmalloc)
  libz3-dev                # Z3 4.8.12: rule proofs
  libgtest-dev libgmock-dev  # GoogleTest 1.12
  libdnnl-dev              # oneDNN 2.6: CPU operator costs
  libonnx-dev              # ONNX 1.12: model import/export
  libonnx-testdata         # ONNX 1.12 conformance models (//onnx_io:onnx_testdata_test)
  python3-onnx             # build and inspect test models (/usr/bin/python3)
  python3-torchvision      # ResNet-50 and friends exported to ONNX (models/export_torchvision.py)
  coinor-libcbc-dev        # CBC: ILP extraction for equality saturation
  time                     # /usr/bin/time: peak RSS in bench/extract_run.sh
  graphviz                 # dot: `taso rules show --svg`, `taso optimize --diff-svg` (cli/svg_render)
  jq                       # reads --json reports: deploy/ci/taso-gate.sh, .ci/run's package test
)

if [[ "${1:-}" == "--print-runtime-packages" ]]; then
  printf '%s\n' "${RUNTIME_PACKAGES[@]}"
  exit 0
fi
if [[ "${1:-}" == "--runtime" ]]; then PACKAGES=("${RUNTIME_PACKAGES[@]}"); fi

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

[[ "${1:-}" == "--runtime" ]] && exit 0

# npm dependencies, each folder from its committed lockfile (npm ci), skipped
# when node_modules was installed from the same lockfile. node/npm are not
# among the Debian packages above.
#   npm_install DIR WHAT-NEEDS-IT
npm_install() {
  local dir="$root/$1" what=$2 lock_sum
  lock_sum=$(sha256sum "$dir/package-lock.json" | cut -d' ' -f1)
  [[ "$(cat "$dir/node_modules/.lock-sha256" 2>/dev/null)" == "$lock_sum" ]] && return 0
  echo "setup: installing $1 npm dependencies (npm ci)"
  if (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
    echo "$lock_sum" >"$dir/node_modules/.lock-sha256"
  else
    echo "setup: warning: npm ci in $1 failed; $what will not run" >&2
  fi
}
root="$(cd "$(dirname "$0")/.." && pwd)"
if command -v npm >/dev/null; then
  # onnxruntime-node (its .npmrc skips the CUDA download); only the benchmarks need it.
  npm_install bench/ort "bench/ort_compare.sh and bench/suite.sh"
  # The same onnxruntime-node for the profiler's ort backend (--backend ort); //profiler:ort_backend_test
  # skips its measurements without it, //tests/optimize:current_models_test fails.
  npm_install profiler/ort "the profiler's ort backend and //tests/optimize:current_models_test"
  # The Kubernetes schema validator; //deploy/k8s:k8s_manifests_test fails without it.
  npm_install deploy/k8s/validate "//deploy/k8s:k8s_manifests_test"
else
  echo "setup: warning: npm not found; the ONNX Runtime benchmarks, the ort backend and the manifest test will not run" >&2
fi
# kubectl renders the manifests offline (kubectl kustomize); it is not a Debian
# package here, so it is checked, not installed.
command -v kubectl >/dev/null ||
  echo "setup: warning: kubectl not found; //deploy/k8s:k8s_manifests_test will fail" >&2

# CUDA is not a Debian package here; the GPU code builds against /usr/local/cuda
# when it exists and its tests skip (saying why) where no GPU is present.
if [[ ! -e /usr/local/cuda/lib/libcudart.so ]]; then
  echo "setup: warning: /usr/local/cuda/lib/libcudart.so not found; the GPU targets will not build" >&2
fi

if [[ "${1:-}" != "--no-build" ]]; then
  cd "$(dirname "$0")/.."
  bazel build //...
fi
