#!/usr/bin/env bash
# Client CPU per request and per SSE event, measured during the load only
# (the client's own CPU use sampled over the profiling window, so start-up,
# tokenizer loading and exports are left out), for llmbench's lean HTTP/1.1
# transport and for Go's net/http one (--http-client net/http), interleaved
# run by run. The server is the simulated one with zero latency, in a
# process of its own on the other core; the client is pinned to one core.
#
#   bench/client_cpu.sh [runs=5] [requests=20000] [concurrency=32] [osl=16]
#
# Per SSE event divides the CPU per streamed request by the data events of
# one response (osl content chunks plus the role, finish and [DONE] events).
set -euo pipefail
runs=${1:-5}
requests=${2:-20000}
concurrency=${3:-32}
osl=${4:-16}
port=18932
cd "$(dirname "$0")/.."
out=$(mktemp -d)
go build -o "$out/llmbench" ./cmd/llmbench
taskset -c 1 "$out/llmbench" mock-server --port $port --ttft-ms 0 --itl-ms 0 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
events=$(curl -s -N "http://127.0.0.1:$port/v1/chat/completions" \
  -d "{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":$osl,\"stream\":true}" | grep -c '^data:')

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# cpu_per_request <profile JSON>: CPU µs per request over the profiling window.
cpu_per_request() {
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
cl = d["client_load"]
dur = d["benchmark_duration"]["avg"]
n = d["request_count"]["avg"]
print("%.2f %.0f" % (cl["cpu_utilization"] * cl["cores"] * dur / n * 1e6, d["request_throughput"]["avg"]))
PY
}

for mode in non-streaming streaming; do
  flag=""; [ $mode = streaming ] && flag="--streaming"
  for client in lean net/http; do : > "$out/${client//\//_}.cpu"; : > "$out/${client//\//_}.rps"; done
  for r in $(seq "$runs"); do
    for client in lean net/http; do
      GOMAXPROCS=1 taskset -c 0 "$out/llmbench" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" $flag --http-client "$client" \
        --concurrency "$concurrency" --request-count "$requests" --isl 64 --osl "$osl" --random-seed "$r" \
        --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
      read -r cpu rps < <(cpu_per_request "$out/run/profile_export_aiperf.json")
      echo "$cpu" >> "$out/${client//\//_}.cpu"; echo "$rps" >> "$out/${client//\//_}.rps"
    done
  done
  for client in lean net/http; do
    f="$out/${client//\//_}"
    cpu=$(median < "$f.cpu")
    per_event=""
    [ $mode = streaming ] && per_event=$(awk -v c="$cpu" -v e="$events" 'BEGIN {printf "  %.2f µs/SSE event (%d events a response)", c/e, e}')
    printf '%-14s %-9s client CPU %6.1f µs/request%s  %7.0f req/s  (medians of %d; CPU runs: %s)\n' "$mode" "$client" "$cpu" "$per_event" \
      "$(median < "$f.rps")" "$runs" "$(sort -g "$f.cpu" | tr '\n' ' ')"
  done
done
