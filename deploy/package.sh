#!/usr/bin/env bash
# Builds the six binaries with -c opt and writes the Debian 12 package
# dist/taso_VERSION_ARCH.deb (dpkg-deb; VERSION is core/version.h's kVersion).
#   deploy/package.sh               a CPU-only build: every library the binaries
#                                   load comes from a Debian package (Depends)
#   deploy/package.sh --local-cuda  the build with CUDA: the binaries load
#                                   libcudart, cuBLAS and cuDNN from
#                                   /usr/local/cuda, which no Debian package
#                                   provides, so the package works only where
#                                   they are (the description says so)
#   --no-build   package what an earlier build with the same options left
#   --out DIR    write the package to DIR (default: dist)
# Needs bazel, npm (the ONNX Runtime worker's node_modules, `npm ci` from
# profiler/ort/package-lock.json), jq, dpkg-deb, ldd, readelf and objdump.
#
# Layout: /usr/bin/taso* (and taso-gate: deploy/ci/taso-gate.sh), the ONNX
# Runtime worker in /usr/lib/taso/ort, the license, a README and two sample
# models in /usr/share/doc/taso. A binary finds the worker there only if its
# build looks in ../lib/taso/ort beside itself (profiler/ort/ort_worker.cc);
# otherwise the executables go to /usr/lib/taso/bin and /usr/bin holds
# wrappers that set TASO_ORT_WORKER.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

die() { echo "package: $*" >&2; exit 1; }

local_cuda=0 build=1 out=dist
while (($#)); do
  case $1 in
    --local-cuda) local_cuda=1 ;;
    --no-build) build=0 ;;
    --out) out=${2:?--out needs a directory}; shift ;;
    -h | --help) awk 'NR > 1 && /^#/ {sub(/^# ?/, ""); print; next} NR > 1 {exit}' "$0"; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
  shift
done

# The CPU-only build: @local_cuda and the CUDA backend left out, the profiler
# measuring with oneDNN and ONNX Runtime. A build whose BUILD files do not
# know the define ignores it; the library check below then says so.
CPU_ONLY_FLAGS=(--define=cuda=off)
BAZEL_FLAGS=(-c opt)
((local_cuda)) || BAZEL_FLAGS+=("${CPU_ONLY_FLAGS[@]}")

TARGETS=(//cli:taso //bin:taso_rules_db //bin:taso_generator //bin:taso_verifier
  //bin:taso_profiler //bin:taso_optimizer)
# The packages every C++ program here needs besides deploy/setup.sh's list.
BASE_PACKAGES=(libc6 libstdc++6 libgcc-s1)

version=$(sed -n 's/.*kVersion\[\] *= *"\([^"]*\)".*/\1/p' core/version.h)
[[ $version =~ ^[0-9][0-9A-Za-z.+~-]*$ ]] || die "no version in core/version.h (kVersion): '$version'"
arch=$(dpkg --print-architecture)
case $arch in
  amd64) node_arch=x64 ;;
  arm64) node_arch=arm64 ;;
  *) die "no ONNX Runtime build for $arch in onnxruntime-node" ;;
esac
for tool in bazel npm jq dpkg-deb ldd readelf objdump; do
  command -v "$tool" >/dev/null || die "$tool not found (deploy/setup.sh installs the build; npm is the nodejs/npm packages)"
done
mapfile -t runtime_packages < <(deploy/setup.sh --print-runtime-packages)
((${#runtime_packages[@]})) || die "deploy/setup.sh --print-runtime-packages printed nothing"

if ((build)); then
  echo "package: bazel build ${BAZEL_FLAGS[*]} (the six binaries)"
  # --symlink_prefix=/: bazel-bin and friends keep pointing at the developer's own build.
  bazel build "${BAZEL_FLAGS[@]}" --symlink_prefix=/ "${TARGETS[@]}"
fi
bin_dir=$(bazel info "${BAZEL_FLAGS[@]}" bazel-bin 2>/dev/null)
binaries=()
for t in "${TARGETS[@]}"; do
  b="$bin_dir/${t#//}"
  b="${b/://}"
  [[ -x $b ]] || die "$b is missing: run without --no-build"
  binaries+=("$b")
done

# --- what the binaries load, and from which Debian package ---
declare -A lib_path=() lib_real=() lib_users=() lib_direct=()
for b in "${binaries[@]}"; do
  name=${b##*/}
  while read -r soname; do lib_direct[$soname]=1; done < <(readelf -d "$b" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  while read -r lib arrow path _; do
    [[ $arrow == "=>" ]] || continue # linux-vdso, the loader itself (libc6)
    [[ $path == "not" ]] && path="not found"
    lib_path[$lib]=$path
    lib_users[$lib]+="$name "
  done < <(ldd "$b")
done
while IFS='|' read -r lib real; do lib_real[$lib]=$real; done < <(
  for lib in "${!lib_path[@]}"; do echo "$lib|$(readlink -f "${lib_path[$lib]}" 2>/dev/null)"; done)
# One dpkg-query for every library, under each spelling a /usr-merged system
# may have registered it by: as ldd found it, with /usr added or dropped,
# resolved.
declare -A owner=()
spellings=()
for lib in "${!lib_path[@]}"; do
  p=${lib_path[$lib]}
  [[ $p == /* ]] && spellings+=("$p" "/usr$p" "${p#/usr}" "${lib_real[$lib]}")
done
while IFS= read -r line; do
  [[ $line == *": /"* ]] || continue
  pkg=${line%%: /*}   # "libfoo1:amd64: /path" or "libfoo1, libbar2: /path"
  pkg=${pkg%%,*}
  owner[${line##*: }]=${pkg%%:*}
done < <(dpkg-query -S "${spellings[@]}" 2>/dev/null)
declare -A pkg_needed_by=()
cuda_libs=() bad=0
for lib in "${!lib_path[@]}"; do
  p=${lib_path[$lib]} pkg=""
  for q in "$p" "/usr$p" "${p#/usr}" "${lib_real[$lib]}"; do
    pkg=${owner[$q]:-}
    [[ -n $pkg ]] && break
  done
  if [[ -n $pkg ]]; then
    # What the binaries link directly; the rest comes with those libraries'
    # own packages (their Depends).
    [[ -n ${lib_direct[$lib]:-} ]] && pkg_needed_by[$pkg]+="${lib_users[$lib]}"
  elif ((local_cuda)) && [[ ${lib_real[$lib]} == /usr/local/cuda* ]]; then
    cuda_libs+=("$lib")
  else
    echo "package: $lib ($p), loaded by ${lib_users[$lib]% }, comes from no Debian package" >&2
    bad=1
  fi
done
if ((bad)); then
  ((local_cuda)) && die "the binaries need libraries no Debian package provides (above)"
  die "a Debian package cannot depend on the libraries above. If they are CUDA's, the build ignored \
${CPU_ONLY_FLAGS[*]} (the CPU-only build: profiler/BUILD.bazel's cuda_backend must leave @local_cuda out under it); \
or pass --local-cuda for a package that works only where /usr/local/cuda holds them"
fi
missing=()
for pkg in "${!pkg_needed_by[@]}"; do
  users=$(tr ' ' '\n' <<<"${pkg_needed_by[$pkg]}" | sort -u | paste -sd' ' | sed 's/^ //')
  [[ " ${runtime_packages[*]} ${BASE_PACKAGES[*]} " == *" $pkg "* ]] || missing+=("$pkg (loaded by $users)")
done
((${#missing[@]} == 0)) ||
  die "deploy/setup.sh's RUNTIME_PACKAGES lacks libraries the binaries link: ${missing[*]}"
# The newest glibc symbol version any binary uses.
glibc=$(objdump -T "${binaries[@]}" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)

# --- the package tree ---
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
umask 022
pkg="$stage/taso_${version}_${arch}"
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/lib/taso/ort" "$pkg/usr/share/doc/taso"

# Does the build look for the worker in ../lib/taso/ort beside the binary?
worker_found_installed=1
for b in "${binaries[@]}"; do
  case $(basename "$b") in taso | taso_optimizer | taso_profiler) ;; *) continue ;; esac
  grep -qaF "/lib/taso/ort/worker.js" "$b" || worker_found_installed=0
done
if ((worker_found_installed)); then
  exe_dir=/usr/bin
else
  exe_dir=/usr/lib/taso/bin
  mkdir -p "$pkg$exe_dir"
fi
for b in "${binaries[@]}"; do
  name=$(basename "$b")
  install -m 0755 "$b" "$pkg$exe_dir/$name"
  strip --strip-debug "$pkg$exe_dir/$name"
  ((worker_found_installed)) && continue
  cat >"$pkg/usr/bin/$name" <<EOF
#!/bin/sh
# The taso package: $exe_dir/$name with the ONNX Runtime worker installed in
# /usr/lib/taso/ort (this build does not look there by itself).
TASO_ORT_WORKER=\${TASO_ORT_WORKER:-/usr/lib/taso/ort/worker.js}
export TASO_ORT_WORKER
exec $exe_dir/$name "\$@"
EOF
  chmod 0755 "$pkg/usr/bin/$name"
done

# The CI gate on `taso optimize --json` reports (docs/ci.md); it needs jq.
install -m 0755 deploy/ci/taso-gate.sh "$pkg/usr/bin/taso-gate"

# The ONNX Runtime worker: its files and production node_modules from the
# lockfile, with onnxruntime-node's prebuilt libraries for this platform only.
ort="$pkg/usr/lib/taso/ort"
cp profiler/ort/worker.js profiler/ort/random_feeds.js profiler/ort/package.json profiler/ort/package-lock.json "$ort/"
cp profiler/ort/.npmrc "$ort/" # onnxruntime-node-install=skip: no CUDA provider download
echo "package: npm ci --omit=dev in the ONNX Runtime worker"
(cd "$ort" && npm ci --omit=dev --no-audit --no-fund --loglevel=error >/dev/null) || die "npm ci in profiler/ort failed"
rm -f "$ort/.npmrc"
[[ -f $ort/node_modules/onnxruntime-node/package.json ]] || die "npm ci installed no onnxruntime-node"
for napi in "$ort"/node_modules/onnxruntime-node/bin/napi-v*; do
  for platform in "$napi"/*/; do
    for a in "$platform"*/; do
      [[ $platform == */linux/ && $a == */$node_arch/ ]] || rm -rf "$a"
    done
    rmdir --ignore-fail-on-non-empty "$platform"
  done
done
ls "$ort"/node_modules/onnxruntime-node/bin/napi-v*/linux/"$node_arch"/onnxruntime_binding.node >/dev/null 2>&1 ||
  die "onnxruntime-node has no linux/$node_arch binding"
find "$ort" -type d -exec chmod 0755 {} + && find "$ort" -type f -exec chmod go-w,a+r {} +

# Documentation: the license, then the bundled npm packages' own licenses.
{
  cat LICENSE
  printf '\n\nBundled in /usr/lib/taso/ort/node_modules (npm packages, each under its own license,\n'
  printf 'its text in the package'"'"'s directory there):\n\n'
  (cd "$ort" && for d in node_modules/*/ node_modules/@*/*/; do
    [[ -f $d/package.json ]] || continue
    jq -r '"  \(.name) \(.version): \(.license // "see its directory")"' "$d/package.json"
  done)
} >"$pkg/usr/share/doc/taso/copyright"
cp deploy/debian/README "$pkg/usr/share/doc/taso/README"
# Sample models to try it on (docs/install.md): the optimizer tests' conv+relu
# and shared-input matmuls.
mkdir -p "$stage/models" "$pkg/usr/share/doc/taso/examples"
/usr/bin/python3 tests/optimize/make_models.py "$stage/models" >/dev/null ||
  die "making the sample models (tests/optimize/make_models.py needs python3-onnx)"
install -m 0644 "$stage/models/convrelu.onnx" "$stage/models/matmuls.onnx" "$pkg/usr/share/doc/taso/examples/"

depends="libc6 (>= ${glibc:-2.36}), libstdc++6, libgcc-s1"
for p in "${runtime_packages[@]}"; do depends+=", $p"; done
description="deep-learning graph superoptimizer (TASO, distributed)
 Discovers tensor graph substitutions by enumeration and fingerprinting,
 proves them from operator axioms with Z3, keeps them in a RocksDB rule
 database, measures operator costs on real kernels (oneDNN on a CPU) and
 rewrites ONNX models into faster equivalent ones by cost-based search
 (taso optimize), checked numerically and timed against the input in
 ONNX Runtime (node, recommended) before they are returned.
 .
 The command line (taso) and the five servers of a distributed setup:
 taso_rules_db, taso_generator, taso_verifier, taso_profiler and
 taso_optimizer."
if ((local_cuda)); then
  description+="
 .
 This build loads the CUDA runtime from /usr/local/cuda/lib64, which no
 Debian package provides: it runs only where these are installed there:
 ${cuda_libs[*]}."
fi
cat >"$pkg/DEBIAN/control" <<EOF
Package: taso
Version: $version
Architecture: $arch
Maintainer: ${TASO_MAINTAINER:-the TASO, distributed authors <taso@localhost>}
Installed-Size: $(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
Depends: $depends
Recommends: nodejs, graphviz, jq
Section: science
Priority: optional
Description: $description
EOF
(cd "$pkg" && find usr -type f -print0 | sort -z | xargs -0 md5sum) >"$pkg/DEBIAN/md5sums"

mkdir -p "$out"
deb="$out/taso_${version}_${arch}.deb"
# Reproducible timestamps: the last commit's time, when there is one.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)} \
  dpkg-deb --root-owner-group -Zxz --build "$pkg" "$deb" >/dev/null
if ((worker_found_installed)); then
  echo "package: executables in /usr/bin (they find /usr/lib/taso/ort/worker.js)"
else
  echo "package: executables in /usr/lib/taso/bin, wrappers in /usr/bin set TASO_ORT_WORKER=/usr/lib/taso/ort/worker.js"
fi
((local_cuda)) && echo "package: loads ${cuda_libs[*]} from /usr/local/cuda (not in Depends)"
echo "package: wrote $deb ($(du -h "$deb" | cut -f1), installed $(($(du -sk --exclude=DEBIAN "$pkg" | cut -f1) / 1024)) MiB)"
