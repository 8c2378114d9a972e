#!/usr/bin/env bash
# Long runs' client memory: the peak RSS of llmbench runs of growing
# request counts against the simulated server (a process of its own, zero
# latency, non-streaming, 8 output tokens, --export-level summary: the
# settings of a soak test), with every value kept in memory (a budget of
# 64 GiB, never reached) and with a small --records-memory-budget. The
# slope of peak RSS between the two largest counts is what each further
# request costs the run; the script extrapolates it to 8 hours at 5,000
# requests/s (144 million requests). Figures are medians of [runs] runs.
#
#   bench/long_run_memory.sh [runs=3] [counts="200000 1000000 3000000"] [budget=64MiB] [binary=./llmbench built here]
#
# budget "none" runs without the flag only (a binary from before it).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
counts=${2:-"200000 1000000 3000000"}
budget=${3:-64MiB}
bin=${4:-}
out=$(mktemp -d)
if [ -z "$bin" ]; then
  go build -o "$out/llmbench" ./cmd/llmbench
  bin="$out/llmbench"
fi
port=18934
"$bin" mock-server --port $port --ttft-ms 0 --itl-ms 0 >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# measure n [flags...] -> "median peak RSS KB" "median seconds"
measure() {
  local n=$1; shift
  : >"$out/rss"; : >"$out/secs"
  for r in $(seq "$runs"); do
    rm -rf "$out/run"
    /usr/bin/time -f "%M %e" -o "$out/time" "$bin" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" --concurrency 64 \
      --request-count "$n" --isl 16 --osl 8 --random-seed "$r" --ui-type none --no-server-metrics --export-level summary \
      --artifact-dir "$out/run" "$@" >"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
    if ls -d "$out"/run/.llmbench-spill-* >/dev/null 2>&1; then echo "spill folder left behind" >&2; exit 1; fi
    read -r kb secs <"$out/time"
    echo "$kb" >>"$out/rss"; echo "$secs" >>"$out/secs"
  done
  echo "$(median <"$out/rss") $(median <"$out/secs")"
}

target=144000000 # 8 h at 5,000 requests/s
configs=("no flag|")
[ "$budget" != none ] && configs=("in memory|--records-memory-budget 64GiB" "budget $budget|--records-memory-budget $budget")
for c in "${configs[@]}"; do
  name=${c%%|*}; flags=${c#*|}
  prev_n=""; prev_kb=""; slope=0; last_n=0; last_kb=0
  for n in $counts; do
    # shellcheck disable=SC2086
    read -r kb secs < <(measure "$n" $flags)
    line=$(printf '%-16s %9d requests: peak RSS %7.1f MB, %6.1f s (%5.0f requests/s)' "$name" "$n" "$(awk -v k="$kb" 'BEGIN{print k/1024}')" "$secs" "$(awk -v n="$n" -v s="$secs" 'BEGIN{print n/s}')")
    if [ -n "$prev_n" ]; then
      slope=$(awk -v a="$prev_kb" -v b="$kb" -v m="$prev_n" -v n="$n" 'BEGIN {printf "%.1f", (b-a)*1024/(n-m)}')
      line="$line   slope from $prev_n: $slope bytes/request"
    fi
    echo "$line"
    prev_n=$n; prev_kb=$kb; last_n=$n; last_kb=$kb
  done
  awk -v kb="$last_kb" -v n="$last_n" -v s="$slope" -v t="$target" -v name="$name" 'BEGIN {
    s = (s < 0 ? 0 : s)
    printf "%-16s extrapolated to %d requests (8 h at 5,000/s): %.2f GB peak RSS (%.1f MB + %.1f bytes/request x %d more)\n", name, t, (kb*1024 + s*(t-n))/1e9, kb/1024, s, t-n
  }'
done
