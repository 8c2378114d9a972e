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
# BASELINE=<llmbench binary> adds that build (say, an earlier commit's) as
# one more client, for before/after figures from the same runs.
#
# Per SSE event divides the CPU per streamed request by the data events of
# one response (osl content chunks plus the role, finish and [DONE] events).
#
# Beside them, in the same runs: wrk (Debian package) and k6 (built from the
# Go module proxy into ~/.cache/llmbench-bench when not on PATH) posting the
# same body for 10 s at the same concurrency, on the same core, CPU from
# their whole process (user + system) over the requests they completed
# (their start-up included: about 1 % of the run for k6). Neither parses the
# stream: they read each response to its end.
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
command -v wrk >/dev/null || { apt-get install -y -qq wrk >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq wrk; }; }
k6=$(command -v k6 || echo "$HOME/.cache/llmbench-bench/k6")
[ -x "$k6" ] || GOBIN="$HOME/.cache/llmbench-bench" go install go.k6.io/k6@v1.8.1
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

# other_tool <wrk|k6> <stream true|false> -> "cpu_us_per_request requests_per_second"
other_tool() {
  local body="{\"model\":\"m\",\"messages\":[{\"role\":\"user\",\"content\":\"$(printf 'bako %.0s' $(seq 64))\"}],\"max_tokens\":$osl,\"stream\":$2}"
  local url="http://127.0.0.1:$port/v1/chat/completions"
  if [ "$1" = wrk ]; then
    printf 'wrk.method = "POST"\nwrk.body = %s\nwrk.headers["Content-Type"] = "application/json"\n' "'$body'" > "$out/post.lua"
    /usr/bin/time -f "%U %S" -o "$out/time" taskset -c 0 wrk -t1 -c"$concurrency" -d10s -s "$out/post.lua" "$url" > "$out/wrk.txt"
    n=$(awk '/requests in/ {print $1}' "$out/wrk.txt")
  else
    printf '%s' "$body" > "$out/body.json"
    cat > "$out/k6.js" <<JS
import http from 'k6/http';
const body = open('$out/body.json');
export const options = { vus: $concurrency, duration: '10s' };
export default function () { http.post('$url', body, { headers: { 'Content-Type': 'application/json' } }); }
JS
    GOMAXPROCS=1 /usr/bin/time -f "%U %S" -o "$out/time" taskset -c 0 "$k6" run --quiet --no-color --summary-export "$out/k6.json" "$out/k6.js" >/dev/null 2>&1
    n=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['metrics']['http_reqs']['count'])" "$out/k6.json")
  fi
  awk -v n="$n" '{printf "%.2f %.0f\n", ($1+$2)/n*1e6, n/10}' "$out/time"
}

for mode in non-streaming streaming; do
  flag=""; stream=false; [ $mode = streaming ] && { flag="--streaming"; stream=true; }
  clients="lean net/http wrk k6"; [ -n "${BASELINE:-}" ] && clients="$clients baseline"
  for client in $clients; do : > "$out/${client//\//_}.cpu"; : > "$out/${client//\//_}.rps"; done
  for r in $(seq "$runs"); do
    for tool in wrk k6; do
      read -r cpu rps < <(other_tool $tool $stream)
      echo "$cpu" >> "$out/$tool.cpu"; echo "$rps" >> "$out/$tool.rps"
    done
    for client in lean net/http ${BASELINE:+baseline}; do
      bin="$out/llmbench" transport=$client
      [ $client = baseline ] && bin=$BASELINE transport=lean
      GOMAXPROCS=1 taskset -c 0 "$bin" profile -m m --tokenizer builtin --url "http://127.0.0.1:$port" $flag --http-client "$transport" \
        --concurrency "$concurrency" --request-count "$requests" --isl 64 --osl "$osl" --random-seed "$r" \
        --ui-type none --no-server-metrics --artifact-dir "$out/run" >/dev/null 2>&1
      read -r cpu rps < <(cpu_per_request "$out/run/profile_export_aiperf.json")
      echo "$cpu" >> "$out/${client//\//_}.cpu"; echo "$rps" >> "$out/${client//\//_}.rps"
    done
  done
  for client in $clients; do
    f="$out/${client//\//_}"
    cpu=$(median < "$f.cpu")
    per_event=""
    [ $mode = streaming ] && per_event=$(awk -v c="$cpu" -v e="$events" 'BEGIN {printf "  %.2f µs/SSE event (%d events a response)", c/e, e}')
    printf '%-14s %-9s client CPU %6.1f µs/request%s  %7.0f req/s  (medians of %d; CPU runs: %s)\n' "$mode" "$client" "$cpu" "$per_event" \
      "$(median < "$f.rps")" "$runs" "$(sort -g "$f.cpu" | tr '\n' ' ')"
  done
done
