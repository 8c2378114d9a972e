package stats

import (
	"encoding/json"
	"math"
	"os"
	"slices"
	"strconv"
	"testing"
)

// goldens are AIPerf's estimator outputs on known inputs, produced by
// running AIPerf's own code (shared/fixtures/aiperf-histogram-goldens.json).
type goldens struct {
	Polynomial []struct {
		Name     string             `json:"name"`
		Buckets  map[string]float64 `json:"bucket_deltas_cumulative"`
		Sum      float64            `json:"total_sum"`
		Count    int64              `json:"total_count"`
		Learned  map[string]learned `json:"learned_stats"`
		Expected map[string]float64 `json:"expected"`
	} `json:"polynomial_cases"`
	EndToEnd struct {
		Scrapes struct {
			Sums    []float64   `json:"sums"`
			Counts  []float64   `json:"counts"`
			Les     []string    `json:"bucket_les"`
			Buckets [][]float64 `json:"bucket_counts"`
		} `json:"scrapes"`
		Learned  map[string]learned `json:"learned"`
		Expected map[string]float64 `json:"expected"`
		Linear   map[string]float64 `json:"prometheus_linear"`
	} `json:"end_to_end"`
	Linear []struct {
		Name     string             `json:"name"`
		Buckets  map[string]float64 `json:"buckets"`
		Total    *float64           `json:"total"`
		Expected map[string]float64 `json:"expected"`
	} `json:"prometheus_linear_cases"`
}

type learned struct {
	Pairs    [][2]float64 `json:"recorded_mean_count_pairs"`
	Means    []float64    `json:"observed_means"`
	Mean     *float64     `json:"estimated_mean"`
	Variance *float64     `json:"estimated_variance"`
}

var aiperfPercentiles = []string{"p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99"}
var aiperfQs = []float64{0.01, 0.05, 0.10, 0.25, 0.50, 0.75, 0.90, 0.95, 0.99}

func loadGoldens(t *testing.T) goldens {
	t.Helper()
	b, err := os.ReadFile("testdata/aiperf-histogram-goldens.json")
	if err != nil {
		t.Fatal(err)
	}
	var g goldens
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// sortedBuckets turns a {"le": cumulative} map into bounds in numeric
// order (+Inf last) and their counts.
func sortedBuckets(t *testing.T, m map[string]float64) (les []string, bounds, counts []float64) {
	t.Helper()
	for le := range m {
		les = append(les, le)
	}
	slices.SortFunc(les, func(a, b string) int { return compareFloat(parseLe(t, a), parseLe(t, b)) })
	for _, le := range les {
		bounds = append(bounds, parseLe(t, le))
		counts = append(counts, m[le])
	}
	return les, bounds, counts
}

func parseLe(t *testing.T, le string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(le, 64)
	if err != nil {
		t.Fatalf("le %q: %v", le, err)
	}
	return f
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func relClose(got, want float64) bool {
	return got == want || math.Abs(got-want) <= 1e-9*math.Max(math.Abs(want), 1e-300)
}

func checkPercentiles(t *testing.T, name string, got []float64, want map[string]float64) {
	t.Helper()
	if want == nil {
		if got != nil {
			t.Errorf("%s: got %v, want none", name, got)
		}
		return
	}
	if got == nil {
		t.Errorf("%s: got none, want %v", name, want)
		return
	}
	for i, p := range aiperfPercentiles {
		if !relClose(got[i], want[p]) {
			t.Errorf("%s %s = %.17g, want %.17g", name, p, got[i], want[p])
		}
	}
}

// TestAIPerfPolynomialGoldens reproduces every golden case to a relative 1e-9.
func TestAIPerfPolynomialGoldens(t *testing.T) {
	g := loadGoldens(t)
	if len(g.Polynomial) != 20 {
		t.Fatalf("%d polynomial cases, want 20", len(g.Polynomial))
	}
	for _, tc := range g.Polynomial {
		t.Run(tc.Name, func(t *testing.T) {
			les, bounds, counts := sortedBuckets(t, tc.Buckets)
			stats := map[int]*aiperfBucketStats{}
			for le, l := range tc.Learned {
				st := &aiperfBucketStats{}
				for _, p := range l.Pairs {
					st.record(p[0], p[1])
				}
				if m, ok := st.mean(); !ok || !relClose(m, *l.Mean) {
					t.Fatalf("learned mean of %s = %v, want %v", le, m, *l.Mean)
				}
				if v, ok := st.variance(); l.Variance != nil && (!ok || !relClose(v, *l.Variance)) {
					t.Fatalf("learned variance of %s = %v, want %v", le, v, *l.Variance)
				}
				stats[slices.Index(les, le)] = st
			}
			got := aiperfEstimate(bounds, counts, stats, tc.Sum, tc.Count, aiperfQs)
			checkPercentiles(t, tc.Name, got, tc.Expected)
		})
	}
}

// TestAIPerfLearning is AIPerf's accumulate_bucket_statistics test
// (S15a): each interval's new observations fall in one bucket, so bucket
// 1.0 learns mean 5 from one interval of 2 observations and bucket 10.0
// mean 5 from two intervals of 3 and 4.
func TestAIPerfLearning(t *testing.T) {
	h := HistogramSeries{
		Bounds:  []float64{1, 10, math.Inf(1)},
		Sum:     []float64{0, 10, 25, 45},
		Count:   []float64{0, 2, 5, 9},
		Buckets: [][]float64{{0, 0, 0}, {2, 2, 2}, {2, 5, 5}, {2, 9, 9}},
	}
	l := aiperfLearn(h)
	if m, _ := l[0].mean(); m != 5 || l[0].observations != 2 || len(l[0].means) != 1 {
		t.Fatalf("bucket 1.0: %+v", l[0])
	}
	if m, _ := l[1].mean(); m != 5 || l[1].observations != 7 || len(l[1].means) != 2 {
		t.Fatalf("bucket 10.0: %+v", l[1])
	}
	// A zero-count interval is skipped.
	h = HistogramSeries{Bounds: []float64{1, math.Inf(1)}, Sum: []float64{0, 0, 10}, Count: []float64{0, 0, 5},
		Buckets: [][]float64{{0, 0}, {0, 0}, {5, 5}}}
	if m, _ := aiperfLearn(h)[0].mean(); m != 2 {
		t.Fatalf("bucket 1.0 mean %v, want 2", m)
	}
}

// TestAIPerfEndToEnd goes from the scrape series through learning to the
// estimate, including its two quirks (the +Inf fallback and the float
// threshold that picks the blended path), and checks the linear estimator
// on the same input.
func TestAIPerfEndToEnd(t *testing.T) {
	e := loadGoldens(t).EndToEnd
	h := HistogramSeries{Sum: e.Scrapes.Sums, Count: e.Scrapes.Counts, Buckets: e.Scrapes.Buckets}
	for _, le := range e.Scrapes.Les {
		h.Bounds = append(h.Bounds, parseLe(t, le))
	}
	l := aiperfLearn(h)
	for le, want := range e.Learned {
		st := l[slices.Index(e.Scrapes.Les, le)]
		if m, _ := st.mean(); !relClose(m, *want.Mean) || !slices.EqualFunc(st.means, want.Means, relClose) {
			t.Errorf("learned %s: mean %v means %v, want %v %v", le, m, st.means, *want.Mean, want.Means)
		}
		if v, ok := st.variance(); want.Variance != nil && (!ok || !relClose(v, *want.Variance)) {
			t.Errorf("learned %s variance %v, want %v", le, v, *want.Variance)
		}
	}
	checkPercentiles(t, "polynomial", AIPerfPolynomial{}.Quantiles(h, aiperfQs), e.Expected)
	checkPercentiles(t, "linear", BucketLinear{}.Quantiles(h, aiperfQs), e.Linear)
}

// TestLinearGoldens: AIPerf's Prometheus-style baseline on its cases.
// Two differ on purpose: with every observation in +Inf AIPerf answers 0,
// a value no observation can have, where llmbench reports no estimate; and
// llmbench takes the total from the +Inf bucket, never an explicit one.
func TestLinearGoldens(t *testing.T) {
	for _, tc := range loadGoldens(t).Linear {
		_, bounds, counts := sortedBuckets(t, tc.Buckets)
		got := LinearQuantiles(bounds, counts, aiperfQs)
		switch tc.Name {
		case "prom_only_inf":
			if !math.IsNaN(got[4]) {
				t.Errorf("%s: p50 %v, want no estimate", tc.Name, got[4])
			}
		case "prom_explicit_total_200":
		default:
			checkPercentiles(t, tc.Name, got, tc.Expected)
		}
	}
}
