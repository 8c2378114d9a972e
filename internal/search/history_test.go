package search

import (
	"encoding/json"
	"github.com/llmbench/llmbench/internal/goldentest"
	"math"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

// golden compares got with testdata/name (go test -update rewrites it).
func golden(t *testing.T, name string, got []byte) { t.Helper(); goldentest.Check(t, name, got) }

func baseConfig() HistoryConfig {
	seed := int64(42)
	return HistoryConfig{
		Planner:             "bayesian",
		Objectives:          []Objective{{Metric: "output_token_throughput", Stat: "avg", Maximize: true, Threshold: math.NaN()}},
		MaxIterations:       30,
		InitialPoints:       5,
		RandomSeed:          &seed,
		ImprovementPatience: 10,
		PlateauWindow:       8,
		PlateauThreshold:    0.01,
		SearchSpace:         []Dimension{{Path: PathConcurrency, Lo: 1, Hi: 1000, Kind: "int"}},
		SLAFilters:          []sla.Filter{ttft100},
	}
}

func iter(i int, c float64, feasible bool, objectives ...float64) Iteration {
	return Iteration{Index: i, Values: []PathValue{{PathConcurrency, c}}, Objectives: objectives, Feasible: feasible}
}

// TestHistoryMidRun: the exact text of a mid-run write (reason null, no
// recipe), the boundary derived from the iterations, a NaN objective
// threshold and a missing observation written as null.
func TestHistoryMidRun(t *testing.T) {
	second := iter(1, 16, false)
	second.FirstBreach = BreachOf(ttft100, math.NaN())
	h := History{Config: baseConfig(), Iterations: []Iteration{iter(0, 4, true, 5.5), second}}
	want := `{
  "config": {
    "planner": "bayesian",
    "objectives": [
      {
        "metric": "output_token_throughput",
        "stat": "avg",
        "direction": "MAXIMIZE",
        "threshold": null
      }
    ],
    "outcome_constraints": [],
    "max_iterations": 30,
    "n_initial_points": 5,
    "random_seed": 42,
    "improvement_patience": 10,
    "plateau_window": 8,
    "plateau_threshold": 0.01,
    "search_space": [
      {
        "path": "phases.profiling.concurrency",
        "lo": 1,
        "hi": 1000,
        "kind": "int"
      }
    ],
    "sla_filters": [
      {
        "metric_tag": "time_to_first_token",
        "stat": "p95",
        "op": "lt",
        "threshold": 100
      }
    ]
  },
  "iterations": [
    {
      "iteration_idx": 0,
      "variation_values": {
        "phases.profiling.concurrency": 4
      },
      "objective_values": [
        5.5
      ],
      "feasible": true,
      "non_monotonic_warning": false
    },
    {
      "iteration_idx": 1,
      "variation_values": {
        "phases.profiling.concurrency": 16
      },
      "objective_values": null,
      "feasible": false,
      "non_monotonic_warning": false
    }
  ],
  "best_trials": [
    {
      "iteration_idx": 0,
      "objective_values": [
        5.5
      ],
      "variation_values": {
        "phases.profiling.concurrency": 4
      },
      "feasible": true,
      "feasible_count": 1,
      "pareto_rank": 0
    }
  ],
  "boundary_summary": {
    "swept_dim_path": "phases.profiling.concurrency",
    "feasible_max": {
      "value": 4,
      "iteration_idx": 0,
      "objective_value": 5.5
    },
    "infeasible_min": {
      "value": 16,
      "iteration_idx": 1,
      "first_breach": {
        "metric_tag": "time_to_first_token",
        "stat": "p95",
        "op": "lt",
        "threshold": 100,
        "observed": null
      }
    }
  },
  "recipe": null,
  "convergence_reason": null
}`
	if got := string(h.JSON()); got != want {
		t.Errorf("got:\n%s", got)
	}
	h.Final = true
	if m := decode(t, h.JSON()); m["convergence_reason"] != "unknown" {
		t.Errorf("final write without a reason: %v", m["convergence_reason"])
	}
}

// TestHistoryConfidentGolden: a whole confident search of the cliff,
// with the planner's boundary summary and llmbench's extra keys last.
func TestHistoryConfidentGolden(t *testing.T) {
	c, _ := NewConfident(1, 64, 20)
	c.Level = 0.95
	cfg := baseConfig()
	cfg.Planner = "confident"
	cfg.MaxIterations, cfg.InitialPoints, cfg.RandomSeed = 20, 1, nil
	cfg.SearchSpace[0].Hi = 64
	h := History{Config: cfg, Recipe: "max-concurrency-under-sla"}
	for i := 0; ; i++ {
		v, ok := c.Next()
		if !ok {
			break
		}
		o := outcome(cliffCurve, v)
		if v == 12 {
			o.Verdict = Uncertain // not confident at 12: listed, not infeasible
		}
		nm, err := c.Tell(o)
		if err != nil {
			t.Fatal(err)
		}
		it := iter(i, float64(v), o.Verdict == Pass, o.Objective)
		it.NonMonotonic, it.FirstBreach = nm, o.FirstBreach
		h.Iterations = append(h.Iterations, it)
	}
	h.Boundary, h.Reason, h.Final = c.Boundary(), c.Reason(), true
	golden(t, "search_history_confident.json", h.JSON())
}

func decode(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%v in:\n%s", err, b)
	}
	return m
}

// TestBestTrials: feasible first, else every scored iteration with
// feasible_count 0; minimize; NaN objectives unscored; several
// objectives give the non-dominated set.
func TestBestTrials(t *testing.T) {
	idx := func(h History) []float64 {
		m := decode(t, h.JSON())
		bt, ok := m["best_trials"].([]any)
		if !ok {
			return nil
		}
		var out []float64
		for _, e := range bt {
			e := e.(map[string]any)
			out = append(out, e["iteration_idx"].(float64), e["feasible_count"].(float64))
		}
		return out
	}
	cfg := baseConfig()
	h := History{Config: cfg, Iterations: []Iteration{iter(0, 1, true, 5), iter(1, 2, false, 9), iter(2, 4, true, 7), iter(3, 8, true, 7)}}
	if got := idx(h); !equalF(got, []float64{2, 3}) {
		t.Errorf("feasible best %v, want iteration 2 of 3 feasible", got)
	}
	h.Iterations = []Iteration{iter(0, 1, false, 5), iter(1, 2, false, math.NaN()), iter(2, 4, false, 9)}
	if got := idx(h); !equalF(got, []float64{2, 0}) {
		t.Errorf("fallback best %v, want iteration 2, feasible_count 0", got)
	}
	h.Config.Objectives[0].Maximize = false
	if got := idx(h); !equalF(got, []float64{0, 0}) {
		t.Errorf("minimize best %v, want iteration 0", got)
	}
	h.Iterations = []Iteration{iter(0, 1, true, math.NaN()), iter(1, 2, true)}
	if m := decode(t, h.JSON()); m["best_trials"] != nil {
		t.Errorf("unscored: %v, want null", m["best_trials"])
	}
	h.Config.Objectives = []Objective{{Metric: "output_token_throughput", Stat: "avg", Maximize: true}, {Metric: "request_latency", Stat: "p99"}}
	h.Iterations = []Iteration{iter(0, 1, true, 10, 5), iter(1, 2, true, 8, 3), iter(2, 4, true, 7, 6), iter(3, 8, true, 10, 5)}
	if got := idx(h); !equalF(got, []float64{0, 4, 1, 4, 3, 4}) {
		t.Errorf("front %v, want iterations 0, 1, 3", got)
	}
}

func equalF(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestBoundaryNull: no iterations, or two dimensions, give null; a
// planner summary's llmbench keys come after AIPerf's.
func TestBoundaryNull(t *testing.T) {
	h := History{Config: baseConfig()}
	if m := decode(t, h.JSON()); m["boundary_summary"] != nil || m["best_trials"] != nil {
		t.Errorf("empty history: %v %v", m["boundary_summary"], m["best_trials"])
	}
	h.Iterations = []Iteration{iter(0, 1, true, 1)}
	h.Config.SearchSpace = append(h.Config.SearchSpace, Dimension{Path: PathISL, Lo: 1, Hi: 2, Kind: "int"})
	if m := decode(t, h.JSON()); m["boundary_summary"] != nil {
		t.Errorf("two dimensions: %v", m["boundary_summary"])
	}
}
