#!/usr/bin/env bash
# `taso up` with TLS (a CA made here with openssl) and a tokens file starts
# two stores, a profiler, an optimizer and a verifier that all pass their
# health checks; `taso up` again says it runs; `taso optimize --server` with an
# optimize token optimizes a model while the same call without a token is
# refused; `taso generate` fills the cluster's stores; `taso down` stops every
# process (their pids are gone) and `taso status` then reports nothing running.
# With no security flags `taso up` makes its own CA and tokens (a plaintext
# client is refused); --insecure runs plaintext.
source tests/generate/lib.sh
command -v openssl >/dev/null || fail "openssl is needed to make the test CA"
CLUSTER="$WORK/cluster"
PIDS_FILE="$WORK/pids"
# If the test fails half-way, stop whatever `taso up` left running.
trap '"$TASO" down "$CLUSTER" >/dev/null 2>&1 || true' EXIT

# --- a CA, a server certificate for 127.0.0.1, tokens for three roles
pki="$WORK/pki" && mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=taso test CA" \
  -keyout "$pki/ca.key" -out "$pki/ca.pem" 2>/dev/null || fail "making the CA"
openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$pki/server.key" -out "$pki/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$pki/server.ext"
openssl x509 -req -in "$pki/server.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
  -extfile "$pki/server.ext" -out "$pki/server.pem" 2>/dev/null || fail "signing the server certificate"
for role in read worker optimize; do
  openssl rand -hex 24 >"$WORK/$role.token"
  printf '%s %s\n' "$role" "$(tr -d '\n' <"$WORK/$role.token" | sha256sum | cut -d' ' -f1)"
done >"$WORK/tokens"

# --- up: a missing worker token is a usage error, before anything starts
set +e
"$TASO" up "$CLUSTER" --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" --tls-ca "$pki/ca.pem" \
  --tokens-file "$WORK/tokens" --optimizer-token-file "$WORK/optimize.token" >"$WORK/noworker.out" 2>&1; code=$?
set -e
[ $code -eq 2 ] && grep -q "worker-token-file" "$WORK/noworker.out" || fail "up without a worker token: exit $code, $(cat "$WORK/noworker.out")"
[ ! -e "$CLUSTER/cluster.json" ] || fail "a refused up wrote cluster.json"
check "up without --worker-token-file is refused with exit 2 and starts nothing"

# --- a process that cannot start: up stops what it started and shows that process's log
set +e
"$TASO" up "$WORK/broken" --verifiers 0 --rules "$WORK/no-such-rules.pb" --startup-timeout 30 >"$WORK/broken.out" 2>&1
code=$?
set -e
[ $code -eq 1 ] && grep -q "optimizer exited" "$WORK/broken.out" && grep -q "stopped the 3 processes" "$WORK/broken.out" ||
  fail "up with a missing rules file: exit $code, $(cat "$WORK/broken.out")"
grep -q "no-such-rules" "$WORK/broken.out" || fail "the optimizer's log lines are not shown: $(cat "$WORK/broken.out")"
[ ! -e "$WORK/broken/cluster.json" ] || fail "a failed up wrote cluster.json"
sleep 0.5
if pgrep -f "$WORK/broken/" >/dev/null; then fail "processes of the failed up still run: $(pgrep -af "$WORK/broken/")"; fi
check "a process that fails to start: exit 1, its log lines shown, the others stopped"

up() {
  "$TASO" up "$CLUSTER" --stores 2 --verifiers 1 --tls-cert "$pki/server.pem" --tls-key "$pki/server.key" \
    --tls-ca "$pki/ca.pem" --tokens-file "$WORK/tokens" --optimizer-token-file "$WORK/optimize.token" \
    --worker-token-file "$WORK/worker.token" "$@"
}
up >"$WORK/up.out" 2>&1 || fail "taso up: $(cat "$WORK/up.out")"
[ -s "$CLUSTER/cluster.json" ] || fail "no cluster.json: $(cat "$WORK/up.out")"
OADDR=$(sed -n 's/.*--server \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/up.out" | head -1)
STORES=$(sed -n 's/.*generate --store \([0-9.:,]*\) .*/\1/p' "$WORK/up.out" | head -1)
[ -n "$OADDR" ] && [ -n "$STORES" ] || fail "up printed no addresses: $(cat "$WORK/up.out")"
grep -q -- "--tls-ca $pki/ca.pem" "$WORK/up.out" || fail "up did not print the TLS flags to use: $(cat "$WORK/up.out")"
sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$CLUSTER/cluster.json" >"$PIDS_FILE"
[ "$(wc -l <"$PIDS_FILE")" -eq 5 ] || fail "expected 5 processes in cluster.json: $(cat "$CLUSTER/cluster.json")"
while read -r pid; do kill -0 "$pid" || fail "pid $pid of cluster.json is not running"; done <"$PIDS_FILE"
check "up: 2 stores, profiler, optimizer, verifier over TLS with tokens ($OADDR; stores $STORES)"

"$TASO" status "$CLUSTER" >"$WORK/status.out" 2>&1 || fail "status after up: $(cat "$WORK/status.out")"
[ "$(grep -c 'SERVING$' "$WORK/status.out")" -eq 4 ] && [ "$(grep -c 'RUNNING$' "$WORK/status.out")" -eq 1 ] ||
  fail "status: $(cat "$WORK/status.out")"
"$TASO" status "$CLUSTER" --json >"$WORK/status.json" || fail "status --json"
grep -q '"running": true' "$WORK/status.json" || fail "status --json: $(cat "$WORK/status.json")"
check "status: the four servers SERVING (gRPC health over TLS), the verifier RUNNING"
# The exec probe a TLS server gets in Kubernetes: taso health over TLS, no token.
"$TASO" health "$OADDR" --tls-ca "$pki/ca.pem" >"$WORK/health.out" 2>&1 || fail "taso health: $(cat "$WORK/health.out")"
grep -q "SERVING$" "$WORK/health.out" || fail "taso health: $(cat "$WORK/health.out")"
if env -u TASO_TLS_CA "$TASO" health "$OADDR" --startup-timeout 2 >"$WORK/plainhealth.out" 2>&1; then
  fail "taso health in plaintext against a TLS server said SERVING"
fi
check "taso health: SERVING over TLS without a token, NOT_SERVING in plaintext"

up >"$WORK/again.out" 2>&1 || fail "a second up on a running cluster: $(cat "$WORK/again.out")"
grep -q "already running" "$WORK/again.out" || fail "second up: $(cat "$WORK/again.out")"
sed -n 's/.*"pid": \([0-9]*\).*/\1/p' "$CLUSTER/cluster.json" | cmp -s - "$PIDS_FILE" || fail "second up changed the pids"
check "a second up says it is already running, exit 0, same processes"

# --- optimize against the cluster: with an optimize token it works, without one it is refused
mkdir -p "$WORK/models"
/usr/bin/python3 tests/optimize/make_models.py "$WORK/models" || fail "making test models (needs python3-onnx)"
TASO_TOKEN_FILE="$WORK/optimize.token" "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/out.onnx" \
  --server "$OADDR" --tls-ca "$pki/ca.pem" --time-limit 5 >"$WORK/opt.out" 2>&1 ||
  fail "optimize with the optimize token: $(cat "$WORK/opt.out")"
[ -s "$WORK/out.onnx" ] || fail "no optimized model written: $(cat "$WORK/opt.out")"
# The stores hold no rules yet: the optimizer serves the built-in proved set.
grep -q "^rules: built-in size-3 set" "$WORK/opt.out" || fail "an empty store should serve the built-in rules: $(cat "$WORK/opt.out")"
check "optimize --server with TLS and an optimize token writes the optimized model (built-in rules while the stores are empty)"
set +e
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/refused.onnx" --server "$OADDR" --tls-ca "$pki/ca.pem" \
  --time-limit 5 >"$WORK/notoken.out" 2>&1; code=$?
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/refused.onnx" \
  --server "$OADDR" --tls-ca "$pki/ca.pem" --time-limit 5 >"$WORK/readtoken.out" 2>&1; rcode=$?
set -e
[ $code -ne 0 ] && grep -q "needs a bearer token" "$WORK/notoken.out" || fail "optimize without a token: exit $code, $(cat "$WORK/notoken.out")"
[ $rcode -ne 0 ] && grep -q "needs role optimize" "$WORK/readtoken.out" || fail "optimize with a read token: exit $rcode, $(cat "$WORK/readtoken.out")"
[ ! -s "$WORK/refused.onnx" ] || fail "a refused call wrote a model"
check "the same call without a token is refused (exit $code), with a read token too (exit $rcode)"

# --- generate into the cluster's stores (a worker token writes candidates)
# (as up prints it: the generator processes it starts read TLS settings from the environment)
TASO_TLS_CA="$pki/ca.pem" TASO_TOKEN_FILE="$WORK/worker.token" "$TASO" generate --store "$STORES" --max-ops 2 \
  --shards 1 --json >"$WORK/gen.out" 2>&1 || fail "generate against the cluster: $(cat "$WORK/gen.out")"
grep -q '"stores": 2' "$WORK/gen.out" && grep -q '"graphs": [1-9]' "$WORK/gen.out" || fail "generate printed no summary: $(cat "$WORK/gen.out")"
check "generate --store (the cluster's two stores) --max-ops 2 completes"

# --- the optimizer, started before the job, serves its rules once the cluster's verifier finished it
origin=""
for _ in $(seq 1 120); do
  TASO_TOKEN_FILE="$WORK/optimize.token" "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/out2.onnx" \
    --server "$OADDR" --tls-ca "$pki/ca.pem" --time-limit 2 --json -q >"$WORK/opt2.json" 2>"$WORK/opt2.err" ||
    fail "optimize after the job: $(cat "$WORK/opt2.err")"
  origin=$(/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["rules_origin"], d["rules_proved"], d["rules_digest"])' "$WORK/opt2.json")
  case "$origin" in RULES_STORE*) break ;; esac
  sleep 1
done
case "$origin" in RULES_STORE\ [1-9]*) ;; *) fail "the optimizer never served the job's rules: $origin" ;; esac
read -r _ proved digest <<<"$origin"
[ ${#digest} -eq 64 ] && [ "$digest" != e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855 ] ||
  fail "digest '$digest'"
check "the optimizer started before the job serves its $proved proved rules once verified (sha256 ${digest:0:16}), no restart"

# --- down: every process gone, status says nothing runs, down again is fine
"$TASO" down "$CLUSTER" >"$WORK/down.out" 2>&1 || fail "down: $(cat "$WORK/down.out")"
while read -r pid; do
  if kill -0 "$pid" 2>/dev/null && [ "$(cut -d' ' -f3 "/proc/$pid/stat" 2>/dev/null)" != Z ]; then
    fail "pid $pid still runs after down: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  fi
done <"$PIDS_FILE"
set +e
"$TASO" status "$CLUSTER" >"$WORK/after.out" 2>&1; code=$?
set -e
[ $code -eq 1 ] && grep -q "not running" "$WORK/after.out" || fail "status after down: exit $code, $(cat "$WORK/after.out")"
"$TASO" down "$CLUSTER" >"$WORK/down2.out" 2>&1 || fail "a second down: $(cat "$WORK/down2.out")"
check "down: all 5 pids gone, status exits 1 saying not running, a second down exits 0"

# --- no security flags: TLS and tokens all the same, from the cluster's own CA and tokens
DEFAULT="$WORK/default"
trap '"$TASO" down "$CLUSTER" >/dev/null 2>&1 || true; "$TASO" down "$DEFAULT" >/dev/null 2>&1 || true' EXIT
"$TASO" up "$DEFAULT" --verifiers 0 >"$WORK/default.out" 2>&1 || fail "taso up with no flags: $(cat "$WORK/default.out")"
grep -q "^security: TLS and tokens" "$WORK/default.out" || fail "up did not say it is secure: $(cat "$WORK/default.out")"
DADDR=$(sed -n 's/.*--server \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/default.out" | head -1)
for f in ca.key store.key optimizer.key profiler.key tokens admin.token worker.token optimize.token read.token; do
  [ "$(stat -c %a "$DEFAULT/pki/$f")" = 600 ] || fail "$DEFAULT/pki/$f is not 0600: $(stat -c %a "$DEFAULT/pki/$f")"
done
[ "$(stat -c %a "$DEFAULT/pki")" = 700 ] || fail "$DEFAULT/pki is not 0700"
grep -q -- "--tls-ca $DEFAULT/pki/ca.pem --token-file $DEFAULT/pki/optimize.token" "$WORK/default.out" ||
  fail "up did not print the CA and token to use: $(cat "$WORK/default.out")"
set +e
env -u TASO_TLS_CA -u TASO_TOKEN_FILE "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/plain.onnx" \
  --server "$DADDR" --time-limit 5 >"$WORK/plain.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && [ ! -s "$WORK/plain.onnx" ] || fail "a plaintext client was served: exit $code, $(cat "$WORK/plain.out")"
"$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/default.onnx" --server "$DADDR" \
  --tls-ca "$DEFAULT/pki/ca.pem" --token-file "$DEFAULT/pki/optimize.token" --time-limit 5 >"$WORK/dopt.out" 2>&1 ||
  fail "optimize with the cluster's CA and optimize token: $(cat "$WORK/dopt.out")"
"$TASO" status "$DEFAULT" >"$WORK/dstatus.out" 2>&1 || fail "status: $(cat "$WORK/dstatus.out")"
"$TASO" down "$DEFAULT" >/dev/null 2>&1 || fail "down $DEFAULT"
check "up with no flags serves TLS with tokens from DIR/pki (keys and tokens 0600); a plaintext client is refused (exit $code)"

"$TASO" up "$WORK/open" --verifiers 0 --insecure >"$WORK/open.out" 2>&1 || fail "up --insecure: $(cat "$WORK/open.out")"
OPEN=$(sed -n 's/.*--server \(127\.0\.0\.1:[0-9]*\).*/\1/p' "$WORK/open.out" | head -1)
[ ! -e "$WORK/open/pki" ] && ! grep -q "^security:" "$WORK/open.out" || fail "--insecure made a PKI: $(cat "$WORK/open.out")"
env -u TASO_TLS_CA -u TASO_TOKEN_FILE "$TASO" optimize "$WORK/models/convrelu.onnx" -o "$WORK/open.onnx" \
  --server "$OPEN" --time-limit 5 >"$WORK/openopt.out" 2>&1 || fail "plaintext optimize on --insecure: $(cat "$WORK/openopt.out")"
"$TASO" down "$WORK/open" >/dev/null 2>&1 || fail "down $WORK/open"
check "up --insecure: plaintext, no tokens, no PKI"
echo "PASS"
