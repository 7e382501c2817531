# What the metrics tests share (after tests/generate/lib.sh).
# scrape PORT [PATH]: prints "STATUS CONTENT-TYPE" then the body of
# GET http://127.0.0.1:PORT/PATH (default metrics); just the status on an HTTP
# error, "unreachable: WHY" when nothing answers (so the caller's check fails
# with its own message rather than set -e ending the test silently).
scrape() {
  /usr/bin/python3 - "$1" "${2:-metrics}" <<'PY'
import sys, urllib.request, urllib.error
try:
    with urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/{sys.argv[2]}", timeout=10) as r:
        print(r.status, r.headers.get("Content-Type"))
        sys.stdout.write(r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code)
except OSError as e:
    print("unreachable:", e)
PY
}

# metrics_port NAME LOG: the port NAME announced in LOG ("NAME: metrics on port N"); waits up to 30 s.
metrics_port() {
  local port=""
  for _ in $(seq 1 300); do
    port=$(sed -n "s/^$1: metrics on port \([0-9]*\)\$/\1/p" "$2" | tail -1)
    [ -n "$port" ] && break
    sleep 0.1
  done
  echo "$port"
}
