#!/usr/bin/env bash
# Peak memory of server-metrics collection over a long run: a ~400 KB
# vLLM-like exposition scraped 1,000 and 2,000 times, with and without the
# Parquet export, then without Parquet on the -churn worst case (every count
# jumps by hundreds each scrape). The difference between the two lengths is
# the growth per 1,000 scrapes. Usage: bench/scrape_memory.sh [runs]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1}
go build -o /tmp/llmbench-scrapememory ./bench/scrapememory
for parquet in false true; do
	for n in 1000 2000; do
		for _ in $(seq "$runs"); do
			/tmp/llmbench-scrapememory -scrapes "$n" -parquet="$parquet"
		done
	done
done
for n in 1000 2000; do
	for _ in $(seq "$runs"); do
		/tmp/llmbench-scrapememory -scrapes "$n" -churn
	done
done
