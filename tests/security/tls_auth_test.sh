#!/usr/bin/env bash
# taso_rules_db with TLS and a tokens file, called by real clients: a
# plaintext client fails; TLS with the CA and a read token lists rules; no
# token or an unknown one is UNAUTHENTICATED; a verdict names its worker's
# token; a worker token cannot write a PROVED rule, nor a read token
# pruning statuses (PERMISSION_DENIED naming admin), while an admin token can; with
# --tls_client_ca a client without a certificate is refused. taso_profiler:
# measuring needs optimize, wiping the cache admin. taso_optimizer: a TLS
# client of both with its own token, and Optimize needs optimize. The CA and the
# certificates are made here with openssl, never checked in.
source tests/generate/lib.sh
PLANT="$PWD/tests/verify/plant_rule"
command -v openssl >/dev/null || fail "openssl is needed to make the test CA"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

# --- a CA, a server certificate for 127.0.0.1/localhost, a client certificate
pki="$WORK/pki" && mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=taso test CA" \
  -keyout "$pki/ca.key" -out "$pki/ca.pem" 2>/dev/null || fail "making the CA"
sign() {  # sign NAME SUBJECT EXTENSIONS
  openssl req -newkey rsa:2048 -nodes -subj "$2" -keyout "$pki/$1.key" -out "$pki/$1.csr" 2>/dev/null
  printf '%s\n' "$3" >"$pki/$1.ext"
  openssl x509 -req -in "$pki/$1.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" -CAcreateserial -days 1 \
    -extfile "$pki/$1.ext" -out "$pki/$1.pem" 2>/dev/null || fail "signing $1"
}
sign server "/CN=localhost" "subjectAltName=IP:127.0.0.1,DNS:localhost
extendedKeyUsage=serverAuth"
sign client "/CN=taso worker" "extendedKeyUsage=clientAuth"

# --- tokens: clients hold the token, the server only its SHA-256
for role in read worker optimize admin; do
  openssl rand -hex 24 >"$WORK/$role.token"
  printf '%s %s\n' "$role" "$(tr -d '\n' <"$WORK/$role.token" | sha256sum | cut -d' ' -f1)"
done >"$WORK/tokens"
echo "not-a-known-token" >"$WORK/bad.token"

# start_secure_store DIR FLAGS...: sets ADDR.
start_secure_store() {
  local dir=$1 && shift
  rm -f "$dir.port"
  "$STORE_BIN" --db "$dir" --listen 127.0.0.1:0 --port_file "$dir.port" --write_buffer_mb 8 \
    --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" --tokens_file "$WORK/tokens" "$@" >>"$dir.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 300); do [ -s "$dir.port" ] && break; sleep 0.1; done
  [ -s "$dir.port" ] || fail "store did not start: $(tail -3 "$dir.log")"
  ADDR="127.0.0.1:$(cat "$dir.port")"
}
start_secure_store "$WORK/store"
RULES_ADDR="$ADDR"

TRUE_RULE='(ewadd ?x@2_4 ?y@2_4)=>(ewadd ?y@2_4 ?x@2_4)'
set +e
"$TASO" rules list --store "$ADDR" >"$WORK/plain.out" 2>&1; code=$?
[ $code -ne 0 ] || fail "a plaintext client listed rules from a TLS store"
check "plaintext client refused (exit $code)"

TASO_TLS_CA="$pki/ca.pem" "$TASO" rules list --store "$ADDR" >"$WORK/none.out" 2>&1; code=$?
[ $code -ne 0 ] && grep -q "needs a bearer token with role read" "$WORK/none.out" ||
  fail "no token: exit $code, $(cat "$WORK/none.out")"
TASO_TLS_CA="$pki/ca.pem" TASO_TOKEN_FILE="$WORK/bad.token" "$TASO" rules list --store "$ADDR" >"$WORK/bad.out" 2>&1
code=$?
[ $code -ne 0 ] && grep -q "not in the server's tokens file" "$WORK/bad.out" ||
  fail "unknown token: exit $code, $(cat "$WORK/bad.out")"
TASO_TLS_CA="$pki/ca.pem" "$PLANT" "$ADDR" put "$TRUE_RULE" >"$WORK/none.put" 2>&1; code=$?
[ $code -ne 0 ] && grep -q "UNAUTHENTICATED" "$WORK/none.put" || fail "put without a token: $(cat "$WORK/none.put")"
check "no token or an unknown token: UNAUTHENTICATED"
set -e

export TASO_TLS_CA="$pki/ca.pem"
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules list --store "$ADDR" --tls-ca "$pki/ca.pem" >"$WORK/read.out" 2>&1 ||
  fail "TLS with a read token cannot list rules: $(cat "$WORK/read.out")"
check "TLS, the CA and a read token list rules (--tls-ca on the taso command line)"

set +e
TASO_TOKEN_FILE="$WORK/worker.token" "$PLANT" "$ADDR" put "$TRUE_RULE" >"$WORK/worker.put" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "PERMISSION_DENIED" "$WORK/worker.put" && grep -q "needs role admin" "$WORK/worker.put" ||
  fail "a worker token wrote a PROVED rule: exit $code, $(cat "$WORK/worker.put")"
TASO_TOKEN_FILE="$WORK/admin.token" "$PLANT" "$ADDR" put "$TRUE_RULE" >"$WORK/admin.put" 2>&1 ||
  fail "an admin token cannot write a PROVED rule: $(cat "$WORK/admin.put")"
grep -q "^accepted " "$WORK/admin.put" || fail "admin put: $(cat "$WORK/admin.put")"
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules list --store "$ADDR" >"$WORK/after.out" ||
  fail "listing after the admin put"
grep -qF "ewadd" "$WORK/after.out" || fail "the admin's rule is not listed: $(cat "$WORK/after.out")"
check "a worker token cannot write a PROVED rule (PERMISSION_DENIED); an admin token can"

# --- a verifier is who its token says: a stored verdict names the token's digest
TASO_TOKEN_FILE="$WORK/worker.token" "$TASO" job create --store "$ADDR" --max-ops 2 --shards 1 --job tok \
  >"$WORK/job.out" 2>&1 || fail "job create with a worker token: $(cat "$WORK/job.out")"
TASO_TOKEN_FILE="$WORK/worker.token" "$TASO" generate --job tok --shards-here 0 --store "$ADDR" \
  >"$WORK/gen.out" 2>&1 || fail "generate with a worker token: $(cat "$WORK/gen.out")"
TASO_TOKEN_FILE="$WORK/worker.token" "$TASO" verify --store "$ADDR" --job tok >"$WORK/verify.out" 2>&1 ||
  fail "verify with a worker token: $(cat "$WORK/verify.out")"
id=$(TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules list --store "$ADDR" --job tok | head -1 | cut -d' ' -f1)
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules show "$id" --store "$ADDR" >"$WORK/show.out" || fail "rules show $id"
digest=$(tr -d '\n' <"$WORK/worker.token" | sha256sum | cut -c1-12)
grep -q "verified by verifier-[0-9/]*@token:$digest" "$WORK/show.out" ||
  fail "the verdict does not name the worker token ($digest): $(cat "$WORK/show.out")"
check "verdicts over TLS name the worker token's digest, not a name the worker chose"

# --- pruning over gRPC reads with any role and writes statuses as admin only
set +e
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules prune --store "$ADDR" --job tok >"$WORK/prune-read.out" 2>&1; code=$?
set -e
[ $code = 1 ] && grep -q "needs role admin" "$WORK/prune-read.out" ||
  fail "a read token pruned: exit $code, $(cat "$WORK/prune-read.out")"
TASO_TOKEN_FILE="$WORK/admin.token" "$TASO" rules prune --store "$ADDR" --job tok --json >"$WORK/prune-admin.out" 2>&1 ||
  fail "an admin token cannot prune: $(cat "$WORK/prune-admin.out")"
grep -q '"store_shards": 1' "$WORK/prune-admin.out" || fail "admin prune: $(cat "$WORK/prune-admin.out")"
check "rules prune --store: a read token is refused where it writes (PERMISSION_DENIED naming admin); admin prunes"

# --- mTLS: the store also requires a client certificate signed by the CA
start_secure_store "$WORK/mtls-store" --tls_client_ca "$pki/ca.pem"
set +e
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" rules list --store "$ADDR" >"$WORK/nocert.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] || fail "mTLS store served a client without a certificate"
TASO_TOKEN_FILE="$WORK/read.token" TASO_TLS_CLIENT_CERT="$pki/client.pem" TASO_TLS_CLIENT_KEY="$pki/client.key" \
  "$TASO" rules list --store "$ADDR" >"$WORK/cert.out" 2>&1 || fail "mTLS with a client certificate: $(cat "$WORK/cert.out")"
check "mTLS: refused without a client certificate, served with one"

# --- misconfiguration is an error that says what to fix, not plaintext
set +e
"$STORE_BIN" --db "$WORK/bad-store" --listen 127.0.0.1:0 --tokens_file "$WORK/tokens" >"$WORK/notls.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "tokens_file needs TLS" "$WORK/notls.out" || fail "tokens without TLS: $(cat "$WORK/notls.out")"
printf 'read %s\n' "$(cat "$WORK/read.token")" >"$WORK/plain-tokens"
set +e
"$STORE_BIN" --db "$WORK/bad-store" --listen 127.0.0.1:0 --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" \
  --tokens_file "$WORK/plain-tokens" >"$WORK/plaintokens.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "SHA-256" "$WORK/plaintokens.out" || fail "raw tokens in the file: $(cat "$WORK/plaintokens.out")"
check "tokens without TLS, or raw tokens in the tokens file, are refused at start-up"

# --- off loopback: TLS and tokens, or --insecure on purpose
set +e
"$STORE_BIN" --db "$WORK/open-store" --listen 0.0.0.0:0 >"$WORK/open.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "refusing to serve 0.0.0.0:0 in plaintext" "$WORK/open.out" ||
  fail "a plaintext server off loopback: exit $code, $(cat "$WORK/open.out")"
set +e
"$STORE_BIN" --db "$WORK/open-store" --listen 0.0.0.0:0 --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" \
  >"$WORK/tlsonly.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "without tokens" "$WORK/tlsonly.out" ||
  fail "TLS without tokens off loopback: exit $code, $(cat "$WORK/tlsonly.out")"
rm -f "$WORK/open.port"
"$STORE_BIN" --db "$WORK/open-store" --listen 0.0.0.0:0 --insecure --port_file "$WORK/open.port" \
  >"$WORK/insecure.out" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/open.port" ] && break; sleep 0.1; done
[ -s "$WORK/open.port" ] && grep -q "warning: --insecure" "$WORK/insecure.out" ||
  fail "--insecure did not serve with a warning: $(cat "$WORK/insecure.out")"
check "off loopback a server without TLS and tokens refuses to start; --insecure serves it, warning"

# --- taso_profiler: measuring needs optimize, dropping cache entries admin
cat >"$WORK/graph.txt" <<'GRAPH'
nodes { id: 0 kind: OP_INPUT name: "x" type { dtype: DTYPE_FLOAT32 dims: [1, 8, 8, 8] } }
nodes { id: 1 kind: OP_RELU inputs { node: 0 } }
outputs { name: "y" tensor { node: 1 } }
GRAPH
rm -f "$WORK/profiler.port"
"$PWD/bin/taso_profiler" --listen 127.0.0.1:0 --port_file "$WORK/profiler.port" --cache_dir "$WORK/costs" \
  --threads 1 --repetitions 4 --min_timed_ms 1 --graph_runs 3 --graph_min_timed_ms 1 \
  --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" --tokens_file "$WORK/tokens" >>"$WORK/profiler.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/profiler.port" ] && break; sleep 0.1; done
[ -s "$WORK/profiler.port" ] || fail "profiler did not start: $(tail -3 "$WORK/profiler.log")"
PADDR="127.0.0.1:$(cat "$WORK/profiler.port")"
set +e
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" profile graph "$WORK/graph.txt" --measure --server "$PADDR" \
  >"$WORK/measure-read.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "needs role optimize" "$WORK/measure-read.out" ||
  fail "a read token measured: exit $code, $(cat "$WORK/measure-read.out")"
TASO_TOKEN_FILE="$WORK/optimize.token" "$TASO" profile graph "$WORK/graph.txt" --measure --server "$PADDR" \
  >"$WORK/measure.out" 2>&1 || fail "an optimize token cannot measure: $(cat "$WORK/measure.out")"
grep -q "measured whole graph" "$WORK/measure.out" || fail "no measurement: $(cat "$WORK/measure.out")"
TASO_TOKEN_FILE="$WORK/read.token" "$TASO" profile cache list --server "$PADDR" >"$WORK/cache.out" 2>&1 ||
  fail "a read token cannot list the cache: $(cat "$WORK/cache.out")"
set +e
TASO_TOKEN_FILE="$WORK/optimize.token" "$TASO" profile cache invalidate --all --server "$PADDR" \
  >"$WORK/inv-opt.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "needs role admin" "$WORK/inv-opt.out" ||
  fail "an optimize token wiped the cache: exit $code, $(cat "$WORK/inv-opt.out")"
TASO_TOKEN_FILE="$WORK/admin.token" "$TASO" profile cache invalidate --all --server "$PADDR" \
  >"$WORK/inv-admin.out" 2>&1 || fail "an admin token cannot wipe the cache: $(cat "$WORK/inv-admin.out")"
check "profiler: read lists, optimize measures but cannot wipe the cache, admin can"

# --- taso_optimizer: a TLS client of both (one optimize token) and a TLS server itself
/usr/bin/python3 - "$WORK/relu.onnx" <<'PY' || fail "making the test model (needs python3-onnx)"
import sys
from onnx import TensorProto, helper, save
x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 8, 8])
graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "relu", [x], [y])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
PY
rm -f "$WORK/optimizer.port"
"$PWD/bin/taso_optimizer" --listen 127.0.0.1:0 --port_file "$WORK/optimizer.port" \
  --rules_db "$RULES_ADDR" --profiler "$PADDR" --tls_ca "$pki/ca.pem" --token_file "$WORK/optimize.token" \
  --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" --tokens_file "$WORK/tokens" >>"$WORK/optimizer.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/optimizer.port" ] && break; sleep 0.1; done
[ -s "$WORK/optimizer.port" ] || fail "optimizer did not start: $(tail -3 "$WORK/optimizer.log")"
grep -q "[1-9][0-9]* rewrites" "$WORK/optimizer.log" || fail "the optimizer read no rules over TLS: $(cat "$WORK/optimizer.log")"
OADDR="127.0.0.1:$(cat "$WORK/optimizer.port")"
set +e
TASO_TOKEN_FILE="$WORK/worker.token" "$TASO" optimize "$WORK/relu.onnx" -o "$WORK/relu.opt.onnx" --server "$OADDR" \
  --time-limit 5 >"$WORK/opt-worker.out" 2>&1; code=$?
set -e
[ $code -ne 0 ] && grep -q "needs role optimize" "$WORK/opt-worker.out" ||
  fail "a worker token optimized: exit $code, $(cat "$WORK/opt-worker.out")"
TASO_TOKEN_FILE="$WORK/optimize.token" "$TASO" optimize "$WORK/relu.onnx" -o "$WORK/relu.opt.onnx" --server "$OADDR" \
  --time-limit 5 >"$WORK/opt.out" 2>&1 || fail "an optimize token cannot optimize: $(cat "$WORK/opt.out")"
[ -s "$WORK/relu.opt.onnx" ] || fail "no optimized model written"
check "optimizer: loads rules and costs over TLS with its token; Optimize needs optimize"

# --- more proved rules than the optimizer loads (an unpruned size-4 job): it
# serves the built-in set and says to prune, rather than load them all
rm -f "$WORK/capped.port"
"$PWD/bin/taso_optimizer" --listen 127.0.0.1:0 --port_file "$WORK/capped.port" --max_store_rules 1 \
  --rules_db "$RULES_ADDR" --profiler "$PADDR" --tls_ca "$pki/ca.pem" --token_file "$WORK/optimize.token" \
  --tls_cert "$pki/server.pem" --tls_key "$pki/server.key" --tokens_file "$WORK/tokens" >>"$WORK/capped.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/capped.port" ] && break; sleep 0.1; done
[ -s "$WORK/capped.port" ] || fail "the capped optimizer did not start: $(tail -3 "$WORK/capped.log")"
grep -q "more than 1 proved rules.*taso rules prune --store.*serving the built-in set meanwhile" "$WORK/capped.log" &&
  grep -q "rules: built-in size-3 set" "$WORK/capped.log" || fail "over --max_store_rules: $(cat "$WORK/capped.log")"
check "optimizer over --max_store_rules: serves the built-in set and names taso rules prune --store"
echo "PASS"
