#!/usr/bin/env bash
# Timing error against a bare reference client. An instrumented streaming
# server (bench/timingref serve, on core 1) notes when it wrote each chunk;
# each client (on core 0, GOMAXPROCS=1) notes when each chunk arrived. The
# error is arrival − write: of the first chunk (what TTFT carries) and of
# every later one (what ITL and inter-chunk latency carry). Clients: the
# reference (net/http, no parsing: bench/timingref client), llmbench with
# its lean transport, and llmbench with --http-client net/http; interleaved
# run by run; medians of the runs' p50 and p99.
#
#   bench/timing_reference.sh [runs=3] [concurrencies="64 256 1024 4096"] [tokens=32] [ttft=20ms] [itl=5ms]
set -euo pipefail
runs=${1:-3}
concurrencies=${2:-"64 256 1024 4096"}
tokens=${3:-32} ttft=${4:-20ms} itl=${5:-5ms}
port=18950
cd "$(dirname "$0")/.."
out=$(mktemp -d)
go build -o "$out/llmbench" ./cmd/llmbench
go build -o "$out/timingref" ./bench/timingref
ulimit -n 65536 2>/dev/null || true
taskset -c 1 "$out/timingref" serve -addr "127.0.0.1:$port" -tokens "$tokens" -ttft "$ttft" -itl "$itl" &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/log" >/dev/null && break; sleep 0.1; done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run() { # client concurrency requests seed -> "first_p50 first_p99 later_p50 later_p99 n"
  local client=$1 c=$2 n=$3 seed=$4
  curl -fs "http://127.0.0.1:$port/log" >/dev/null # clear
  if [ "$client" = reference ]; then
    GOMAXPROCS=1 taskset -c 0 "$out/timingref" client -url "http://127.0.0.1:$port/v1/chat/completions" \
      -concurrency "$c" -requests "$n" -out "$out/arrivals.csv"
    log="$out/arrivals.csv"
  else
    GOMAXPROCS=1 taskset -c 0 "$out/llmbench" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" --streaming \
      --http-client "$client" --concurrency "$c" --request-count "$n" --isl 64 --osl "$tokens" --random-seed "$seed" \
      --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
    log="$out/run/profile_export.jsonl"
  fi
  curl -fs "http://127.0.0.1:$port/log" > "$out/writes.csv"
  "$out/timingref" compare -server "$out/writes.csv" -client "$log"
}
echo "server: $tokens chunks a response, first after $ttft, then every $itl; error = arrival − write, ms"
for c in $concurrencies; do
  n=$((c * 4)); [ $n -lt 256 ] && n=256
  for client in reference lean net/http; do : > "$out/$(echo $client | tr / _).txt"; done
  for r in $(seq "$runs"); do
    for client in reference lean net/http; do
      run "$client" "$c" "$n" "$r" >> "$out/$(echo $client | tr / _).txt"
    done
  done
  for client in reference lean net/http; do
    f="$out/$(echo $client | tr / _).txt"
    printf 'concurrency %5d  %-9s first chunk p50 %7.3f p99 %8.3f   later chunks p50 %7.3f p99 %7.3f   (%d requests, medians of %d)\n' "$c" "$client" \
      "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)" "$(cut -d' ' -f4 "$f" | median)" "$n" "$runs"
  done
done
