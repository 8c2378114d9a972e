#!/usr/bin/env bash
# Timing fidelity: how far the reported TTFT and ITL are from what the
# server was told to do, as concurrency rises. The simulated server (a
# process of its own, on the other core) waits exactly --ttft-ms before the
# first token and --itl-ms between tokens; the client is pinned to one
# core. Both HTTP transports (lean, net/http) run interleaved. The
# server's prefix cache is off, so repeated prompts keep their TTFT.
#
#   bench/timing_fidelity.sh [runs=3] [concurrencies="1 64 256 1024"]
set -euo pipefail
runs=${1:-3}
concurrencies=${2:-"1 64 256 1024"}
ttft=20 itl=5 osl=32
port=18934
cd "$(dirname "$0")/.."
out=$(mktemp -d)
go build -o "$out/llmbench" ./cmd/llmbench
taskset -c 1 "$out/llmbench" mock-server --port $port --ttft-ms $ttft --itl-ms $itl --max-num-seqs 100000 --prefix-caching=false >/dev/null 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out"' EXIT
for _ in $(seq 50); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
ulimit -n 65536 2>/dev/null || true

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
stats() { # profile JSON -> ttft_p50 ttft_p99 itl_p50 itl_p99 (ms)
  python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
t, i = d["time_to_first_token"], d["inter_token_latency"]
print(t["p50"], t["p99"], i["p50"], i["p99"])
PY
}
echo "injected: TTFT $ttft ms, ITL $itl ms, $osl tokens a response"
for c in $concurrencies; do
  n=$((c * 4)); [ $n -lt 50 ] && n=50
  for client in lean net/http; do
    f="$out/$(echo "$client" | tr / _)"; : > "$f"
    for r in $(seq "$runs"); do
      GOMAXPROCS=1 taskset -c 0 "$out/llmbench" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" --streaming --http-client "$client" \
        --concurrency "$c" --request-count "$n" --isl 64 --osl $osl --random-seed "$r" \
        --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
      stats "$out/run/profile_export_aiperf.json" >> "$f"
    done
    printf 'concurrency %5d  %-9s TTFT p50 %7.2f p99 %7.2f ms   ITL p50 %6.2f p99 %6.2f ms   (medians of %d runs)\n' "$c" "$client" \
      "$(cut -d' ' -f1 "$f" | median)" "$(cut -d' ' -f2 "$f" | median)" "$(cut -d' ' -f3 "$f" | median)" "$(cut -d' ' -f4 "$f" | median)" "$runs"
  done
done
