#!/usr/bin/env bash
# Memory of server-metrics collection over a long run: a ~400 KB vLLM-like
# exposition scraped 1, 1,000 and 2,000 times, by default (values move as a
# busy server's do) and on the -churn worst case (every count jumps by
# hundreds each scrape), then with the Parquet export for its peak RSS.
# Each run prints the live heap after GC and the store's share of it.
# The summary reads off, per mode, the live heap above the 1-scrape
# baseline (the process's fixed part: the collector, parser, HTTP server,
# the store's per-series headers) at 1,000 scrapes, and the growth from
# 1,000 to 2,000 scrapes; with several runs, the median of each figure.
# Usage: bench/scrape_memory.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
go build -o /tmp/llmbench-scrapememory ./bench/scrapememory
results=$(mktemp)
trap 'rm -f "$results"' EXIT
for mode in default churn; do
	flags=()
	[ "$mode" = churn ] && flags=(-churn)
	for n in 1 1000 2000; do
		for _ in $(seq "$runs"); do
			line=$(/tmp/llmbench-scrapememory -scrapes "$n" "${flags[@]}")
			echo "$line"
			heap=$(sed -n 's/.*live heap after GC \([0-9]*\) KB, store \([0-9]*\) KB.*/\1 \2/p' <<<"$line")
			echo "$mode $n $heap" >>"$results"
		done
	done
done
for n in 1000 2000; do
	for _ in $(seq "$runs"); do
		/tmp/llmbench-scrapememory -scrapes "$n" -parquet
	done
done
echo
echo "mode     scrapes  live heap KB  store KB   (median of $runs)"
awk '
	{ k = $1 " " $2; n[k]++; heap[k, n[k]] = $3; store[k, n[k]] = $4 }
	function median(a, k,    i, j, t, m, v) {
		m = n[k]
		for (i = 1; i <= m; i++) v[i] = a[k, i]
		for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		return v[int((m + 1) / 2)]
	}
	END {
		split("default churn", modes, " ")
		for (i = 1; i <= 2; i++) {
			md = modes[i]
			for (s = 1; s <= 3; s++) {
				sc = s == 1 ? 1 : s == 2 ? 1000 : 2000
				h[sc] = median(heap, md " " sc); st[sc] = median(store, md " " sc)
				printf "%-8s %7d  %12d  %8d\n", md, sc, h[sc], st[sc]
			}
			printf "%-8s above the 1-scrape baseline at 1,000 scrapes: heap %d KB, store %d KB; growth 1,000 → 2,000 scrapes: heap %d KB, store %d KB\n", md, h[1000] - h[1], st[1000] - st[1], h[2000] - h[1000], st[2000] - st[1000]
		}
	}' "$results"
