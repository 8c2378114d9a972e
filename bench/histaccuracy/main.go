// Command histaccuracy measures how close each server-histogram percentile
// estimator (linear, aiperf, interval-fit) comes to the exact percentiles
// of known samples.
//
// Each case draws realistic observations over a run (TTFT, ITL, latencies,
// queue times, token counts; see cases), records them in a Prometheus
// histogram with vLLM's real bucket layout (client_golang, the way a
// server does), renders the exposition every 333 ms of the run's clock,
// and sends every exposition through llmbench's own parser, store and
// aggregation, exactly as a scrape would. The estimates in the aggregated
// statistics are then compared with numpy-style percentiles of the
// observations themselves.
//
// Relative error is |estimate − exact| / max(|exact|, b₁), where b₁ is the
// first bucket bound: below the histogram's resolution (a percentile that
// is exactly 0) an error is measured against that resolution.
//
// The floor columns are an oracle's errors: it knows the case's own law
// inside every bucket (from many further draws) and places the run's
// bucket counts by it, the best a within-bucket shape can do from the
// counts, so a target can be set against what the data allow.
//
// With -sum-digits N every _sum is printed to N significant digits before
// it is parsed, as a C++ exporter at a stream's default precision (6)
// prints it, where client_golang prints it in full.
//
//	go run ./bench/histaccuracy [-seeds 3] [-first-seed 1] [-v] [-case name] [-sum-digits 6]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/llmbench/llmbench/internal/scrape"
	"github.com/llmbench/llmbench/internal/servermetrics"
	"github.com/llmbench/llmbench/internal/stats"
)

// vLLM's bucket layouts (vllm/v1/metrics/loggers.py).
var (
	ttftBuckets    = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
	itlBuckets     = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}
	latencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0} // vLLM before the long tail was added
	tokenBuckets   = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}                                         // build_1_2_5_buckets(max_model_len=1024)
	// build_1_2_5_buckets(max_model_len=8192): the last bound, 5,000, far
	// below the model's limit.
	tokenBuckets8k = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000}
)

// SGLang's default layouts (sglang/srt/metrics/collector.py,
// TokenizerMetricsCollector): TTFT starts at 100 ms.
var (
	sglangTTFTBuckets = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400}
	sglangITLBuckets  = []float64{0.002, 0.004, 0.006, 0.008, 0.010, 0.015, 0.020, 0.025, 0.030, 0.035, 0.040, 0.060, 0.080, 0.100, 0.200, 0.400, 0.600, 0.800, 1.000, 2.000, 4.000, 6.000, 8.000}
	sglangE2EBuckets  = []float64{0.1, 0.2, 0.4, 0.6, 0.8, 1, 2, 4, 6, 8, 10, 20, 40, 60, 80, 100, 200, 400, 600, 1200, 1800, 2400}
)

// TensorRT-LLM's defaults (tensorrt_llm/metrics/collector.py): vLLM's TTFT
// and latency layouts with the long tail to 7,680 s, and its own prefill
// time layout.
var (
	trtllmLatencyBuckets = []float64{0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0}
	trtllmPrefillBuckets = []float64{0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}
)

// A case is a metric's observations over a run.
type benchCase struct {
	name, what string
	buckets    []float64
	seconds    float64 // run length
	rate       float64 // observations per second
	// draw returns one observation made at time t (seconds into the run).
	draw func(r *rand.Rand, t float64) float64
	// batch, when set, replaces draw: each arrival is a batch of requests
	// finishing together, observed at once.
	batch func(r *rand.Rand, t float64) []float64
}

func lognormal(r *rand.Rand, median, sigma float64) float64 {
	return median * math.Exp(sigma*r.NormFloat64())
}

var cases = []benchCase{
	{"ttft-lognormal", "TTFT, lognormal (median 180 ms, σ 0.6)", ttftBuckets, 120, 20,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 0.18, 0.6) }, nil},
	{"ttft-bimodal", "TTFT, prefix-cache hits (60 %, ~40 ms) and misses (~600 ms)", ttftBuckets, 120, 20,
		func(r *rand.Rand, _ float64) float64 {
			if r.Float64() < 0.6 {
				return lognormal(r, 0.04, 0.3)
			}
			return lognormal(r, 0.6, 0.35)
		}, nil},
	{"ttft-sparse", "TTFT, a short run: 1 request/s for 60 s", ttftBuckets, 60, 1,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 0.3, 0.5) }, nil},
	{"itl-at-bound", "ITL clustered at the 10 ms bucket bound (10 ± 0.4 ms)", itlBuckets, 60, 2000,
		func(r *rand.Rand, _ float64) float64 { return math.Max(0.0001, 0.010+0.0004*r.NormFloat64()) }, nil},
	{"itl-stalls", "ITL 22 ± 2 ms with 1 % stalls (~300 ms: preemption, prefill interference)", itlBuckets, 60, 1000,
		func(r *rand.Rand, _ float64) float64 {
			if r.Float64() < 0.01 {
				return lognormal(r, 0.3, 0.5)
			}
			return math.Max(0.001, 0.022+0.002*r.NormFloat64())
		}, nil},
	{"e2e-tail-beyond", "request latency, lognormal (median 20 s, σ 0.8): a tail beyond the 60 s bucket", latencyBuckets, 300, 5,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 20, 0.8) }, nil},
	{"queue-mostly-zero", "queue time: 0 outside bursts, exponential (mean 1.5 s) during bursts of 10 s every 40 s", latencyBuckets, 200, 10,
		func(r *rand.Rand, t float64) float64 {
			if math.Mod(t, 40) < 10 {
				return r.ExpFloat64() * 1.5
			}
			return 0
		}, nil},
	{"tokens-1-2-5", "generation tokens (median 300, σ 0.9, max_model_len 1024): 1-2-5 buckets, data in +Inf", tokenBuckets, 120, 10,
		func(r *rand.Rand, _ float64) float64 {
			return math.Min(1024, math.Max(1, math.Round(lognormal(r, 300, 0.9))))
		}, nil},
	{"load-shift", "TTFT, load doubles mid-run (median 80 ms, then 400 ms)", ttftBuckets, 120, 20,
		func(r *rand.Rand, t float64) float64 {
			if t < 60 {
				return lognormal(r, 0.08, 0.4)
			}
			return lognormal(r, 0.4, 0.4)
		}, nil},
	{"cluster-batches", "request latency in one bucket, batches of 8 finishing together (the README run: 681 ms, then 637 ms once the prefix cache warms, ± 1 ms)", latencyBuckets, 17, 1.5,
		nil, func(r *rand.Rand, t float64) []float64 {
			base := 0.681
			if t > 8 {
				base = 0.637
			}
			base += 0.002 * r.NormFloat64() // the batch's own
			out := make([]float64, 8)
			for i := range out {
				out[i] = base + 0.001*r.NormFloat64()
			}
			return out
		}},
	{"ttft-jitter", "TTFT 100 ± 30 ms, 200 requests in 6 s (the self-consistency test's shape: half of them in the wide (0.1, 0.25] bucket)", ttftBuckets, 6.25, 32,
		func(r *rand.Rand, _ float64) float64 { return math.Max(0.001, 0.1+0.03*r.NormFloat64()) }, nil},
	{"cluster-independent", "request latency in one bucket, independent (660 ± 12 ms, 20/s)", latencyBuckets, 60, 20,
		func(r *rand.Rand, _ float64) float64 { return 0.66 + 0.012*r.NormFloat64() }, nil},
	{"cluster-two-buckets", "TTFT in two buckets visited in turn, batches of 8 (the README run: prefix-cache misses ~51 ms, then hits ~6 ms)", ttftBuckets, 17, 1.5,
		nil, func(r *rand.Rand, t float64) []float64 {
			base, spread := 0.051, 0.002
			if t > 8 {
				base, spread = 0.006, 0.0005
			}
			base += spread * r.NormFloat64()
			out := make([]float64, 8)
			for i := range out {
				out[i] = base + spread/2*r.NormFloat64()
			}
			return out
		}},
	{"queue-batches", "request latency behind a saturated queue: batches of 4 finish together, the queue's wait moving the batches (±60 ms over 20 s) across the 0.8 s bound", latencyBuckets, 60, 5,
		nil, func(r *rand.Rand, t float64) []float64 {
			base := 0.75 + 0.06*math.Sin(2*math.Pi*t/20) + 0.02*r.NormFloat64()
			out := make([]float64, 4)
			for i := range out {
				out[i] = base + 0.03*r.NormFloat64()
			}
			return out
		}},
	{"queue-warming", "request latency behind a queue that builds: batches of 4, their level rising from 0.45 to 0.8 s over the first 8 s, then 0.6 s (batches ±3 %, requests ±7 %, lognormal)", latencyBuckets, 30, 12,
		nil, func(r *rand.Rand, t float64) []float64 {
			level := 0.6
			if t < 8 {
				level = 0.45 + 0.35*t/8
			}
			base := level * math.Exp(0.03*r.NormFloat64())
			out := make([]float64, 4)
			for i := range out {
				out[i] = base * math.Exp(0.07*r.NormFloat64())
			}
			return out
		}},
	{"tail-ceiling", "prompt tokens uniform up to the 8,192-token limit, 1-2-5 buckets ending at 5,000: 39 % in +Inf", tokenBuckets8k, 120, 10,
		func(r *rand.Rand, _ float64) float64 { return math.Ceil(8192 * r.Float64()) }, nil},
	{"sglang-ttft", "TTFT, lognormal (median 350 ms, σ 0.5), SGLang's layout", sglangTTFTBuckets, 120, 20,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 0.35, 0.5) }, nil},
	{"sglang-ttft-fast", "TTFT 45 ± 12 ms: all in SGLang's first bucket, (0, 100 ms]", sglangTTFTBuckets, 60, 20,
		func(r *rand.Rand, _ float64) float64 { return math.Max(0.005, 0.045+0.012*r.NormFloat64()) }, nil},
	{"sglang-itl", "ITL 14 ± 1.5 ms with 0.5 % stalls (~150 ms), SGLang's layout", sglangITLBuckets, 60, 1000,
		func(r *rand.Rand, _ float64) float64 {
			if r.Float64() < 0.005 {
				return lognormal(r, 0.15, 0.4)
			}
			return math.Max(0.001, 0.014+0.0015*r.NormFloat64())
		}, nil},
	{"sglang-e2e", "request latency, lognormal (median 6 s, σ 0.6), SGLang's layout", sglangE2EBuckets, 300, 5,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 6, 0.6) }, nil},
	{"trtllm-prefill", "prefill time, lognormal (median 60 ms, σ 0.7), TensorRT-LLM's layout", trtllmPrefillBuckets, 120, 20,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 0.06, 0.7) }, nil},
	{"trtllm-e2e", "request latency, lognormal (median 40 s, σ 0.9), TensorRT-LLM's long-tail layout", trtllmLatencyBuckets, 300, 5,
		func(r *rand.Rand, _ float64) float64 { return lognormal(r, 40, 0.9) }, nil},
}

type estimator struct {
	name string
	est  servermetrics.Estimator
}

var estimators = []estimator{
	{"linear", stats.BucketLinear{}},
	{"aiperf", stats.AIPerfPolynomial{}},
	{"interval-fit", stats.IntervalFit{}},
}

// The percentiles reported, with their index in stats.Percentiles.
var reported = []struct {
	name  string
	index int
	p     float64
}{{"p50", 4, 50}, {"p90", 6, 90}, {"p99", 8, 99}}

const scrapeEveryNs = 333_000_000

func main() {
	seeds := flag.Int("seeds", 3, "runs per case, each with its own seed; errors are averaged over them")
	firstSeed := flag.Int("first-seed", 1, "the first run's seed (the others follow): held-out seeds check a change tuned on 1")
	verbose := flag.Bool("v", false, "print every case's exact and estimated values")
	only := flag.String("case", "", "run only this case")
	sumDigits := flag.Int("sum-digits", 0, "print each _sum to this many significant digits (a C++ stream: 6); 0: in full")
	flag.Parse()
	if *sumDigits < 0 || *sumDigits > 17 {
		fmt.Fprintln(os.Stderr, "histaccuracy: -sum-digits must be 0 to 17")
		os.Exit(2)
	}
	if *only != "" {
		cases = slices.DeleteFunc(cases, func(c benchCase) bool { return c.name != *only })
		if len(cases) == 0 {
			fmt.Fprintf(os.Stderr, "histaccuracy: no case %q (run without -case for the list)\n", *only)
			os.Exit(2)
		}
	}
	if *seeds < 1 {
		fmt.Fprintln(os.Stderr, "histaccuracy: -seeds must be at least 1")
		os.Exit(2)
	}

	// errs[estimator][percentile] per case, averaged over seeds.
	errs := make([][][]float64, len(estimators)) // [est][case][pct]
	outside := make([]int, len(estimators))
	// beyondSums counts the estimates outside what the counts and every
	// interval's sum allow (stats.AllowedRange), a narrower range.
	beyondSums := make([]int, len(estimators))
	for e := range estimators {
		errs[e] = make([][]float64, len(cases))
		for c := range cases {
			errs[e][c] = make([]float64, len(reported))
		}
	}
	oracleErrs := make([][]float64, len(cases))
	for c, bc := range cases {
		oracleErrs[c] = make([]float64, len(reported))
		law := lawSample(bc)
		for seed := range *seeds {
			obs, store, first, last := run(bc, uint64(seed+*firstSeed), *sumDigits)
			sorted := slices.Clone(obs)
			slices.Sort(sorted)
			if *verbose {
				printBuckets(bc, sorted)
			}
			for k, rp := range reported {
				exact := stats.PercentileSorted(sorted, rp.p)
				got := oracle(bc.buckets, sorted, law, rp.p)
				oracleErrs[c][k] += math.Abs(got-exact) / math.Max(math.Abs(exact), bc.buckets[0]) / float64(*seeds)
			}
			for e, est := range estimators {
				seen := &seriesKeeper{inner: est.est}
				h := histogramStats(store, seen, first, last)
				qs := make([]float64, len(reported))
				for k, rp := range reported {
					qs[k] = rp.p / 100
				}
				least, most := stats.AllowedRange(seen.series, qs)
				for k, rp := range reported {
					if got := h.Estimates[rp.index]; !(got >= least[k] && got <= most[k]) {
						beyondSums[e]++
					}
					exact := stats.PercentileSorted(sorted, rp.p)
					got := h.Estimates[rp.index]
					err := math.Abs(got-exact) / math.Max(math.Abs(exact), bc.buckets[0])
					errs[e][c][k] += err / float64(*seeds)
					if lo, hi := allowed(bc.buckets, sorted, rp.p); math.IsNaN(got) || got < lo || got > hi {
						outside[e]++
					}
					if *verbose {
						fmt.Printf("%-18s seed %d %-12s %s exact %-12.6g est %-12.6g err %6.2f%%\n", bc.name, seed+*firstSeed, est.name, rp.name, exact, got, 100*err)
					}
				}
			}
		}
	}

	fmt.Printf("Mean relative error of the server-histogram percentile estimates, %d seeds per case, scraped every 333 ms\n\n", *seeds)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	header := "case\t"
	for _, est := range estimators {
		for _, rp := range reported {
			header += est.name + " " + rp.name + "\t"
		}
	}
	for _, rp := range reported {
		header += "floor " + rp.name + "\t"
	}
	fmt.Fprintln(tw, header)
	for c, bc := range cases {
		row := bc.name + "\t"
		for e := range estimators {
			for k := range reported {
				row += fmt.Sprintf("%.1f%%\t", 100*errs[e][c][k])
			}
		}
		for k := range reported {
			row += fmt.Sprintf("%.1f%%\t", 100*oracleErrs[c][k])
		}
		fmt.Fprintln(tw, row)
	}
	row := "mean\t"
	for e := range estimators {
		for k := range reported {
			var s float64
			for c := range cases {
				s += errs[e][c][k]
			}
			// Two decimals: a mean is held against its target (≤ 1 %),
			// which one decimal would round over.
			row += fmt.Sprintf("%.2f%%\t", 100*s/float64(len(cases)))
		}
	}
	for k := range reported {
		var s float64
		for c := range cases {
			s += oracleErrs[c][k]
		}
		row += fmt.Sprintf("%.2f%%\t", 100*s/float64(len(cases)))
	}
	fmt.Fprintln(tw, row)
	tw.Flush()
	fmt.Println()
	for e, est := range estimators {
		fmt.Printf("%s: %d estimates outside what the bucket counts allow, %d outside what counts and sums allow\n", est.name, outside[e], beyondSums[e])
	}
	fmt.Println("floor: an oracle that knows each case's own law inside every bucket (from", lawDraws, "further draws)")
	fmt.Println("and places the run's bucket counts by it: the best any within-bucket shape can do from the counts;")
	fmt.Println("the sums can do better still (an interval holding one observation gives it exactly).")
	fmt.Println("\nCases:")
	for _, bc := range cases {
		fmt.Printf("  %-18s %s; %g obs/s for %g s\n", bc.name, bc.what, bc.rate, bc.seconds)
	}
}

// run draws the case's observations as a Poisson process, records them in
// a client_golang histogram, and scrapes it every 333 ms through
// llmbench's parser into a store. It returns the observations and the
// first and last scrape times.
func run(bc benchCase, seed uint64, sumDigits int) (obs []float64, store *servermetrics.Store, first, last int64) {
	r := rand.New(rand.NewPCG(seed, 0x6869737461636375)) // "histaccu"
	reg := prometheus.NewRegistry()
	hist := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "vllm:bench_" + strings.ReplaceAll(bc.name, "-", "_"), Help: bc.what, Buckets: bc.buckets})
	reg.MustRegister(hist)
	store = servermetrics.NewStore()
	scrapeOnce := func(tNs int64) {
		fams, err := reg.Gather()
		if err != nil {
			panic(err)
		}
		var b bytes.Buffer
		enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, f := range fams {
			if err := enc.Encode(f); err != nil {
				panic(err)
			}
		}
		parsed, err := scrape.Parse(&b)
		if err != nil {
			panic(err)
		}
		if sumDigits > 0 {
			for f := range parsed {
				for i := range parsed[f].Series {
					s := &parsed[f].Series[i]
					s.Sum, _ = strconv.ParseFloat(strconv.FormatFloat(s.Sum, 'g', sumDigits, 64), 64)
				}
			}
		}
		store.Add(&scrape.Snapshot{Endpoint: "http://bench/metrics", FirstByteNs: tNs, Families: parsed})
	}
	end := int64(bc.seconds * 1e9)
	next := int64(0)
	t := r.ExpFloat64() / bc.rate
	for tick := int64(0); tick <= end; tick += scrapeEveryNs {
		for ; int64(t*1e9) < tick && t < bc.seconds; t += r.ExpFloat64() / bc.rate {
			vs := []float64(nil)
			if bc.batch != nil {
				vs = bc.batch(r, t)
			} else {
				vs = append(vs, bc.draw(r, t))
			}
			for _, v := range vs {
				hist.Observe(v)
				obs = append(obs, v)
			}
		}
		scrapeOnce(tick)
		next = tick
	}
	return obs, store, 0, next
}

func histogramStats(store *servermetrics.Store, est servermetrics.Estimator, first, last int64) *servermetrics.HistStats {
	for _, m := range store.Aggregate(servermetrics.Window{StartNs: first, EndNs: last}, est) {
		if m.Type == scrape.Histogram {
			return m.Series[0].Hist
		}
	}
	panic("no histogram aggregated")
}

// seriesKeeper is an estimator that keeps a copy of the last series it
// was given.
type seriesKeeper struct {
	inner  servermetrics.Estimator
	series stats.HistogramSeries
}

func (k *seriesKeeper) Quantiles(h stats.HistogramSeries, qs []float64) []float64 {
	// The store reuses its buffers for the next series.
	k.series = h.Clone()
	return k.inner.Quantiles(h, qs)
}

// allowed is the range the bucket counts allow for percentile p: from the
// lower bound of the bucket holding the order statistic below numpy's
// rank to the upper bound of the one holding the statistic above it.
func allowed(bounds, sorted []float64, p float64) (lo, hi float64) {
	rank := float64(len(sorted)-1) * p / 100
	bucket := func(v float64) (float64, float64) {
		lower := 0.0
		for _, b := range bounds {
			if v <= b {
				return lower, b
			}
			lower = b
		}
		return lower, math.Inf(1)
	}
	lo, _ = bucket(sorted[int(math.Floor(rank))])
	_, hi = bucket(sorted[int(math.Ceil(rank))])
	return lo, hi
}

// printBuckets prints each bucket's true count, mean and standard
// deviation, to set beside what an estimator fitted.
func printBuckets(bc benchCase, sorted []float64) {
	lower := 0.0
	bounds := append(slices.Clone(bc.buckets), math.Inf(1))
	i := 0
	for _, ub := range bounds {
		var n, s, s2 float64
		for ; i < len(sorted) && sorted[i] <= ub; i++ {
			n, s, s2 = n+1, s+sorted[i], s2+sorted[i]*sorted[i]
		}
		if n > 0 {
			mean := s / n
			fmt.Printf("%-18s bucket (%g,%g] n=%g mean=%.6g sd=%.4g\n", bc.name, lower, ub, n, mean, math.Sqrt(math.Max(s2/n-mean*mean, 0)))
		}
		lower = ub
	}
}

// lawDraws is how many observations lawSample draws.
const lawDraws = 400_000

// lawSample draws lawDraws observations of the case's law, sorted, from
// its own generator at times spread evenly over the run (a seed no run
// uses).
func lawSample(bc benchCase) []float64 {
	r := rand.New(rand.NewPCG(0x6c6177, 0x6f7261636c65)) // "law", "oracle"
	out := make([]float64, 0, lawDraws+16)
	for len(out) < lawDraws {
		t := r.Float64() * bc.seconds
		if bc.batch != nil {
			out = append(out, bc.batch(r, t)...)
		} else {
			out = append(out, bc.draw(r, t))
		}
	}
	slices.Sort(out)
	return out
}

// oracle is percentile p as estimated by the law itself: the i-th of a
// bucket's n observations (in the sample's sorted order) at the law's
// conditional quantile (i+0.5)/n inside that bucket, numpy's linear rule
// between order statistics, as interval-fit's last step does with its
// fitted shapes.
func oracle(bounds, sorted, law []float64, p float64) float64 {
	bucketOf := func(v float64) int {
		for i, b := range bounds {
			if v <= b {
				return i
			}
		}
		return len(bounds)
	}
	value := func(k int) float64 {
		j := bucketOf(sorted[k])
		first, n := k, 0
		for first > 0 && bucketOf(sorted[first-1]) == j {
			first--
		}
		for last := first; last < len(sorted) && bucketOf(sorted[last]) == j; last++ {
			n++
		}
		// The law's observations in bucket j.
		lo, hi := math.Inf(-1), math.Inf(1)
		if j > 0 {
			lo = bounds[j-1]
		}
		if j < len(bounds) {
			hi = bounds[j]
		}
		a, _ := slices.BinarySearch(law, math.Nextafter(lo, math.Inf(1)))
		b, _ := slices.BinarySearch(law, math.Nextafter(hi, math.Inf(1)))
		in := law[a:b]
		if len(in) == 0 {
			return sorted[k]
		}
		f := (float64(k-first) + 0.5) / float64(n)
		return in[min(int(f*float64(len(in))), len(in)-1)]
	}
	rank := float64(len(sorted)-1) * p / 100
	lo := int(math.Floor(rank))
	v := value(lo)
	if frac := rank - float64(lo); frac > 0 {
		v += frac * (value(lo+1) - v)
	}
	return v
}
