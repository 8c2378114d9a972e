package sweep

import (
	"path/filepath"
	"strings"
	"testing"
)

func ints(ns ...int64) []Value {
	out := make([]Value, len(ns))
	for i, n := range ns {
		out[i] = Int(n)
	}
	return out
}

func floats(fs ...float64) []Value {
	out := make([]Value, len(fs))
	for i, f := range fs {
		out[i] = Float(f)
	}
	return out
}

const (
	conc = "phases.profiling.concurrency"
	rate = "phases.profiling.rate"
	isl  = "datasets.main.prompts.isl.mean"
	osl  = "datasets.main.prompts.osl.mean"
)

// TestValueString: Python's str()/repr of ints and floats.
func TestValueString(t *testing.T) {
	for _, tc := range []struct {
		v          Value
		str, jsonV string
	}{
		{Int(10), "10", "10"},
		{Int(-3), "-3", "-3"},
		{Float(5), "5.0", "5.0"},
		{Float(0.5), "0.5", "0.5"},
		{Float(2.5e-05), "2.5e-05", "2.5e-05"},
		{Float(0.0001), "0.0001", "0.0001"},
		{Float(123456.789), "123456.789", "123456.789"},
		{Float(1e15), "1000000000000000.0", "1000000000000000.0"},
		{Float(1e16), "1e+16", "1e+16"},
		{Float(1.5e300), "1.5e+300", "1.5e+300"},
		{Float(0), "0.0", "0.0"},
		{Float(-2), "-2.0", "-2.0"},
	} {
		if got := tc.v.String(); got != tc.str {
			t.Errorf("%+v.String() = %q, want %q", tc.v, got, tc.str)
		}
		if got, _ := tc.v.MarshalJSON(); string(got) != tc.jsonV {
			t.Errorf("%+v.MarshalJSON() = %s, want %s", tc.v, got, tc.jsonV)
		}
	}
}

// TestExpandSpecExamples: the spec's (a1) own examples of labels and
// directory names, and grid order with datasets… sorting before phases….
func TestExpandSpecExamples(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params []Param
		labels []string
		dirs   []string
	}{
		{"concurrency", []Param{{conc, ints(10, 20)}},
			[]string{"phases.profiling.concurrency=10", "phases.profiling.concurrency=20"},
			[]string{"concurrency_10", "concurrency_20"}},
		{"request rate", []Param{{rate, floats(5, 10)}},
			[]string{"phases.profiling.rate=5.0", "phases.profiling.rate=10.0"},
			[]string{"rate_5.0", "rate_10.0"}},
		{"isl", []Param{{isl, ints(128, 512)}},
			[]string{"datasets.main.prompts.isl.mean=128", "datasets.main.prompts.isl.mean=512"},
			[]string{"mean_128", "mean_512"}},
		{"isl x concurrency, given phases first", []Param{{conc, ints(4, 8)}, {isl, ints(128, 512)}},
			[]string{
				"datasets.main.prompts.isl.mean=128, phases.profiling.concurrency=4",
				"datasets.main.prompts.isl.mean=128, phases.profiling.concurrency=8",
				"datasets.main.prompts.isl.mean=512, phases.profiling.concurrency=4",
				"datasets.main.prompts.isl.mean=512, phases.profiling.concurrency=8",
			},
			[]string{"mean_128__concurrency_4", "mean_128__concurrency_8", "mean_512__concurrency_4", "mean_512__concurrency_8"}},
		{"CLI order kept within a list", []Param{{conc, ints(16, 1, 4)}},
			[]string{"phases.profiling.concurrency=16", "phases.profiling.concurrency=1", "phases.profiling.concurrency=4"},
			[]string{"concurrency_16", "concurrency_1", "concurrency_4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, err := Expand(tc.params, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(cells) != len(tc.labels) {
				t.Fatalf("%d cells, want %d", len(cells), len(tc.labels))
			}
			for i, c := range cells {
				if c.Index != i || c.Label != tc.labels[i] || c.Dir != tc.dirs[i] {
					t.Errorf("cell %d: index %d label %q dir %q, want %q %q", i, c.Index, c.Label, c.Dir, tc.labels[i], tc.dirs[i])
				}
			}
		})
	}
}

// TestExpandGridAndZip: a 3×2 grid varies the last sorted path fastest;
// zip pairs the i-th values; unequal zip lengths are an error naming them.
func TestExpandGridAndZip(t *testing.T) {
	params := []Param{{osl, ints(64, 128)}, {conc, ints(1, 2, 3)}, {isl, ints(10, 20)}}
	cells, err := Expand(params, false)
	if err != nil {
		t.Fatal(err)
	}
	// Sorted: isl, osl, concurrency; concurrency fastest.
	want := [][3]float64{}
	for _, i := range []float64{10, 20} {
		for _, o := range []float64{64, 128} {
			for _, c := range []float64{1, 2, 3} {
				want = append(want, [3]float64{i, o, c})
			}
		}
	}
	if len(cells) != 12 {
		t.Fatalf("%d grid cells, want 12", len(cells))
	}
	for k, c := range cells {
		got := [3]float64{c.Assign[0].Value.F, c.Assign[1].Value.F, c.Assign[2].Value.F}
		if got != want[k] || c.Assign[0].Path != isl || c.Assign[1].Path != osl || c.Assign[2].Path != conc {
			t.Errorf("grid cell %d: %+v, want %v", k, c.Assign, want[k])
		}
	}
	if cells[0].Dir != "mean_10__mean_64__concurrency_1" {
		t.Errorf("dir %q, want the leaf segments mean_10__mean_64__concurrency_1", cells[0].Dir)
	}

	z, err := Expand([]Param{{conc, ints(1, 4, 16)}, {isl, ints(128, 256, 512)}}, true)
	if err != nil {
		t.Fatal(err)
	}
	wantDirs := []string{"mean_128__concurrency_1", "mean_256__concurrency_4", "mean_512__concurrency_16"}
	if len(z) != 3 {
		t.Fatalf("%d zip cells, want 3", len(z))
	}
	for i, c := range z {
		if c.Dir != wantDirs[i] || c.Index != i {
			t.Errorf("zip cell %d: %q, want %q", i, c.Dir, wantDirs[i])
		}
	}

	_, err = Expand([]Param{{conc, ints(1, 4, 16)}, {isl, ints(128, 256)}}, true)
	if err == nil || !strings.Contains(err.Error(), isl+": 2") || !strings.Contains(err.Error(), conc+": 3") {
		t.Errorf("unequal zip: %v, want an error naming both lengths", err)
	}
	for _, bad := range [][]Param{nil, {{conc, nil}}, {{conc, ints(1)}, {conc, ints(2)}}, {{"", ints(1)}}} {
		if _, err := Expand(bad, false); err == nil {
			t.Errorf("Expand(%+v) accepted", bad)
		}
	}
}

// TestDirName: sanitising and the fallbacks to the label and the index.
func TestDirName(t *testing.T) {
	for _, tc := range []struct {
		assign []Assignment
		label  string
		index  int
		want   string
	}{
		{[]Assignment{{"a.b/c", Int(1)}}, "", 0, "bc_1"},
		{[]Assignment{{`a.b\c`, Int(1)}}, "", 0, "bc_1"},
		{[]Assignment{{"x.y..z", Int(1)}}, "", 0, "z_1"}, // leaf after the last "."
		{[]Assignment{{`p.<a>:"b"|c?*`, Int(2)}}, "", 0, "abc_2"},
		{[]Assignment{{"p.a...b", Float(0.5)}}, "", 0, "b_0.5"},
		{nil, "my/scen..ario:1", 3, "myscenario1"},
		{nil, "./.", 3, ".."}, // one pass: "/" goes, the dots it split stay
		{nil, "a...b", 0, "a.b"},
		{nil, `/\<>:"|?*`, 7, "variation_7"},
		{nil, "", 2, "variation_2"},
	} {
		if got := DirName(tc.assign, tc.label, tc.index); got != tc.want {
			t.Errorf("DirName(%+v, %q, %d) = %q, want %q", tc.assign, tc.label, tc.index, got, tc.want)
		}
	}
}

// TestScenarios: pareto-sweep's named cells keep their values' order in
// the directory name; the label is the name.
func TestScenarios(t *testing.T) {
	cells := Scenarios([]Scenario{
		{"shape_128_128_c1", []Assignment{{"isl", Int(128)}, {"osl", Int(128)}, {"concurrency", Int(1)}}},
		{"shape_512_256_c4", []Assignment{{"isl", Int(512)}, {"osl", Int(256)}, {"concurrency", Int(4)}}},
		{"aa:1k", nil},
	})
	want := []struct{ label, dir string }{
		{"shape_128_128_c1", "isl_128__osl_128__concurrency_1"},
		{"shape_512_256_c4", "isl_512__osl_256__concurrency_4"},
		{"aa:1k", "aa1k"},
	}
	for i, c := range cells {
		if c.Index != i || c.Label != want[i].label || c.Dir != want[i].dir {
			t.Errorf("scenario %d: %d %q %q, want %q %q", i, c.Index, c.Label, c.Dir, want[i].label, want[i].dir)
		}
	}
	if v := cells[0].Values(); v[0].Path != "concurrency" || v[1].Path != "isl" || v[2].Path != "osl" {
		t.Errorf("Values() not sorted by path: %+v", v)
	}
}

// TestAssignSeeds: base + index; the same seed for all; none without a base.
func TestAssignSeeds(t *testing.T) {
	base := int64(42)
	for _, tc := range []struct {
		name string
		base *int64
		same bool
		want []int64 // -1: nil
	}{
		{"per cell", &base, false, []int64{42, 43, 44}},
		{"same seed", &base, true, []int64{42, 42, 42}},
		{"no base", nil, false, []int64{-1, -1, -1}},
		{"no base, same", nil, true, []int64{-1, -1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cells, _ := Expand([]Param{{conc, ints(1, 2, 3)}}, false)
			AssignSeeds(cells, tc.base, tc.same)
			for i, c := range cells {
				switch {
				case tc.want[i] < 0 && c.Seed != nil:
					t.Errorf("cell %d seed %d, want none", i, *c.Seed)
				case tc.want[i] >= 0 && (c.Seed == nil || *c.Seed != tc.want[i]):
					t.Errorf("cell %d seed %v, want %d", i, c.Seed, tc.want[i])
				}
			}
			if tc.base != nil && !tc.same && cells[0].Seed == cells[1].Seed {
				t.Error("cells share one seed variable")
			}
		})
	}
	if base != 42 {
		t.Errorf("base changed to %d", base)
	}
}

// TestShortNames: the leaf, or the whole path when leaves collide.
func TestShortNames(t *testing.T) {
	got := ShortNames([]string{isl, osl, conc, conc})
	want := map[string]string{isl: isl, osl: osl, conc: "concurrency"}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s -> %q, want %q", k, got[k], v)
		}
	}
}

// TestLayout: the a2 table's sweep rows and aggregate directories.
func TestLayout(t *testing.T) {
	c := Cell{Dir: "concurrency_10"}
	for _, tc := range []struct {
		name                    string
		l                       Layout
		run0, run1, cell, sweep string
	}{
		{"one trial", Layout{Base: "b", Trials: 1},
			"b/concurrency_10", "b/concurrency_10", "b/aggregate/concurrency_10", "b/sweep_aggregate"},
		{"one trial, independent", Layout{Base: "b", Trials: 1, Independent: true},
			"b/concurrency_10", "b/concurrency_10", "b/concurrency_10/aggregate", "b/sweep_aggregate"},
		{"repeated", Layout{Base: "b", Trials: 3},
			"b/profile_runs/trial_0001/concurrency_10", "b/profile_runs/trial_0002/concurrency_10", "b/aggregate/concurrency_10", "b/aggregate/sweep_aggregate"},
		{"independent", Layout{Base: "b", Trials: 3, Independent: true},
			"b/concurrency_10/profile_runs/trial_0001", "b/concurrency_10/profile_runs/trial_0002", "b/concurrency_10/aggregate", "b/sweep_aggregate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, x := range []struct{ got, want string }{
				{tc.l.RunDir(c, 0), tc.run0}, {tc.l.RunDir(c, 1), tc.run1},
				{tc.l.CellAggregateDir(c), tc.cell}, {tc.l.SweepAggregateDir(), tc.sweep},
			} {
				if x.got != filepath.FromSlash(x.want) {
					t.Errorf("got %s, want %s", x.got, x.want)
				}
			}
		})
	}
	if got := TrialLabel(11); got != "trial_0012" {
		t.Errorf("TrialLabel(11) = %s", got)
	}
}
