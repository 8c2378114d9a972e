package search

import (
	"slices"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/sla"
)

// TestRecipeTable: the eight recipes of b2 with their kinds, outputs and
// budgets.
func TestRecipeTable(t *testing.T) {
	want := []struct {
		name, style, output string
		kind                Kind
		budget              int
		streaming           bool
	}{
		{"max-throughput-ttft-sla", StyleBayesian, "search_history.json", Adaptive, 30, true},
		{"max-throughput-itl-sla", StyleBayesian, "search_history.json", Adaptive, 30, true},
		{"max-concurrency-under-sla", StyleSmoothIsotonic, "search_history.json", Adaptive, 30, false},
		{"max-goodput-under-slo", StyleBayesian, "search_history.json", Adaptive, 30, true},
		{"concurrency-ramp", StyleGrid, "degradation_knee.json", Grid, 8, false},
		{"prefill-ttft-curve", StyleGrid, "prefill_curve.json", Grid, 8, true},
		{"decode-itl-curve", StyleGrid, "decode_itl_surface.json", Grid, 24, true},
		{"pareto-sweep", StyleScenarios, "pareto_sweep.json", Scenarios, 0, true},
	}
	rs := Recipes()
	if len(rs) != len(want) {
		t.Fatalf("%d recipes", len(rs))
	}
	for i, w := range want {
		r := rs[i]
		budget, err := r.Budget("")
		if r.Name != w.name || r.DefaultStyle != w.style || r.Output != w.output || r.Kind != w.kind || budget != w.budget || err != nil || r.Streaming != w.streaming {
			t.Errorf("%d: %+v budget %d %v, want %+v", i, r, budget, err, w)
		}
	}
	r, err := LookupRecipe("max-concurrency-under-sla")
	if err != nil {
		t.Fatal(err)
	}
	for style, want := range map[string]int{StyleSmoothIsotonic: 30, StyleMonotonic: 20, StyleBO: 30, StyleOptuna: 30, StyleGrid: 8, StyleConfident: 20} {
		if got, err := r.Budget(style); got != want || err != nil {
			t.Errorf("budget %s: %d %v, want %d", style, got, err, want)
		}
	}
	if _, err := r.Budget("random"); err == nil {
		t.Error("unknown style accepted")
	}
	if r.OutputFor(StyleGrid) != "sla_breach.json" || r.OutputFor("") != "search_history.json" {
		t.Errorf("outputs %q %q", r.OutputFor(StyleGrid), r.OutputFor(""))
	}
	if _, err := LookupRecipe("max-fun"); err == nil || !strings.Contains(err.Error(), "pareto-sweep") {
		t.Errorf("unknown recipe: %v", err)
	}
	if got := Recipes()[6].Axes; len(got) != 2 || got[1] != (Axis{PathOSL, 64, 1024, 4}) {
		t.Errorf("decode axes %v", got)
	}
}

// TestBuildSLA: shorthand flags become b1's filters, in order, before
// the --search-sla entries.
func TestBuildSLA(t *testing.T) {
	mc, _ := LookupRecipe("max-concurrency-under-sla")
	extra := sla.Filter{Tag: "output_token_throughput", Stat: "avg", Op: sla.GT, Threshold: 500}
	plan, err := BuildSLA(mc, SLAFlags{TTFTms: 200, TPOTms: 20, E2Ems: 5000, ErrorRate: 0.01, Search: []sla.Filter{extra}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range plan.Filters {
		got = append(got, f.String())
	}
	want := []string{
		"time_to_first_token:p95:lt:200",
		"inter_token_latency:p95:lt:20",
		"request_latency:p99:lt:5000",
		"request_error_rate:avg:lt:1",
		"output_token_throughput:avg:gt:500",
	}
	if !slices.Equal(got, want) || !plan.Streaming {
		t.Errorf("filters %v streaming %v, want %v", got, plan.Streaming, want)
	}
	if plan, _ := BuildSLA(mc, SLAFlags{E2Ems: 5000}); plan.Streaming {
		t.Error("an E2E-only search needs no streaming")
	}
	if plan, err := BuildSLA(mc, SLAFlags{Search: []sla.Filter{extra}}); err != nil || len(plan.Filters) != 1 {
		t.Errorf("--search-sla alone: %v %v", plan.Filters, err)
	}

	gp, _ := LookupRecipe("max-goodput-under-slo")
	plan, err = BuildSLA(gp, SLAFlags{TTFTms: 200, ITLms: 20, TPOTms: 20, E2Ems: 5000})
	if err != nil || len(plan.Filters) != 1 || plan.Filters[0].String() != "good_request_fraction:avg:ge:0.95" || len(plan.GoodputSLOs) != 3 || plan.GoodputSLOs[1] != (GoodputSLO{"inter_token_latency", 20}) {
		t.Errorf("goodput: %+v %v", plan, err)
	}

	ttft, _ := LookupRecipe("max-throughput-ttft-sla")
	for _, c := range []struct {
		name  string
		r     Recipe
		flags SLAFlags
		want  string
	}{
		{"itl and tpot differ", mc, SLAFlags{ITLms: 20, TPOTms: 25}, "name the same SLA"},
		{"nothing", mc, SLAFlags{}, "at least one SLA"},
		{"ttft missing", ttft, SLAFlags{E2Ems: 10}, "does not use --e2e-sla-ms"},
		{"ttft required", ttft, SLAFlags{}, "needs --ttft-sla-ms"},
		{"goodput flags", gp, SLAFlags{TTFTms: 1}, "needs --itl-sla-ms and --e2e-sla-ms"},
		{"error rate 1", mc, SLAFlags{ErrorRate: 1}, "between 0 and 1"},
		{"negative", mc, SLAFlags{TTFTms: -3}, "positive"},
		{"attainment elsewhere", mc, SLAFlags{TTFTms: 1, SLOAttainment: 0.9}, "does not use --slo-attainment-fraction"},
	} {
		if _, err := BuildSLA(c.r, c.flags); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	// A plain sweep (no recipe) takes any shorthand flag.
	if plan, err := BuildSLA(Recipe{}, SLAFlags{ITLms: 30}); err != nil || len(plan.Filters) != 1 || !plan.Streaming {
		t.Errorf("sweep: %+v %v", plan, err)
	}
}

// TestLogGrid: hand-computed grids. [1, 1000] in 8: 1000^(i/7) = 1, 2.68,
// 7.20, 19.3, 51.8, 139, 373, 1000; [256, 32768] doubles; [1, 200] in 6:
// 200^(i/5) = 1, 2.89, 8.33, 24.0, 69.3, 200; [64, 1024] in 4: 64·16^(i/3)
// = 64, 161.3, 406.4, 1024; [1, 4] in 8 collapses duplicates.
func TestLogGrid(t *testing.T) {
	for _, c := range []struct {
		lo, hi, steps int
		want          []int
	}{
		{1, 1000, 8, []int{1, 3, 7, 19, 52, 139, 373, 1000}},
		{256, 32768, 8, []int{256, 512, 1024, 2048, 4096, 8192, 16384, 32768}},
		{1, 200, 6, []int{1, 3, 8, 24, 69, 200}},
		{64, 1024, 4, []int{64, 161, 406, 1024}},
		{1, 4, 8, []int{1, 2, 3, 4}},
		{1, 1, 1, []int{1}},
		{5, 3, 4, []int{5}},
		{0, 10, 1, []int{1}},
	} {
		if got := LogGrid(c.lo, c.hi, c.steps); !slices.Equal(got, c.want) {
			t.Errorf("LogGrid(%d, %d, %d) = %v, want %v", c.lo, c.hi, c.steps, got, c.want)
		}
	}
}

// TestParseISLOSLPairs: blanks and empty items are allowed; malformed,
// non-positive and repeated pairs are not.
func TestParseISLOSLPairs(t *testing.T) {
	got, err := ParseISLOSLPairs(" 128/128 , 512 / 256,,2048/512")
	if err != nil || !slices.Equal(got, [][2]int{{128, 128}, {512, 256}, {2048, 512}}) {
		t.Errorf("%v %v", got, err)
	}
	for _, bad := range []string{"", " , ", "128", "128/128/1", "0/5", "a/b", "128/128,128/128", "-1/4"} {
		if _, err := ParseISLOSLPairs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestParetoScenarios: pair-major order, AIPerf's names and directories.
func TestParetoScenarios(t *testing.T) {
	got, err := ParetoScenarios([][2]int{{128, 128}, {512, 256}}, []int{1, 4})
	if err != nil || len(got) != 4 {
		t.Fatalf("%v %v", got, err)
	}
	if got[1] != (Scenario{Name: "shape_128_128_c4", Dir: "isl_128__osl_128__concurrency_4", ISL: 128, OSL: 128, Concurrency: 4}) || got[2].Name != "shape_512_256_c1" {
		t.Errorf("%+v", got)
	}
	if _, err := ParetoScenarios([][2]int{{1, 1}}, []int{4}); err == nil {
		t.Error("a single cell accepted")
	}
}
