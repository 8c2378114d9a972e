#!/usr/bin/env bash
# Client throughput: requests per second llmbench sustains against the
# simulated server with zero injected latency, non-streaming and streaming,
# with the client's CPU time per request. Baseline in the same run: wrk
# (Debian package) posting the same body to the same server, which shows the
# server's own ceiling on this machine.
#
# Server and client are pinned to different cores so they do not share one.
# Runs alternate llmbench and wrk; the figures printed are medians.
#
#   bench/client_throughput.sh [runs=5] [requests=20000] [concurrency=32]
set -euo pipefail
runs=${1:-5}
requests=${2:-20000}
concurrency=${3:-32}
osl=16
port=18931
cd "$(dirname "$0")/.."
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }; }
out=$(mktemp -d)
go build -o "$out/llmbench" ./cmd/llmbench

taskset -c 1 "$out/llmbench" mock-server --port $port --ttft-ms 0 --itl-ms 0 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for mode in non-streaming streaming; do
  flag=""; stream=false
  [ $mode = streaming ] && { flag="--streaming"; stream=true; }
  body="{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"$(printf 'bako %.0s' $(seq 64))\"}],\"max_tokens\":$osl,\"stream\":$stream}"
  printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' "'$body'" > "$out/post.lua"
  : > "$out/rps"; : > "$out/cpu"; : > "$out/wrk"
  for r in $(seq "$runs"); do
    /usr/bin/time -f "%U %S" -o "$out/time" taskset -c 0 "$out/llmbench" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" $flag \
      --concurrency "$concurrency" --request-count "$requests" --isl 64 --osl $osl --random-seed $r \
      --ui-type none --artifact-dir "$out/run" >/dev/null
    rps=$(grep -o '"request_throughput": {"unit":"requests/sec","avg":[0-9.]*' "$out/run/profile_export_aiperf.json" | sed 's/.*avg"://')
    echo "$rps" >> "$out/rps"
    awk -v n="$requests" '{printf "%.2f\n", ($1+$2)/n*1e6}' "$out/time" >> "$out/cpu"
    taskset -c 0 wrk -t1 -c"$concurrency" -d5s -s "$out/post.lua" "http://127.0.0.1:$port/v1/chat/completions" \
      | awk '/Requests\/sec/ {print $2}' >> "$out/wrk"
  done
  printf '%-14s llmbench %8.0f req/s (median of %d; runs: %s)  client CPU %6.1f µs/request  |  wrk baseline %8.0f req/s (runs: %s)\n' \
    "$mode" "$(median < "$out/rps")" "$runs" "$(sort -g "$out/rps" | awk '{printf "%.0f ", $1}')" "$(median < "$out/cpu")" \
    "$(median < "$out/wrk")" "$(sort -g "$out/wrk" | awk '{printf "%.0f ", $1}')"
done
