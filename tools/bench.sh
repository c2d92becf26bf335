#!/usr/bin/env bash
# Throughput and latency of nearrpc against a raw-ASGI ceiling serving the same bytes, side by
# side in one run: seven requests at 32 connections, then one at 256 connections. Prints one
# table. The ratio is what to compare; absolute figures depend on the machine.
#
# Usage: tools/bench.sh [DURATION=5s] [ROUNDS=3] [WIDE_DURATION=20s]
# Env:   METRICS=off     serve with --no-metrics (compare with the default, metrics on)
#        FORCE=1         run even when the machine is busy (figures are then not comparable)
#        WORKERS=N       nearrpc serve --workers N (default 1); SERVER_CPU/LOAD_CPU as the harness
#        NEARRPC_SERVE_ARGS  extra `nearrpc serve` options (e.g. --store postgresql://...)
#        TRAFFIC=1       then real traffic: random keys over a 200,000-block store against a repeated
#                        request, SQLite beside PostgreSQL (python -m bench.traffic_bench; TRAFFIC_STORE=PATH
#                        to use a store of bench.generate_store instead of writing one)
#        FORK=1          then a fork's hits against a plain store and its misses against the upstream direct
#                        (python -m bench.fork_bench; FORK_STORE=PATH as TRAFFIC_STORE)
#        CALLS=0         skip the view calls' table that follows by default: distinct-argument ft_balance_of
#                        calls (fresh executions) and a repeated one beside a view_account hit, with the
#                        issue 34 goals (python -m bench.calls_bench)
# Needs wrk (Debian: apt-get install wrk) and the wrk harness with the ceiling app in
# ../shared/bench (or BENCH_DIR). Loopback only: every server runs on 127.0.0.1, stopped at the end.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${1:-5s}
ROUNDS=${2:-3}
WIDE_DURATION=${3:-20s}
BENCH_DIR=${BENCH_DIR:-../shared/bench}
[ -f "$BENCH_DIR/vs_ceiling.sh" ] || { echo "bench: no wrk harness at $BENCH_DIR (set BENCH_DIR)" >&2; exit 2; }
command -v wrk >/dev/null || { echo "bench: wrk not found (apt-get install wrk)" >&2; exit 2; }

# A busy machine slows the ceiling more than the project and inflates the ratio: refuse.
busy=$(awk '{print $1}' /proc/loadavg)
if awk -v l="$busy" 'BEGIN { exit !(l > 0.5) }'; then
  echo "bench: the machine is busy (load average $busy); its figures would not compare." >&2
  ps -eo pcpu,comm --sort=-pcpu | head -6 >&2
  [ "${FORCE:-0}" = 1 ] || { echo "bench: stop the other work, or FORCE=1 to run anyway" >&2; exit 3; }
  echo "bench: WARNING running on a busy machine (FORCE=1)" >&2
fi

work=$(mktemp -d /tmp/nearrpc-bench.XXXXXX)
trap 'rm -rf "$work"' EXIT
.venv/bin/nearrpc sample "$work/store.sqlite" >/dev/null
port=${PORT:-3099}
names=(genesis_config client_config block_final block_height view_account_final protocol_config_final
       call_function_final block_final_at_/block)
# every request goes to POST /, but the last: the same body at the method's own path
declare -A bodies=(
  [genesis_config]='{"jsonrpc":"2.0","id":"dontcare","method":"genesis_config"}'
  [client_config]='{"jsonrpc":"2.0","id":"dontcare","method":"client_config"}'
  [block_final]='{"jsonrpc":"2.0","id":"dontcare","method":"block","params":{"finality":"final"}}'
  [block_height]='{"jsonrpc":"2.0","id":"dontcare","method":"block","params":{"block_id":50}}'
  [view_account_final]='{"jsonrpc":"2.0","id":"dontcare","method":"EXPERIMENTAL_view_account","params":{"account_id":"alice.localnet","finality":"final"}}'
  [protocol_config_final]='{"jsonrpc":"2.0","id":"dontcare","method":"EXPERIMENTAL_protocol_config","params":{"finality":"final"}}'
  # ft_balance_of({"account_id":"alice.localnet"}) on the sample's token, repeated: executed once, then a hit
  [call_function_final]='{"jsonrpc":"2.0","id":"dontcare","method":"query","params":{"request_type":"call_function","account_id":"token.localnet","method_name":"ft_balance_of","args_base64":"eyJhY2NvdW50X2lkIjoiYWxpY2UubG9jYWxuZXQifQ==","finality":"final"}}'
  [block_final_at_/block]='{"jsonrpc":"2.0","id":"dontcare","method":"block","params":{"finality":"final"}}'
)
serve="exec $PWD/.venv/bin/nearrpc serve --store $work/store.sqlite --port $port --log-level warning"
serve+=" --workers ${WORKERS:-1} ${NEARRPC_SERVE_ARGS:-}"
[ "${METRICS:-on}" = off ] && serve+=" --no-metrics"
echo "bench: metrics ${METRICS:-on}, workers ${WORKERS:-1}" >&2

run() {  # name connections duration rounds -> the harness's last line
  local file=${1//\//_} path=/
  [[ $1 == *_at_/* ]] && path=/${1##*_at_/}
  printf '%s\n' "${bodies[$1]}" >"$work/$file.json"
  PYTHON="$PWD/.venv/bin/python" PROJECT_CMD="$serve" \
    bash "$BENCH_DIR/vs_ceiling.sh" "http://127.0.0.1:$port$path" "$work/$file.json" "$3" "$2" "$4" \
    >"$work/$file.$2.log" 2>&1 || { cat "$work/$file.$2.log" >&2; exit 1; }
  echo "log=$work/$file.$2.log $(tail -1 "$work/$file.$2.log")"
}

results=()
for name in "${names[@]}"; do
  echo "bench: $name, 32 connections, $ROUNDS rounds of $DURATION ..." >&2
  results+=("request=$name connections=32 $(run "$name" 32 "$DURATION" "$ROUNDS")")
done
echo "bench: block_final, 256 connections, 1 round of $WIDE_DURATION ..." >&2
results+=("request=block_final connections=256 $(run block_final 256 "$WIDE_DURATION" 1)")

python3 - "${results[@]}" <<'EOF'
import sys
rows = [dict(field.split("=", 1) for field in line.split()) for line in sys.argv[1:]]
for r in rows:  # requests the project answered, from the harness's per-run lines
    runs = [dict(f.split("=", 1) for f in ln.split() if "=" in f) for ln in open(r["log"]) if "side=project" in ln]
    r["requests"] = str(sum(int(run["requests"]) for run in runs))
header = (
    f"{'request':24} {'conns':>5} {'ratio':>6} {'rps nearrpc/ceiling':>21} {'p50 ms':>13} {'p99 ms':>13} "
    f"{'errors':>9} {'requests':>9}"
)
print(header)
print("-" * len(header))
for r in rows:
    print(
        f"{r['request']:24} {r['connections']:>5} {float(r['ratio_rps_paired']):6.2f} "
        f"{float(r['project_rps']):10.0f}/{float(r['ceiling_rps']):<10.0f} "
        f"{float(r['project_p50_ms']):6.2f}/{float(r['ceiling_p50_ms']):<6.2f} "
        f"{float(r['project_p99_ms']):6.2f}/{float(r['ceiling_p99_ms']):<6.2f} "
        f"{r['project_errors']:>4}/{r['ceiling_errors']:<4} {r['requests']:>9}"
    )
print("ratio: median of per-round nearrpc/ceiling throughput; latencies nearrpc/ceiling; errors include wrk's 2 s timeouts")
EOF

if [ "${CALLS:-1}" = 1 ]; then
  echo
  .venv/bin/python -m bench.calls_bench --duration "$DURATION" --rounds "$ROUNDS" \
    --server-cpu "${SERVER_CPU:-0}" --load-cpu "${LOAD_CPU:-1}"
fi

if [ "${TRAFFIC:-0}" = 1 ]; then
  echo
  .venv/bin/python -m bench.traffic_bench --duration "$DURATION" --rounds "$ROUNDS" \
    ${TRAFFIC_STORE:+--store "$TRAFFIC_STORE"}
fi

if [ "${FORK:-0}" = 1 ]; then
  echo
  .venv/bin/python -m bench.fork_bench --duration "$DURATION" --rounds "$ROUNDS" \
    ${FORK_STORE:+--store "$FORK_STORE"}
fi
