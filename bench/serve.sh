# Sourced by the bench scripts: `start_server NAME` serves $EDITION
# (bench/out/intl.txmap) with `$TXMAP serve`, mapped and prewarmed, on a free
# loopback port, writing $OUT/NAME-serve.toml; it returns once /health
# answers and the prewarm read has put the whole file in the page cache,
# with SERVER (the base URL) and SERVER_PID set. `stop_server` stops it
# (also on exit).
SERVER_PID=
stop_server() {
    if [ -n "$SERVER_PID" ]; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
        SERVER_PID=
    fi
}
trap stop_server EXIT

start_server() {
    local port config
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    config=$OUT/$1-serve.toml
    cat >"$config" <<TOML
listen = "127.0.0.1:$port"
editions = ["$(basename "$EDITION")"]
[snomed]
load = "mmap"
prewarm = ["$(basename "$EDITION" .txmap)"]
TOML
    TXMAP_LOG=warn "$TXMAP" serve --config "$config" &
    SERVER_PID=$!
    SERVER=http://127.0.0.1:$port
    for _ in $(seq 1 200); do
        curl -sf "$SERVER/health" >/dev/null 2>&1 && break
        sleep 0.05
    done
    curl -sf "$SERVER/health" >/dev/null
    for _ in $(seq 1 600); do
        python3 - "$SERVER" <<'PY' && break
import json, sys, urllib.request
s = json.load(urllib.request.urlopen(f"{sys.argv[1]}/status"))
sys.exit(0 if (s["editions"][0].get("prewarm") or {}).get("done") else 1)
PY
        sleep 0.1
    done
}
