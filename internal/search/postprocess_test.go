package search

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

// topKeys lists a JSON object's keys in their order.
func topKeys(t *testing.T, b []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// TestDegradationKnee: baseline 100 at concurrency 1, threshold 0.2 so
// the cutoff is 120: 110 and 119.9 stay under, 121 is the knee. Points
// arrive unsorted.
func TestDegradationKnee(t *testing.T) {
	got, err := DegradationKnee(KneeParams{}, []Point{{4, 119.9}, {1, 100}, {8, 121}, {2, 110}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "baseline_concurrency": 1,
  "baseline_p99": 100,
  "knee_concurrency": 8,
  "knee_p99": 121,
  "threshold_pct": 0.2,
  "swept_metric": "request_latency",
  "stat": "p99",
  "swept_param": "phases.profiling.concurrency",
  "all_points": [
    {
      "concurrency": 1,
      "p99": 100
    },
    {
      "concurrency": 2,
      "p99": 110
    },
    {
      "concurrency": 4,
      "p99": 119.9
    },
    {
      "concurrency": 8,
      "p99": 121
    }
  ]
}`
	if string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	// 120 itself is not strictly above the cutoff: no knee.
	got, _ = DegradationKnee(KneeParams{Metric: "time_to_first_token", Stat: "p95"}, []Point{{1, 100}, {2, 120}})
	m := decode(t, got)
	if m["knee_concurrency"] != nil || m["knee_p95"] != nil || m["baseline_p95"] != 100.0 {
		t.Errorf("no knee: %s", got)
	}
	for _, pts := range [][]Point{nil, {{1, 0}, {2, 5}}, {{1, math.NaN()}, {2, 5}}} {
		if _, err := DegradationKnee(KneeParams{}, pts); err == nil {
			t.Errorf("%v accepted", pts)
		}
	}
}

// TestSLABreach: rows of the same concurrency merge (8: one row fails
// TTFT, the other E2E); a missing value breaches with observed null; a
// pass at 32 after failures clears monotonicity_check.
func TestSLABreach(t *testing.T) {
	filters := []sla.Filter{ttft100, e2e5000}
	got, err := SLABreach("", filters, []BreachRow{
		{4, []float64{50, 1000}},
		{1, []float64{20, 900}},
		{8, []float64{150, 1000}},
		{8, []float64{90, 6000}},
		{16, []float64{80, math.NaN()}},
		{32, []float64{60, 100}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "max_passing_concurrency": 32,
  "first_failing_concurrency": 8,
  "first_failing_breach": {
    "metric_tag": "time_to_first_token",
    "stat": "p95",
    "op": "lt",
    "threshold": 100,
    "observed": 150
  },
  "all_points": [
    {
      "concurrency": 1,
      "feasible": true,
      "breaches": []
    },
    {
      "concurrency": 4,
      "feasible": true,
      "breaches": []
    },
    {
      "concurrency": 8,
      "feasible": false,
      "breaches": [
        {
          "metric_tag": "time_to_first_token",
          "stat": "p95",
          "op": "lt",
          "threshold": 100,
          "observed": 150
        },
        {
          "metric_tag": "request_latency",
          "stat": "p99",
          "op": "lt",
          "threshold": 5000,
          "observed": 6000
        }
      ]
    },
    {
      "concurrency": 16,
      "feasible": false,
      "breaches": [
        {
          "metric_tag": "request_latency",
          "stat": "p99",
          "op": "lt",
          "threshold": 5000,
          "observed": null
        }
      ]
    },
    {
      "concurrency": 32,
      "feasible": true,
      "breaches": []
    }
  ],
  "monotonicity_check": false,
  "filters": [
    {
      "metric_tag": "time_to_first_token",
      "stat": "p95",
      "op": "lt",
      "threshold": 100
    },
    {
      "metric_tag": "request_latency",
      "stat": "p99",
      "op": "lt",
      "threshold": 5000
    }
  ],
  "swept_param": "phases.profiling.concurrency"
}`
	if string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	got, _ = SLABreach("", filters, nil)
	if m := decode(t, got); m["max_passing_concurrency"] != nil || m["first_failing_breach"] != nil || m["monotonicity_check"] != true {
		t.Errorf("empty: %s", got)
	}
	if _, err := SLABreach("", filters, []BreachRow{{1, []float64{1}}}); err == nil {
		t.Error("a row short of values accepted")
	}
}

func coefficients(t *testing.T, b []byte) (form string, cs []float64, r2 float64, below bool) {
	t.Helper()
	var v struct {
		FitForm      string    `json:"fit_form"`
		Coefficients []float64 `json:"coefficients"`
		R2           float64   `json:"r_squared"`
		Below        bool      `json:"below_floor"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	return v.FitForm, v.Coefficients, v.R2, v.Below
}

// TestPrefillCurve: TTFT = 0.05·ISL + 10 exactly (r² 1); (x−3)² on 1…5,
// whose line has r² 0, becomes the quadratic [1, −6, 9]; a constant
// TTFT has r² 0 and stays a line below the floor; one finite point of two
// gives the sentinel; fewer than 2 points is an error.
func TestPrefillCurve(t *testing.T) {
	got, err := PrefillCurve(CurveParams{}, []Point{{1024, 61.2}, {256, 22.8}, {512, 35.6}})
	if err != nil {
		t.Fatal(err)
	}
	form, cs, r2, below := coefficients(t, got)
	if form != "linear" || len(cs) != 2 || !near(cs[0], 0.05, 1e-12) || !near(cs[1], 10, 1e-9) || !near(r2, 1, 1e-12) || below {
		t.Errorf("linear: %s", got)
	}
	wantKeys := []string{"fit_form", "coefficients", "r_squared", "below_floor", "r_squared_floor", "raw_points", "swept_metric", "stat", "swept_param"}
	if k := topKeys(t, got); !slices.Equal(k, wantKeys) {
		t.Errorf("keys %v", k)
	}
	if m := decode(t, got); m["raw_points"].([]any)[0].(map[string]any)["isl"] != 256.0 {
		t.Errorf("raw points not sorted: %v", m["raw_points"])
	}

	got, _ = PrefillCurve(CurveParams{}, []Point{{1, 4}, {2, 1}, {3, 0}, {4, 1}, {5, 4}})
	form, cs, r2, below = coefficients(t, got)
	if form != "quadratic" || len(cs) != 3 || !near(cs[0], 1, 1e-9) || !near(cs[1], -6, 1e-9) || !near(cs[2], 9, 1e-9) || !near(r2, 1, 1e-12) || below {
		t.Errorf("quadratic: %s", got)
	}

	got, _ = PrefillCurve(CurveParams{}, []Point{{1, 5}, {2, 5}, {3, 5}})
	if form, _, r2, below = coefficients(t, got); form != "linear" || r2 != 0 || !below {
		t.Errorf("constant: %s", got)
	}

	got, _ = PrefillCurve(CurveParams{}, []Point{{512, 30}, {256, math.NaN()}})
	wantKeys = []string{"fit_form", "coefficients", "r_squared", "below_floor", "r_squared_floor", "error_reason", "raw_points", "swept_metric", "stat", "swept_param"}
	if k := topKeys(t, got); !slices.Equal(k, wantKeys) || !bytes.Contains(got, []byte(`"ttft_ms": null`)) || !bytes.Contains(got, []byte(`"coefficients": []`)) {
		t.Errorf("sentinel: %s", got)
	}
	if _, err := PrefillCurve(CurveParams{}, []Point{{1, 1}}); err == nil {
		t.Error("one point accepted")
	}
}

// TestPolyfitConditioning: a quadratic over ISLs up to 32768 is
// recovered to 1e-9 relative (centring keeps the normal equations sane).
func TestPolyfitConditioning(t *testing.T) {
	var xs, ys []float64
	for _, x := range LogGrid(256, 32768, 8) {
		xs = append(xs, float64(x))
		ys = append(ys, 2e-6*float64(x*x)+0.01*float64(x)+7)
	}
	cs := polyfit(xs, ys, 2)
	for i, want := range []float64{2e-6, 0.01, 7} {
		if math.Abs(cs[i]-want) > 1e-9*math.Abs(want)+1e-9 {
			t.Errorf("coefficient %d: %g, want %g", i, cs[i], want)
		}
	}
	if cs := polyfit([]float64{3, 3}, []float64{1, 2}, 1); !math.IsNaN(cs[0]) {
		t.Errorf("singular fit %v, want NaN", cs)
	}
}

// TestDecodeITLSurface: the grid holds what was measured, null for
// (4, 256) whose ITL was NaN; a negative ITL is left out with its row.
func TestDecodeITLSurface(t *testing.T) {
	got, err := DecodeITLSurface(SurfaceParams{}, []SurfacePoint{
		{4, 64, 15}, {1, 256, 12}, {1, 64, 10}, {4, 256, math.NaN()}, {2, 64, -1},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "swept_metric": "inter_token_latency",
  "stat": "avg",
  "swept_params": [
    "phases.profiling.concurrency",
    "datasets.main.prompts.osl"
  ],
  "raw_points": [
    {
      "concurrency": 1,
      "osl": 64,
      "itl_ms": 10
    },
    {
      "concurrency": 1,
      "osl": 256,
      "itl_ms": 12
    },
    {
      "concurrency": 4,
      "osl": 64,
      "itl_ms": 15
    }
  ],
  "surface": {
    "concurrency_axis": [
      1,
      4
    ],
    "osl_axis": [
      64,
      256
    ],
    "itl_grid": [
      [
        10,
        12
      ],
      [
        15,
        null
      ]
    ]
  },
  "surface_fit_failed": false
}`
	if string(got) != want {
		t.Errorf("got:\n%s", got)
	}
	got, _ = DecodeITLSurface(SurfaceParams{}, []SurfacePoint{{1, 64, 10}, {2, 64, math.Inf(1)}})
	m := decode(t, got)
	if m["surface_fit_failed"] != true || m["error_reason"] == nil || len(m["surface"].(map[string]any)["itl_grid"].([]any)) != 0 {
		t.Errorf("sentinel: %s", got)
	}
	if _, err := DecodeITLSurface(SurfaceParams{}, nil); err == nil {
		t.Error("no points accepted")
	}
}

// TestParetoSweep: C is dominated by B (20 ≤ 25, 150 ≥ 100); E equals B,
// so neither dominates the other; D has no latency and is never optimal.
func TestParetoSweep(t *testing.T) {
	got, err := ParetoSweep(ParetoParams{}, []ParetoCell{
		{128, 128, 1, 10, 50},
		{128, 128, 4, 20, 150},
		{512, 256, 1, 25, 100},
		{512, 256, 4, math.NaN(), 300},
		{128, 128, 16, 20, 150},
	})
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		XMetric string `json:"x_metric"`
		Cells   []struct {
			ISL     int      `json:"isl"`
			X       *float64 `json:"x"`
			Optimal bool     `json:"pareto_optimal"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatal(err)
	}
	var optimal []bool
	for _, c := range v.Cells {
		optimal = append(optimal, c.Optimal)
	}
	if !slices.Equal(optimal, []bool{true, true, false, false, true}) || v.Cells[3].X != nil || v.XMetric != "time_to_first_token" {
		t.Errorf("got:\n%s", got)
	}
	if k := topKeys(t, got); !slices.Equal(k, []string{"x_metric", "x_stat", "y_metric", "y_stat", "cells"}) {
		t.Errorf("keys %v", k)
	}
	if !bytes.Contains(got, []byte("{\n      \"isl\": 128,\n      \"osl\": 128,\n      \"concurrency\": 1,\n      \"x\": 10,\n      \"y\": 50,\n      \"pareto_optimal\": true\n    }")) {
		t.Errorf("cell layout:\n%s", got)
	}
	if _, err := ParetoSweep(ParetoParams{}, nil); err == nil {
		t.Error("no cells accepted")
	}
}
