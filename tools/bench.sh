#!/usr/bin/env bash
# Throughput of nearrpc against a raw-ASGI ceiling serving the same bytes, side by side in one
# run (the ratio is what to compare; absolute numbers are noisy on 2-core machines).
#
# The server runs as users run it, metrics on (every answer counted); METRICS=off passes
# --no-metrics, so running both shows what counting costs.
#
# Usage: [METRICS=on|off] tools/bench.sh [DURATION=5s] [CONNECTIONS=32] [ROUNDS=3]
# Needs wrk (Debian: apt-get install wrk) and the wrk harness in ../shared/bench (or BENCH_DIR).
# Loopback only: the server is started here on 127.0.0.1 and stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
BENCH_DIR=${BENCH_DIR:-../shared/bench}
[ -x "$BENCH_DIR/vs_ceiling.sh" ] || [ -f "$BENCH_DIR/vs_ceiling.sh" ] || {
  echo "bench: no wrk harness at $BENCH_DIR (set BENCH_DIR)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "bench: wrk not found (apt-get install wrk)" >&2; exit 2; }
work=$(mktemp -d /tmp/nearrpc-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
.venv/bin/nearrpc sample "$work/store.sqlite" >/dev/null
port=${PORT:-3099}
serve_flags=""
[ "${METRICS:-on}" = off ] && serve_flags="--no-metrics"
echo "== metrics ${METRICS:-on}"
declare -A bodies=(
  [block_final]='{"jsonrpc":"2.0","id":"dontcare","method":"block","params":{"finality":"final"}}'
  [view_account]='{"jsonrpc":"2.0","id":"dontcare","method":"EXPERIMENTAL_view_account","params":{"account_id":"alice.localnet","finality":"final"}}'
  [protocol_config]='{"jsonrpc":"2.0","id":"dontcare","method":"EXPERIMENTAL_protocol_config","params":{"finality":"final"}}'
)
for name in block_final view_account protocol_config; do
  printf '%s\n' "${bodies[$name]}" >"$work/$name.json"
  echo "== $name"
  PYTHON="$PWD/.venv/bin/python" \
  PROJECT_CMD="exec $PWD/.venv/bin/nearrpc serve --store $work/store.sqlite --port $port --log-level warning $serve_flags" \
    bash "$BENCH_DIR/vs_ceiling.sh" "http://127.0.0.1:$port/" "$work/$name.json" "${1:-5s}" "${2:-32}" "${3:-3}" \
    | grep -E '^(captured|summary)'
done
