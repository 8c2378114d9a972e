#!/usr/bin/env bash
# Does the client use every core? Requests per second of llmbench with its
# built-in simulated server in the same process (--mock, zero latency), at
# GOMAXPROCS 1 on one core and GOMAXPROCS 2 on two, non-streaming and
# streaming. Client and server share the process, so the figure is the
# pair's: a serial step anywhere in the client (one goroutine parsing every
# response, one lock around the records) would keep the two-core figure
# near the one-core one; a client that scales lets it approach twice.
# Figures are medians of [runs] runs, one-core and two-core runs
# interleaved.
#
#   bench/client_cores.sh [runs=5] [requests=40000] [concurrency=64]
set -euo pipefail
runs=${1:-5}
requests=${2:-40000}
concurrency=${3:-64}
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/llmbench" ./cmd/llmbench
cores=$(nproc)
[ "$cores" -ge 2 ] || { echo "client_cores: needs two cores, this machine has $cores" >&2; exit 1; }

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
run() { # mode procs cpus seed -> requests/s
  local flag=""; [ "$1" = streaming ] && flag="--streaming"
  GOMAXPROCS=$2 taskset -c "$3" "$out/llmbench" profile --mock --mock-ttft-ms 0 --mock-itl-ms 0 -m m --tokenizer builtin $flag \
    --concurrency "$concurrency" --request-count "$requests" --isl 64 --osl 16 --random-seed "$4" \
    --ui-type none --no-server-metrics --artifact-dir "$out/run" >"$out/log" 2>&1 \
    || { echo "client_cores: llmbench failed ($1, GOMAXPROCS=$2):" >&2; tail -5 "$out/log" >&2; exit 1; }
  grep -o '"request_throughput": {"unit":"requests/sec","avg":[0-9.]*' "$out/run/profile_export_aiperf.json" | sed 's/.*avg"://'
}
for mode in non-streaming streaming; do
  : > "$out/one"; : > "$out/two"
  for r in $(seq "$runs"); do
    run "$mode" 1 0 "$r" >> "$out/one"
    run "$mode" 2 0,1 "$r" >> "$out/two"
  done
  one=$(median < "$out/one"); two=$(median < "$out/two")
  printf '%-14s 1 core %8.0f req/s   2 cores %8.0f req/s   x%.2f   (runs: 1 core %s| 2 cores %s)\n' "$mode" "$one" "$two" \
    "$(awk -v a="$one" -v b="$two" 'BEGIN {print b/a}')" "$(sort -g "$out/one" | awk '{printf "%.0f ", $1}')" "$(sort -g "$out/two" | awk '{printf "%.0f ", $1}')"
done
