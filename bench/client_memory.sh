#!/usr/bin/env bash
# Client memory per request: peak RSS of llmbench runs of growing request
# counts against the simulated server with zero latency (a process of its
# own), non-streaming and streaming 64 tokens; the slope between counts is
# what each request costs for the run's lifetime.
#
#   bench/client_memory.sh [binary=./llmbench built here]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-}
out=$(mktemp -d)
if [ -z "$bin" ]; then
  go build -o "$out/llmbench" ./cmd/llmbench
  bin="$out/llmbench"
fi
port=18933
"$bin" mock-server --port $port --ttft-ms 0 --itl-ms 0 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done

rss() { # mode requests -> peak RSS in KB
  local flag=""; [ "$1" = streaming ] && flag=--streaming
  /usr/bin/time -f "%M" -o "$out/rss" "$bin" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" $flag --concurrency 32 \
    --request-count "$2" --isl 64 --osl 64 --random-seed 1 --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
  cat "$out/rss"
}
for spec in "non-streaming 10000 100000 300000" "streaming 10000 50000 100000"; do
  set -- $spec
  mode=$1; shift
  prev_n=""; prev_kb=""
  for n in "$@"; do
    kb=$(rss "$mode" "$n")
    if [ -n "$prev_n" ]; then
      slope=$(awk -v a="$prev_kb" -v b="$kb" -v m="$prev_n" -v n="$n" 'BEGIN {printf "%.0f", (b-a)*1024/(n-m)}')
      printf '%-14s %7d requests: peak RSS %6.1f MB   slope from %d: %s bytes/request\n' "$mode" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$prev_n" "$slope"
    else
      printf '%-14s %7d requests: peak RSS %6.1f MB\n' "$mode" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
    fi
    prev_n=$n; prev_kb=$kb
  done
done
