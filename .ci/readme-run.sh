#!/usr/bin/env bash
# The README's run command, exactly as written, in this clone: it must
# build, generate or find the demo edition, listen, and answer /health.
# Then the server is stopped. The demo edition goes where a user's would
# (`$XDG_DATA_HOME/txmap`, else `~/.local/share/txmap`), so a second run
# starts at once.
set -euo pipefail
cd "$(dirname "$0")/.."

CMD=$(grep -m1 -E '^    cargo run .*-- serve$' README.md | sed 's/^    //')
if [ -z "$CMD" ]; then
    echo "readme-run: no 'cargo run ... -- serve' line in README.md" >&2
    exit 1
fi
echo "readme-run: $CMD"
LOG=$(mktemp)
PID=
cleanup() {
    if [ -n "$PID" ]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
    rm -f "$LOG"
}
trap cleanup EXIT

# Its own process group, so that stopping it stops cargo's child too.
setsid bash -c "exec $CMD" >"$LOG" 2>&1 &
PID=$!
URL=
for _ in $(seq 1 1800); do
    URL=$(grep -o 'listening on http://[0-9.:]*' "$LOG" | sed 's/listening on //' || true)
    [ -n "$URL" ] && break
    if ! kill -0 "$PID" 2>/dev/null; then break; fi
    sleep 0.5
done
if [ -z "$URL" ]; then
    echo "readme-run: the server did not start:" >&2; cat "$LOG" >&2; exit 1
fi
curl -fsS "$URL/health" >/dev/null
curl -fsS "$URL/r4/CodeSystem/\$lookup?system=http://snomed.info/sct&code=138875005" >/dev/null
if grep -q $'\e\[' "$LOG"; then
    echo "readme-run: the log written to a file has ANSI colour codes" >&2; exit 1
fi
kill -TERM -- "-$PID" 2>/dev/null || true
wait "$PID" 2>/dev/null || true
PID=
echo "readme-run: $URL/health answered; stopped"
