// Command scrapememory measures the memory server-metrics collection needs
// on a long run: it serves a vLLM-like exposition of about 400 KB whose
// counters and histograms move on every scrape, scrapes it -scrapes times
// through llmbench's collector and store, aggregates the run, writes the
// JSON and CSV exports (and Parquet with -parquet), and prints the live
// heap after a collection, the store's share of it (its buffers' lengths
// and capacities), and the peak resident memory (VmHWM) of the process.
//
//	go run ./bench/scrapememory -scrapes 2000 -parquet
//
// bench/scrape_memory.sh runs it at 1, 1,000 and 2,000 scrapes, so the
// process's fixed baseline and the growth per 1,000 scrapes can be read
// off. -memprofile writes a heap profile of what is live at the end, for
// go tool pprof -sample_index=inuse_space.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmbench/llmbench/internal/export"
	"github.com/llmbench/llmbench/internal/record"
	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// exposition renders a vLLM-like /metrics page of about 400 KB: 8 engines
// × 25 histogram families of 20 buckets, 30 gauges and 30 counters.
//
// By default its values move the way a busy server's do between two
// scrapes: each histogram series takes 0–40 new observations around its
// own typical bucket (its sum grows by their fractional seconds), each
// counter grows by a few, each gauge wanders. With churn every count jumps
// by hundreds at every scrape and may fall: a worst case for the store's
// compression, not a server's behaviour.
type exposition struct {
	churn bool
	n     int
	rng   *rand.Rand
	// Per histogram series: observations per bucket (not cumulative), sum.
	obs [25 * 8][20]int
	sum [25 * 8]float64
	ctr [30 * 8]int
}

func (x *exposition) next() []byte {
	x.n++
	n := x.n
	var b bytes.Buffer
	for f := range 25 {
		name := fmt.Sprintf("vllm:hist_%02d_seconds", f)
		fmt.Fprintf(&b, "# HELP %s Histogram %d in seconds.\n# TYPE %s histogram\n", name, f, name)
		for e := range 8 {
			s := f*8 + e
			lbl := fmt.Sprintf(`engine="%d",model_name="Qwen/Qwen3-0.6B"`, e)
			if !x.churn {
				typical := (f + e) % 16
				for range x.rng.IntN(41) {
					k := min(max(typical+int(x.rng.NormFloat64()*1.5), 0), 19)
					x.obs[s][k]++
					x.sum[s] += 0.001 * float64(int(1)<<k) * (0.5 + 0.5*x.rng.Float64())
				}
			}
			cum := 0
			for k := range 20 {
				if x.churn {
					cum += (k*3 + n*(k%4+1)) % 997
				} else {
					cum += x.obs[s][k]
				}
				fmt.Fprintf(&b, "%s_bucket{%s,le=\"%g\"} %d\n", name, lbl, 0.001*float64(int(1)<<k), cum)
			}
			sum := x.sum[s]
			if x.churn {
				sum = float64(cum) * 0.37
			}
			fmt.Fprintf(&b, "%s_bucket{%s,le=\"+Inf\"} %d\n%s_sum{%s} %g\n%s_count{%s} %d\n", name, lbl, cum, name, lbl, sum, name, lbl, cum)
		}
	}
	for f := range 30 {
		fmt.Fprintf(&b, "# HELP vllm:gauge_%02d A gauge.\n# TYPE vllm:gauge_%02d gauge\n", f, f)
		for e := range 8 {
			fmt.Fprintf(&b, "vllm:gauge_%02d{engine=\"%d\",model_name=\"Qwen/Qwen3-0.6B\"} %d\n", f, e, (f*e+n)%100)
		}
		fmt.Fprintf(&b, "# HELP vllm:counter_%02d_total A counter.\n# TYPE vllm:counter_%02d_total counter\n", f, f)
		for e := range 8 {
			c := f*e*1000 + n*7
			if !x.churn {
				x.ctr[f*8+e] += x.rng.IntN(8)
				c = x.ctr[f*8+e]
			}
			fmt.Fprintf(&b, "vllm:counter_%02d_total{engine=\"%d\",model_name=\"Qwen/Qwen3-0.6B\"} %d\n", f, e, c)
		}
	}
	return b.Bytes()
}

func peakRSS() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func main() {
	scrapes := flag.Int("scrapes", 2000, "scrapes to take")
	withParquet := flag.Bool("parquet", false, "write the Parquet export too")
	churn := flag.Bool("churn", false, "move every value by hundreds at every scrape (worst case)")
	memProfile := flag.String("memprofile", "", "write a heap profile of the live heap at the end to this file")
	flag.Parse()
	if *memProfile != "" {
		// Every 4 KB allocated sampled, not every 512 KB: the store's
		// buffers are small and many.
		runtime.MemProfileRate = 4096
	}

	var mu sync.Mutex
	page := &exposition{churn: *churn, rng: rand.New(rand.NewPCG(1, 2))}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		body := page.next()
		mu.Unlock()
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.Write(body)
	}))
	defer srv.Close()
	size := len((&exposition{churn: *churn, rng: rand.New(rand.NewPCG(1, 2))}).next())

	store := servermetrics.NewStore()
	clock := record.NewClock()
	var got atomic.Int64
	done := make(chan struct{})
	c := scrape.NewCollector(scrape.Options{URLs: []string{srv.URL + "/metrics"}, Interval: time.Millisecond, ReachabilityTimeout: 10 * time.Second,
		Clock: clock, Log: io.Discard, Sink: func(s *scrape.Snapshot) {
			store.Add(s)
			if int(got.Add(1)) == *scrapes {
				close(done)
			}
		}})
	began := time.Now()
	start := clock.Wall(clock.Now())
	c.Start(context.Background())
	<-done
	c.Finish(context.Background(), context.Background())
	scraped := time.Since(began)
	end := clock.Wall(clock.Now())

	w := servermetrics.Window{StartNs: start, EndNs: end}
	sm := export.ServerMetrics{Version: "bench", Metrics: store.Aggregate(w, stats.IntervalFit{}), Window: w, Successful: []string{srv.URL + "/metrics"}}
	parquetSize := writeExports(store, sm, *withParquet)
	// Twice: what sits in a sync.Pool (encoding/json's buffers) survives
	// one collection in the pool's victim cache; the live heap is to be
	// what the run keeps.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	fp := store.Footprint()
	fmt.Printf("churn %v; scrapes %d of %d KB in %v; parquet %v (%d KB); live heap after GC %d KB, store %d KB (%d KB written, %d series) (%d metrics); peak RSS %s\n",
		*churn, got.Load(), size/1000, scraped.Round(time.Millisecond), *withParquet, parquetSize/1000,
		ms.HeapAlloc>>10, fp.Allocated>>10, fp.Used>>10, fp.Series, len(sm.Metrics), peakRSS())
	if *memProfile != "" {
		f, err := os.Create(*memProfile)
		if err == nil {
			err = pprof.Lookup("heap").WriteTo(f, 0)
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil {
			panic(err)
		}
	}
	runtime.KeepAlive(store)
}

// writeExports writes the JSON and CSV exports, and the Parquet one when
// asked, to a temporary directory it removes, and returns the Parquet
// file's size. Its buffers are garbage once it returns.
func writeExports(store *servermetrics.Store, sm export.ServerMetrics, withParquet bool) int64 {
	dir, err := os.MkdirTemp("", "scrapememory")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	j, err := export.ServerMetricsJSON(sm)
	if err == nil {
		err = export.WriteFile(dir, "server_metrics_export.json", j)
	}
	if err != nil {
		panic(err)
	}
	csv, err := export.ServerMetricsCSV(sm)
	if err == nil {
		err = export.WriteFile(dir, "server_metrics_export.csv", csv)
	}
	if err != nil {
		panic(err)
	}
	parquetSize := int64(0)
	if withParquet {
		if err := export.WriteFileFunc(dir, "server_metrics_export.parquet", func(out io.Writer) error {
			return export.WriteServerMetricsParquet(out, store, sm)
		}); err != nil {
			panic(err)
		}
		st, _ := os.Stat(dir + "/server_metrics_export.parquet")
		parquetSize = st.Size()
	}
	return parquetSize
}
