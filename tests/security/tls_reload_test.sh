#!/usr/bin/env bash
# A server serves a renewed certificate without a restart: taso_rules_db
# starts on a certificate signed by one CA, the certificate and key are
# swapped for ones a second CA signed the way a Kubernetes Secret volume
# swaps them (one atomic rename of the directory link), and within
# --tls_reload_s new connections get the new certificate: a client trusting
# only the second CA is served, one trusting only the first is refused. A
# broken certificate written later keeps the last good one served. The checked
# copies (with the private key) of a server killed with SIGKILL are removed by
# the next server to start on the machine.
source tests/generate/lib.sh
command -v openssl >/dev/null || fail "openssl is needed to make the test CAs"
PIDS=()
trap 'for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

pki="$WORK/pki" && mkdir -p "$pki"
for ca in old new; do
  openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=taso $ca CA" \
    -keyout "$pki/$ca-ca.key" -out "$pki/$ca-ca.pem" 2>/dev/null || fail "making the $ca CA"
  mkdir -p "$pki/$ca"
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout "$pki/$ca/tls.key" -out "$pki/$ca.csr" 2>/dev/null
  printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >"$pki/$ca.ext"
  openssl x509 -req -in "$pki/$ca.csr" -CA "$pki/$ca-ca.pem" -CAkey "$pki/$ca-ca.key" -CAcreateserial -days 1 \
    -extfile "$pki/$ca.ext" -out "$pki/$ca/tls.crt" 2>/dev/null || fail "signing the $ca certificate"
done
# As a Secret volume: the files are reached through a link to the current version.
ln -s old "$pki/..data"
mkdir -p "$WORK/tls"
ln -s "$pki/..data/tls.crt" "$WORK/tls/tls.crt"
ln -s "$pki/..data/tls.key" "$WORK/tls/tls.key"

rm -f "$WORK/store.port"
export TMPDIR="$WORK/tmp" && mkdir -p "$TMPDIR"
"$STORE_BIN" --db "$WORK/store" --listen 127.0.0.1:0 --port_file "$WORK/store.port" --write_buffer_mb 8 \
  --tls_cert "$WORK/tls/tls.crt" --tls_key "$WORK/tls/tls.key" --tls_reload_s 1 >>"$WORK/store.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/store.port" ] && break; sleep 0.1; done
[ -s "$WORK/store.port" ] || fail "store did not start: $(tail -3 "$WORK/store.log")"
ADDR="127.0.0.1:$(cat "$WORK/store.port")"

trusts() {  # trusts CA: the server's certificate verifies against CA
  "$TASO" health "$ADDR" --tls-ca "$pki/$1-ca.pem" --startup-timeout 2 >"$WORK/health.out" 2>&1
}
trusts old || fail "the first certificate is not served: $(cat "$WORK/health.out")"
! trusts new || fail "a client trusting only the new CA was served before the renewal"
check "serves the first certificate (old CA)"

ln -s new "$pki/..data.tmp" && mv -T "$pki/..data.tmp" "$pki/..data"  # the renewal, atomically
served=""
for _ in $(seq 1 40); do
  if trusts new; then served=1; break; fi
  sleep 0.25
done
[ -n "$served" ] || fail "the renewed certificate was not served within 10 s (--tls_reload_s 1): $(cat "$WORK/health.out")"
! trusts old || fail "new connections still get the old certificate"
check "after the renewal new connections get the new certificate (new CA), without a restart"

# A broken renewal: the last good certificate stays.
mkdir -p "$pki/broken" && echo "not a certificate" >"$pki/broken/tls.crt" && cp "$pki/new/tls.key" "$pki/broken/"
ln -s broken "$pki/..data.tmp" && mv -T "$pki/..data.tmp" "$pki/..data"
sleep 3
trusts new || fail "a broken certificate file replaced the good one: $(cat "$WORK/health.out")"
kill -0 "${PIDS[0]}" || fail "the store died on a broken certificate file: $(tail -3 "$WORK/store.log")"
check "a broken certificate file keeps the last good one served"

# Killed, the store cannot remove its copies; the next server does.
killed=(); for d in "$TMPDIR"/taso-tls-*; do [[ -d $d ]] && killed+=("$d"); done
[[ ${#killed[@]} -eq 1 && -f ${killed[0]}/tls.key ]] || fail "want one taso-tls-* directory with the key copy, have: ${killed[*]:-none}"
kill -9 "${PIDS[0]}" && wait "${PIDS[0]}" 2>/dev/null || true
rm -f "$WORK/store2.port"
"$STORE_BIN" --db "$WORK/store2" --listen 127.0.0.1:0 --port_file "$WORK/store2.port" --write_buffer_mb 8 \
  --tls_cert "$pki/new/tls.crt" --tls_key "$pki/new/tls.key" >>"$WORK/store2.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 1 300); do [ -s "$WORK/store2.port" ] && break; sleep 0.1; done
[ -s "$WORK/store2.port" ] || fail "the second store did not start: $(tail -3 "$WORK/store2.log")"
[[ ! -e ${killed[0]} ]] || fail "the killed store's key copies are still in ${killed[0]}"
left=$(ls -d "$TMPDIR"/taso-tls-* 2>/dev/null | wc -l)
[[ $left -eq 1 ]] || fail "want the second store's taso-tls directory only, have $left"
check "a killed server's copies of the key are removed when the next one starts"
echo PASS
