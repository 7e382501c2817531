#!/usr/bin/env bash
# Renders every overlay, and the workloads with every combination of the
# components (secure or plaintext, gpu, monitoring), with `kubectl kustomize`
# and validates each (validate/validate.mjs: the Kubernetes OpenAPI schemas
# and the invariants the cluster relies on); then checks that the validator
# rejects what it must.
set -euo pipefail

fail() { echo "FAIL: $*" >&2; exit 1; }
check() { echo "ok: $*"; }

command -v kubectl >/dev/null || fail "kubectl not found: it renders the manifests (kubectl kustomize)"
command -v node >/dev/null || fail "node not found: it runs the schema validator"
# Render from the source tree: kustomize refuses files that resolve outside
# the kustomization root, which Bazel's runfiles symlinks do.
src=$(dirname "$(readlink -f deploy/k8s/validate/validate.mjs)")/..
src=$(cd "$src" && pwd)
[[ -d "$src/validate/node_modules/kubernetes-models" ]] ||
  fail "$src/validate/node_modules is missing: run deploy/setup.sh (npm ci in deploy/k8s/validate)"
tmp="${TEST_TMPDIR:-$(mktemp -d)}"
validate() { node "$src/validate/validate.mjs" "$@"; }

expect_flags() {  # the validator flags a render's parts call for
  local parts=$1
  [[ $parts == *gpu* ]] && printf '%s\n' --expect-gpu
  [[ $parts == *secure* ]] && printf '%s\n' --expect-tls
  [[ $parts == *monitoring* ]] && printf '%s\n' --expect-monitoring
  true
}
render_and_validate() {  # NAME DIR PARTS
  local name=$1 dir=$2 parts=$3
  kubectl kustomize "$dir" >"$tmp/$name.yaml" || fail "kubectl kustomize $name"
  local out
  mapfile -t extra < <(expect_flags "$parts")
  out=$(validate "$tmp/$name.yaml" "${extra[@]}") || fail "$name does not validate: $out"
  echo "$out" >"$tmp/$name.out"
  grep -q "^valid StatefulSet/taso-store$" <<<"$out" || fail "$name has no store StatefulSet"
  grep -q "^valid Job/taso-generate$" <<<"$out" || fail "$name has no generation Job"
  check "$name renders and validates ($(tail -1 <<<"$out"))"
}
# The overlays: dev is the plaintext opt-out, gpu the secure base with the gpu
# and monitoring components, secure the secure base with its Ingress.
render_and_validate dev "$src/overlays/dev" plaintext
render_and_validate gpu "$src/overlays/gpu" "secure gpu monitoring"
render_and_validate secure "$src/overlays/secure" secure
render_and_validate base "$src/base" secure
# Every combination of the components over the workloads, each in a
# kustomization of its own beside the test (kustomize takes relative paths only).
combos=0
for security in secure plaintext; do
  for gpu in "" gpu; do
    for monitoring in "" monitoring; do
      name="combo-$security${gpu:+-$gpu}${monitoring:+-$monitoring}"
      mkdir -p "$tmp/$name"
      rel=$(realpath --relative-to="$tmp/$name" "$src")
      {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        echo "resources: [$rel/workloads]"
        echo "components:"
        for part in $security $gpu $monitoring; do echo "  - $rel/components/$part"; done
      } >"$tmp/$name/kustomization.yaml"
      render_and_validate "$name" "$tmp/$name" "$security $gpu $monitoring"
      combos=$((combos + 1))
    done
  done
done
((combos == 8)) || fail "only $combos combinations rendered"
# The secure base with its certificates issued by cert-manager.
mkdir -p "$tmp/certs"
rel=$(realpath --relative-to="$tmp/certs" "$src")
printf 'resources: [%s/base]\ncomponents: [%s/components/cert-manager]\n' "$rel" "$rel" >"$tmp/certs/kustomization.yaml"
kubectl kustomize "$tmp/certs" >"$tmp/certs.yaml" || fail "kubectl kustomize base + components/cert-manager"
out=$(validate "$tmp/certs.yaml" --expect-tls --expect-certificates) || fail "base + cert-manager does not validate: $out"
check "base + components/cert-manager renders and validates ($(tail -1 <<<"$out"))"
# The overlay bench/estimate.py writes for a planned job: the base with the plan's shards, stores,
# verifiers and volumes (planned from the synthetic measurement its own test checks).
python3 bench/estimate.py --plan-only bench/testdata/estimate-synthetic.json --machines 3 --cores 8 \
  --k8s-base "$src/base" --overlay "$tmp/planned" --json >"$tmp/planned.json" || fail "bench/estimate.py --overlay"
render_and_validate planned "$tmp/planned" secure
read -r shards stores verifiers < <(python3 -c 'import json, sys; p = json.load(open(sys.argv[1]))["plan"]
print(p["shards"], p["stores"], p["verifier_replicas"])' "$tmp/planned.json")
grep -q "SHARDS: \"$shards\"" "$tmp/planned.yaml" || fail "the planned render does not run $shards shards"
[[ $(grep -c "taso-store-[0-9]*.taso-store:7070" <<<"$(grep 'STORES:' "$tmp/planned.yaml" | tr ',' '\n')") == "$stores" ]] ||
  fail "the planned render does not list $stores stores: $(grep 'STORES:' "$tmp/planned.yaml")"
check "the planned job's overlay: $shards shards over $stores stores, $verifiers verifiers"
grep -q "namespace: taso-dev" "$tmp/dev.yaml" || fail "the dev overlay does not set its namespace"
# components/gpu runs the CUDA image (deploy/Dockerfile.cuda), everything else the CPU one (deploy/Dockerfile).
grep "image:" "$tmp/gpu.yaml" "$tmp/combo-secure-gpu.yaml" | grep -vq -- "-cuda\"\?$" && fail "a gpu render runs an image without CUDA"
grep "image:" "$tmp/dev.yaml" "$tmp/secure.yaml" "$tmp/base.yaml" | grep -q -- "-cuda\"\?$" && fail "a cpu render runs the CUDA image"
check "components/gpu runs the CUDA image, the others the CPU one"
# The optimizer's gRPC port for CI jobs (docs/ci.md), over TLS, in the secure overlay only.
grep -q "^valid Ingress/taso-optimizer$" "$tmp/secure.out" || fail "overlays/secure has no Ingress for the optimizer"
grep -q "kind: Ingress" "$tmp/dev.yaml" && fail "the plaintext overlay exposes the optimizer through an Ingress"
check "overlays/secure exposes the optimizer through an Ingress, the plaintext dev overlay does not"
# The workloads alone are neither secure nor opted out: their servers would not start.
kubectl kustomize "$src/workloads" >"$tmp/workloads.yaml" || fail "kubectl kustomize workloads"
expect_rejected_early() {
  if out=$(validate "$tmp/workloads.yaml"); then fail "accepted the workloads without TLS or --insecure"; fi
  grep -qF "without --insecure refuses to start" <<<"$out" || fail "the workloads rejected for another reason: $out"
}
expect_rejected_early
check "rejects the workloads without components/secure or components/plaintext"
# Every metric an alert rule reads is one a binary exports.
metrics=0
while read -r metric; do
  [[ $metric == up ]] && continue
  grep -qa -- "$metric" cli/taso bin/taso_rules_db bin/taso_generator bin/taso_verifier bin/taso_profiler \
    bin/taso_optimizer || fail "an alert reads $metric, which no binary exports"
  metrics=$((metrics + 1))
done < <(validate "$tmp/gpu.yaml" --list-metrics)
((metrics >= 4)) || fail "only $metrics metrics found in the alert rules: the scan is broken"
grep -qa -- "taso_no_such_metric_total" bin/taso_optimizer && fail "the metric scan finds a name no binary has"
check "all $metrics metrics the alert rules read are exported by a binary"

# Every flag the manifests pass exists in the binary they pass it to.
declare -A bin=([taso]=cli/taso [taso_rules_db]=bin/taso_rules_db [taso_generator]=bin/taso_generator
  [taso_verifier]=bin/taso_verifier [taso_profiler]=bin/taso_profiler [taso_optimizer]=bin/taso_optimizer)
flags=0
# Each binary's --helpfull and --help (absl lists every flag under the first,
# our own flag parsing under the second), for a taso command (validate.mjs
# lists it as taso+job+create) `taso job create --help`; run once each. A
# flag is listed as --flag_name (absl) or --flag-name (ours).
declare -A help=()
for overlay in dev gpu secure combo-plaintext-gpu-monitoring; do
  while read -r key flag; do
    binary=${key%%+*}
    [[ -x "${bin[$binary]}" ]] || fail "no binary for $binary"
    if [[ -z ${help[$key]:-} ]]; then
      read -ra command <<<"${key//+/ }"
      help[$key]="$("${bin[$binary]}" --helpfull 2>&1 || true)$("${bin[$binary]}" "${command[@]:1}" --help 2>&1 || true)"
    fi
    grep -Eq -- "--(${flag//-/_}|${flag//_/-})( |=)" <<<"${help[$key]}" ||
      fail "overlays/$overlay passes --$flag to ${key//+/ }, which has no such flag"
    flags=$((flags + 1))
  done < <(validate "$tmp/$overlay.yaml" --list-flags)
done
((flags > 20)) || fail "only $flags flags found in the manifests: the scan is broken"
check "all $flags flags the manifests pass exist in their binaries"

# The validator must reject: a schema error, and each invariant broken once.
expect_rejected() {  # FILE MESSAGE-FRAGMENT WHAT [validate flags]
  local file=$1 fragment=$2 what=$3
  shift 3
  if out=$(validate "$file" "$@"); then fail "accepted $what"; fi
  grep -qF -- "$fragment" <<<"$out" || fail "$what: rejected without saying '$fragment': $out"
  check "rejects $what"
}
sed 's/containerPort: 7070/containerPort: "grpc-port"/' "$tmp/dev.yaml" >"$tmp/bad-schema.yaml"
expect_rejected "$tmp/bad-schema.yaml" "containerPort must be integer" "a string container port" --schema-only
sed 's/terminationGracePeriodSeconds: 180/terminationGracePeriodSeconds: 30/' "$tmp/dev.yaml" >"$tmp/bad-grace.yaml"
expect_rejected "$tmp/bad-grace.yaml" "grace period 30s < its drain 150s" "an optimizer grace period below its drain"
sed 's/--drain_seconds=50/--drain_seconds=90/' "$tmp/dev.yaml" >"$tmp/bad-profiler-drain.yaml"
expect_rejected "$tmp/bad-profiler-drain.yaml" "profiler grace period 60s < its drain 90s" \
  "a profiler drain past its grace period"
sed 's/completions: 4/completions: 3/' "$tmp/dev.yaml" >"$tmp/bad-shards.yaml"
expect_rejected "$tmp/bad-shards.yaml" "completions 3 != SHARDS 4" "a generation Job with fewer completions than shards"
sed 's/completionMode: Indexed/completionMode: NonIndexed/' "$tmp/dev.yaml" >"$tmp/bad-indexed.yaml"
expect_rejected "$tmp/bad-indexed.yaml" "must be an Indexed Job" "a generation Job that is not Indexed"
sed 's/prometheus.io\/port: "9090"/prometheus.io\/port: "9091"/' "$tmp/dev.yaml" >"$tmp/bad-metrics.yaml"
expect_rejected "$tmp/bad-metrics.yaml" "no prometheus.io/port annotation for 9090" "a metrics port without its scrape annotation"
validate "$tmp/dev.yaml" --expect-gpu >"$tmp/dev-gpu.out" && fail "the dev overlay passed --expect-gpu without a GPU"
grep -q "must request nvidia.com/gpu" "$tmp/dev-gpu.out" || fail "--expect-gpu rejected dev for another reason"
check "rejects a cpu-only profiler where a GPU is expected"
expect_rejected "$tmp/dev.yaml" "a server without --tls_cert" "a plaintext server where TLS is expected" --expect-tls
grep -v -- "--token_file=/etc/taso/tokens/worker-token" "$tmp/secure.yaml" >"$tmp/bad-token.yaml"
expect_rejected "$tmp/bad-token.yaml" "a client without a token" "a TLS client without its token" --expect-tls
sed 's/- 127.0.0.1:7070$/- 127.0.0.1:7071/' "$tmp/secure.yaml" >"$tmp/bad-probe.yaml"
expect_rejected "$tmp/bad-probe.yaml" "must be an exec probe" "a TLS server probed on the wrong port"
sed 's/backend-protocol: GRPCS$/backend-protocol: GRPC/' "$tmp/secure.yaml" >"$tmp/bad-ingress-protocol.yaml"
expect_rejected "$tmp/bad-ingress-protocol.yaml" "for a TLS gRPC server (want GRPCS)" "an Ingress speaking plaintext gRPC to a TLS server"
awk '/^kind: Ingress$/ {i = 1} /^---$/ {i = 0} i && /^ +name: grpc$/ {sub(/grpc/, "grpc-typo")} {print}' "$tmp/secure.yaml" \
  >"$tmp/bad-ingress-port.yaml"
expect_rejected "$tmp/bad-ingress-port.yaml" "is no Service port" "an Ingress to a port the Service does not have"
# Secure: per-pod Secret items (no server key in a client pod, no worker token in the optimizer).
sed 's/^\( *\)- key: ca.crt$/\1- key: tls.key\n\1  path: tls.key\n\1- key: ca.crt/' "$tmp/secure.yaml" >"$tmp/bad-key.yaml"
expect_rejected "$tmp/bad-key.yaml" "a pod that serves nothing mounts the server key tls.key" "a client pod given the server key" --expect-tls
sed 's/- key: optimizer-token$/- key: worker-token/; s/path: optimizer-token$/path: worker-token/' "$tmp/secure.yaml" \
  >"$tmp/bad-token-item.yaml"
expect_rejected "$tmp/bad-token-item.yaml" "mounts worker-token, which no process in it sends" "the optimizer given the worker token" --expect-tls
sed 's/worker-token/admin-token/g' "$tmp/secure.yaml" >"$tmp/bad-admin.yaml"
expect_rejected "$tmp/bad-admin.yaml" "mounts admin-token, which only taso-prune" "workers given the admin token" --expect-tls
# The verified job is pruned over every shard in the cluster.
awk 'BEGIN {RS = "---\n"; ORS = "---\n"} !/name: taso-prune\n/' "$tmp/dev.yaml" >"$tmp/bad-prune.yaml"
expect_rejected "$tmp/bad-prune.yaml" "Job taso-prune (prunes the verified job over every shard) is missing" "a setup that never prunes the union"
awk '{print} /^ *- mountPath: \/etc\/taso\/tls$/ && !done {sub(/- mountPath: .*/, "  subPath: tls.crt"); print; done = 1}' \
  "$tmp/secure.yaml" >"$tmp/bad-subpath.yaml"
expect_rejected "$tmp/bad-subpath.yaml" "by subPath, which a renewal never updates" "a certificate mounted by subPath" --expect-tls
# One certificate per service, and no opt-out inside the secure setup.
sed 's/secretName: taso-profiler-tls$/secretName: taso-store-tls/' "$tmp/secure.yaml" >"$tmp/bad-shared-cert.yaml"
expect_rejected "$tmp/bad-shared-cert.yaml" "one certificate per service" "two servers sharing one certificate" --expect-tls
awk '{print} /^ *- --tokens_file=/ && !done {sub(/--tokens_file=.*/, "--insecure"); print; done = 1}' "$tmp/secure.yaml" \
  >"$tmp/bad-insecure.yaml"
expect_rejected "$tmp/bad-insecure.yaml" "--insecure in a secure setup" "--insecure on a TLS server" --expect-tls
# cert-manager: a Certificate for every mounted TLS Secret, covering what is dialed.
expect_rejected "$tmp/secure.yaml" "no Certificate" "TLS Secrets nothing issues where cert-manager is expected" --expect-certificates
sed '0,/^  - 127.0.0.1$/{/^  - 127.0.0.1$/d}' "$tmp/certs.yaml" >"$tmp/bad-cert-ip.yaml"
expect_rejected "$tmp/bad-cert-ip.yaml" "does not cover 127.0.0.1" "a certificate the probes cannot verify"
sed "s/^  - '\*.taso-store'$/  - taso-store-0.taso-store/" "$tmp/certs.yaml" >"$tmp/bad-cert-pods.yaml"
expect_rejected "$tmp/bad-cert-pods.yaml" "does not cover the pods of taso-store" "a store certificate without its pods' names"
# Monitoring: the PodMonitor scrapes every metrics port.
sed 's/port: metrics$/port: metrix/' "$tmp/gpu.yaml" >"$tmp/bad-monitor.yaml"
expect_rejected "$tmp/bad-monitor.yaml" "does not scrape" "a PodMonitor on a port name no pod declares" --expect-monitoring
expect_rejected "$tmp/secure.yaml" "no PodMonitor" "a setup without monitoring where it is expected" --expect-monitoring
sed 's/^\( *\)expr: up{/\1exprr: up{/' "$tmp/gpu.yaml" >"$tmp/bad-rule.yaml"
expect_rejected "$tmp/bad-rule.yaml" "has no expr" "an alert rule without an expression"
# The operator's policies: restricted pods, start-up probes, disruption budgets, labels, spread shards.
sed 's/type: RuntimeDefault$/type: Unconfined/' "$tmp/dev.yaml" >"$tmp/bad-seccomp.yaml"
expect_rejected "$tmp/bad-seccomp.yaml" "has no seccompProfile RuntimeDefault (restricted)" "a pod without the runtime's seccomp profile"
sed 's/allowPrivilegeEscalation: false$/allowPrivilegeEscalation: true/' "$tmp/dev.yaml" >"$tmp/bad-escalation.yaml"
expect_rejected "$tmp/bad-escalation.yaml" "must set allowPrivilegeEscalation: false" "a container that may escalate privileges"
sed 's/- ALL$/- NET_RAW/' "$tmp/dev.yaml" >"$tmp/bad-caps.yaml"
expect_rejected "$tmp/bad-caps.yaml" "must drop ALL capabilities" "a container keeping its capabilities"
awk '/startupProbe:/ {skip = 5} skip > 0 {skip--; next} {print}' "$tmp/dev.yaml" >"$tmp/bad-startup.yaml"
expect_rejected "$tmp/bad-startup.yaml" "startupProbe must be a gRPC probe" "a server without a start-up probe"
awk 'BEGIN {RS = "---\n"; ORS = "---\n"} !/kind: PodDisruptionBudget/' "$tmp/dev.yaml" >"$tmp/bad-pdb.yaml"
expect_rejected "$tmp/bad-pdb.yaml" "no PodDisruptionBudget selects its pods" "a store and optimizer without disruption budgets"
sed '/app.kubernetes.io\/name: taso$/d' "$tmp/dev.yaml" >"$tmp/bad-labels.yaml"
expect_rejected "$tmp/bad-labels.yaml" "lack the recommended label app.kubernetes.io/name" "pods without the recommended labels"
sed 's/topologyKey: kubernetes.io\/hostname$/topologyKey: topology.kubernetes.io\/zone/' "$tmp/dev.yaml" >"$tmp/bad-spread.yaml"
expect_rejected "$tmp/bad-spread.yaml" "must spread over nodes" "store shards that may share a node"
echo "PASS"
