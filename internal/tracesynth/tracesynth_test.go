package tracesynth

import (
	"reflect"
	"strings"
	"testing"
)

func ip(v int) *int          { return &v }
func fp(v float64) *float64  { return &v }
func ids(v ...int64) []int64 { return v }

// tree is six rows with blocks of 4 tokens whose hash_ids form two trees:
// 1 → 2 → {3, 4}, 1 → 5 → 6, and 7 → {8, 9}; row 5 ([10]) shares nothing.
// Shared blocks (occurring twice or more): 1, 2, 7.
func tree() []Row {
	return []Row{
		{Timestamp: fp(0), InputLength: ip(10), OutputLength: ip(5), HashIDs: ids(1, 2, 3)},
		{Timestamp: fp(100), InputLength: ip(12), OutputLength: ip(7), HashIDs: ids(1, 2, 4)},
		{Timestamp: fp(200), InputLength: ip(9), OutputLength: ip(3), HashIDs: ids(1, 5, 6)},
		{Timestamp: fp(301), InputLength: ip(8), OutputLength: ip(10), HashIDs: ids(7, 8)},
		{Timestamp: fp(450), InputLength: ip(6), OutputLength: ip(1), HashIDs: ids(7, 9)},
		{Timestamp: fp(999), InputLength: ip(4), OutputLength: ip(2), HashIDs: ids(10)},
	}
}

// want is a row as numbers: timestamp, input_length, output_length, ids.
type want struct {
	ts       float64
	isl, osl int
	ids      []int64
}

func flat(rows []Row) []want {
	out := make([]want, len(rows))
	for i, r := range rows {
		out[i] = want{*r.Timestamp, *r.InputLength, *r.OutputLength, r.HashIDs}
	}
	return out
}

func opts(f func(*Options)) Options {
	o := Defaults()
	f(&o)
	return o
}

func TestApplyHandComputed(t *testing.T) {
	// The unique (leaf) tokens of the rows are 2, 4, 5, 4, 2 and 4: the
	// input length minus 4 per leading shared block.
	cases := []struct {
		name string
		o    Options
		keep []int
		want []want
	}{
		{"speedup 2: times halved (truncated), leaves renumbered past the shared ids", opts(func(o *Options) { o.SpeedupRatio = 2 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 10, 5, ids(1, 2, 9)}, {50, 12, 7, ids(1, 2, 10)}, {100, 9, 3, ids(1, 11, 12)},
			{150, 8, 10, ids(7, 13)}, {225, 6, 1, ids(7, 14)}, {499, 4, 2, ids(15)},
		}},
		{"prefix ×2: each shared block h becomes 2h, 2h+1; leaves keep their tokens", opts(func(o *Options) { o.PrefixLenMultiplier = 2 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 18, 5, ids(2, 3, 4, 5, 17)}, {100, 20, 7, ids(2, 3, 4, 5, 18)}, {200, 13, 3, ids(2, 3, 19, 20)},
			{301, 12, 10, ids(14, 15, 21)}, {450, 10, 1, ids(14, 15, 22)}, {999, 4, 2, ids(23)},
		}},
		{"prefix ×0.5: shared runs cut to max(1, ⌊k/2⌋) blocks", opts(func(o *Options) { o.PrefixLenMultiplier = 0.5 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 6, 5, ids(1, 9)}, {100, 8, 7, ids(1, 10)}, {200, 9, 3, ids(1, 11, 12)},
			{301, 8, 10, ids(7, 13)}, {450, 6, 1, ids(7, 14)}, {999, 4, 2, ids(15)},
		}},
		{"prompt ×2: leaves doubled, shared blocks kept", opts(func(o *Options) { o.PromptLenMultiplier = 2 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 12, 5, ids(1, 2, 9)}, {100, 16, 7, ids(1, 2, 10, 11)}, {200, 14, 3, ids(1, 12, 13, 14)},
			{301, 12, 10, ids(7, 15, 16)}, {450, 8, 1, ids(7, 17)}, {999, 8, 2, ids(18, 19)},
		}},
		{"output ×2.5: rounded half to even, at least 1", opts(func(o *Options) { o.OutputLenMultiplier = 2.5 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 10, 12, ids(1, 2, 9)}, {100, 12, 18, ids(1, 2, 10)}, {200, 9, 8, ids(1, 11, 12)},
			{301, 8, 25, ids(7, 13)}, {450, 6, 2, ids(7, 14)}, {999, 4, 5, ids(15)},
		}},
		{"max ISL 9 alone: longer rows dropped, the rest untouched", opts(func(o *Options) { o.MaxISL = 9 }), []int{2, 3, 4, 5}, []want{
			{200, 9, 3, ids(1, 5, 6)}, {301, 8, 10, ids(7, 8)}, {450, 6, 1, ids(7, 9)}, {999, 4, 2, ids(10)},
		}},
		{"max OSL 5 alone: outputs capped", opts(func(o *Options) { o.MaxOSL = 5 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 10, 5, ids(1, 2, 3)}, {100, 12, 5, ids(1, 2, 4)}, {200, 9, 3, ids(1, 5, 6)},
			{301, 8, 5, ids(7, 8)}, {450, 6, 1, ids(7, 9)}, {999, 4, 2, ids(10)},
		}},
		{"prefix ×2 with max ISL 15: grown rows capped, their blocks cut to fit", opts(func(o *Options) { o.PrefixLenMultiplier = 2; o.MaxISL = 15 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 15, 5, ids(2, 3, 4, 5)}, {100, 15, 7, ids(2, 3, 4, 5)}, {200, 13, 3, ids(2, 3, 19, 20)},
			{301, 12, 10, ids(14, 15, 21)}, {450, 10, 1, ids(14, 15, 22)}, {999, 4, 2, ids(23)},
		}},
		{"output ×2.5 then max OSL 12", opts(func(o *Options) { o.OutputLenMultiplier = 2.5; o.MaxOSL = 12 }), []int{0, 1, 2, 3, 4, 5}, []want{
			{0, 10, 12, ids(1, 2, 9)}, {100, 12, 12, ids(1, 2, 10)}, {200, 9, 8, ids(1, 11, 12)},
			{301, 8, 12, ids(7, 13)}, {450, 6, 2, ids(7, 14)}, {999, 4, 5, ids(15)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := tree()
			out, keep, err := Apply(in, c.o, 4, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(keep, c.keep) {
				t.Errorf("keep = %v, want %v", keep, c.keep)
			}
			if got := flat(out); !reflect.DeepEqual(got, c.want) {
				t.Errorf("rows\n got %v\nwant %v", got, c.want)
			}
			if !reflect.DeepEqual(in, tree()) {
				t.Error("Apply changed its input rows")
			}
		})
	}
}

// TestApplyRoots checks --synthesis-prefix-root-multiplier: each row is
// its speedup-only self moved by tree × 16 (16 is one past the last id
// handed out), so rows in different trees share no block, rows in one
// tree keep their sharing, and the same seed gives the same spread.
func TestApplyRoots(t *testing.T) {
	base, _, err := Apply(tree(), opts(func(o *Options) { o.SpeedupRatio = 2 }), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := opts(func(o *Options) { o.SpeedupRatio = 2; o.PrefixRootMultiplier = 3 })
	used := map[int64]bool{}
	for seed := uint64(1); seed <= 20; seed++ {
		a, _, err := Apply(tree(), o, 4, seed)
		if err != nil {
			t.Fatal(err)
		}
		b, _, _ := Apply(tree(), o, 4, seed)
		if !reflect.DeepEqual(a, b) {
			t.Fatal("the same seed spread the rows differently")
		}
		treeOf := make([]int64, len(a))
		for i, r := range a {
			off := r.HashIDs[0] - base[i].HashIDs[0]
			if off%16 != 0 || off < 0 || off > 32 {
				t.Fatalf("seed %d row %d: ids %v are not %v moved by a multiple of 16", seed, i, r.HashIDs, base[i].HashIDs)
			}
			for j, h := range r.HashIDs {
				if h-base[i].HashIDs[j] != off {
					t.Fatalf("seed %d row %d: ids %v moved unevenly from %v", seed, i, r.HashIDs, base[i].HashIDs)
				}
			}
			treeOf[i] = off / 16
			used[treeOf[i]] = true
			if *r.InputLength != *base[i].InputLength || *r.Timestamp != *base[i].Timestamp {
				t.Errorf("seed %d row %d: the spread changed lengths or times", seed, i)
			}
		}
		for i := range a {
			for j := range a {
				if treeOf[i] != treeOf[j] && shares(a[i].HashIDs, a[j].HashIDs) {
					t.Fatalf("seed %d: rows %d and %d share a block across trees", seed, i, j)
				}
			}
		}
	}
	if len(used) != 3 {
		t.Errorf("20 seeds used trees %v, want 0, 1 and 2", used)
	}
}

func shares(a, b []int64) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// TestApplyPartialSharedBlock: rows made only of shared blocks, the last
// one partial (AIPerf refuses them: its prompt length goes negative),
// keep that block partial.
func TestApplyPartialSharedBlock(t *testing.T) {
	rows := []Row{
		{Timestamp: fp(0), InputLength: ip(6), OutputLength: ip(1), HashIDs: ids(1, 2)},
		{Timestamp: fp(10), InputLength: ip(6), OutputLength: ip(1), HashIDs: ids(1, 2)},
	}
	for _, c := range []struct {
		mult float64
		isl  int
		ids  []int64
	}{{1, 6, ids(1, 2)}, {2, 14, ids(2, 3, 4, 5)}, {0.5, 4, ids(1)}} {
		o := opts(func(o *Options) { o.SpeedupRatio = 2; o.PrefixLenMultiplier = c.mult })
		out, _, err := Apply(rows, o, 4, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range out {
			if *r.InputLength != c.isl || !reflect.DeepEqual(r.HashIDs, c.ids) {
				t.Errorf("×%g: got %d %v, want %d %v", c.mult, *r.InputLength, r.HashIDs, c.isl, c.ids)
			}
		}
	}
}

// TestApplySessionOrder: new ids are handed out session by session, in
// order of first appearance, as AIPerf groups rows before synthesis.
func TestApplySessionOrder(t *testing.T) {
	rows := []Row{
		{Session: "a", InputLength: ip(4), HashIDs: ids(1)},
		{InputLength: ip(4), HashIDs: ids(2)},
		{Session: "a", InputLength: ip(4), HashIDs: ids(3)},
	}
	out, _, err := Apply(rows, opts(func(o *Options) { o.SpeedupRatio = 2 }), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	got := [][]int64{out[0].HashIDs, out[1].HashIDs, out[2].HashIDs}
	if want := [][]int64{ids(2), ids(4), ids(3)}; !reflect.DeepEqual(got, want) {
		t.Errorf("ids %v, want %v", got, want)
	}
}

func TestApplyTextRows(t *testing.T) {
	rows := []Row{{Timestamp: fp(9), OutputLength: ip(3)}}
	out, _, err := Apply(rows, opts(func(o *Options) { o.SpeedupRatio = 3; o.OutputLenMultiplier = 2; o.MaxISL = 1 }), 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || out[0].InputLength != nil || *out[0].Timestamp != 3 || *out[0].OutputLength != 6 {
		t.Errorf("text row became %+v", out)
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		flag string
	}{
		{opts(func(o *Options) { o.SpeedupRatio = 0 }), "--synthesis-speedup-ratio"},
		{opts(func(o *Options) { o.PrefixLenMultiplier = -1 }), "--synthesis-prefix-len-multiplier"},
		{opts(func(o *Options) { o.PrefixRootMultiplier = 0 }), "--synthesis-prefix-root-multiplier"},
		{opts(func(o *Options) { o.PromptLenMultiplier = 0 }), "--synthesis-prompt-len-multiplier"},
		{opts(func(o *Options) { o.OutputLenMultiplier = -0.5 }), "--synthesis-output-len-multiplier"},
		{opts(func(o *Options) { o.MaxISL = -1 }), "--synthesis-max-isl"},
		{opts(func(o *Options) { o.MaxOSL = -1 }), "--synthesis-max-osl"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.HasPrefix(err.Error(), c.flag+" ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: error %v, want one line about %s", c.o, err, c.flag)
		}
	}
	if err := Defaults().Validate(); err != nil || Defaults().Active() {
		t.Errorf("defaults: %v, active %v", err, Defaults().Active())
	}
}
