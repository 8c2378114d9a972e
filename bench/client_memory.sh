#!/usr/bin/env bash
# Client memory per request: peak RSS of llmbench runs of growing request
# counts (10k, 100k, 300k) against the simulated server with zero latency (a
# process of its own), non-streaming and streaming 64 tokens; the slope of
# peak RSS between counts is what each request costs for the run's
# lifetime. Then the peak RSS of a streaming run at concurrency 4,096.
# Figures are medians of [runs] runs.
#
#   bench/client_memory.sh [runs=3] [binary=./llmbench built here]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
bin=${2:-}
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

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
rss() { # mode requests concurrency -> median peak RSS in KB
  local flag=""; [ "$1" = streaming ] && flag=--streaming
  for r in $(seq "$runs"); do
    /usr/bin/time -f "%M" -o "$out/rss" "$bin" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" $flag --concurrency "$3" \
      --request-count "$2" --isl 64 --osl 64 --random-seed "$r" --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
    cat "$out/rss"
  done | median
}
for mode in non-streaming streaming; do
  prev_n=""; prev_kb=""
  for n in 10000 100000 300000; do
    kb=$(rss "$mode" "$n" 32)
    if [ -n "$prev_n" ]; then
      slope=$(awk -v a="$prev_kb" -v b="$kb" -v m="$prev_n" -v n="$n" 'BEGIN {printf "%.0f", (b-a)*1024/(n-m)}')
      printf '%-14s %7d requests: peak RSS %6.1f MB   slope from %d: %s bytes/request\n' "$mode" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$prev_n" "$slope"
    else
      printf '%-14s %7d requests: peak RSS %6.1f MB\n' "$mode" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
    fi
    prev_n=$n; prev_kb=$kb
  done
done
kb=$(rss streaming 40000 4096)
printf 'streaming, concurrency 4096, 40000 requests: peak RSS %6.1f MB\n' "$(awk -v k="$kb" 'BEGIN{print k/1024}')"
