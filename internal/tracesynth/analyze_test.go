package tracesynth

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tree_analysis.json")

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestAnalyzeTree checks analyze-trace's numbers on the six-row tree, worked
// by hand (blocks of 4 tokens).
func TestAnalyzeTree(t *testing.T) {
	a := Analyze(tree(), 4)
	// Hit rates, each row against the blocks of the rows before it:
	// [1,2,3] 0/3, [1,2,4] 2/3, [1,5,6] 1/3, [7,8] 0/2, [7,9] 1/2, [10] 0/1.
	// Mean: (2/3 + 1/3 + 1/2) / 6 = 0.25.
	if !near(a.CacheHitRate, 0.25) {
		t.Errorf("cache_hit_rate %v, want 0.25", a.CacheHitRate)
	}
	// Prefixes: (1) ×3, (1,2) ×2, (7) ×2 and seven seen once: 10 distinct,
	// 7 of 14 occurrences reused. First blocks 1 ×3 and 7 ×2 start groups.
	if a.TotalRequests != 6 || a.UniquePrefixes != 10 || !near(a.PrefixReuseRatio, 0.5) || a.NumPrefixGroups != 2 {
		t.Errorf("requests %d, prefixes %d, reuse %v, groups %d; want 6, 10, 0.5, 2", a.TotalRequests, a.UniquePrefixes, a.PrefixReuseRatio, a.NumPrefixGroups)
	}
	// ISL 4 6 8 9 10 12: mean 49/6; p25 at rank 1.25 = 6.5, median 8.5,
	// p75 at rank 3.75 = 9.75; population variance 245/36.
	s := a.ISLStats
	if a.MinISL != 4 || a.MaxISL != 12 || !near(a.AvgISL, 49.0/6) || !near(s.P25, 6.5) || !near(s.Median, 8.5) || !near(s.P75, 9.75) || !near(s.StdDev, math.Sqrt(245.0/36)) {
		t.Errorf("isl: %d %d %v %+v", a.MinISL, a.MaxISL, a.AvgISL, *s)
	}
	// Context: repeated (position, id) pairs × 4 tokens: 8 8 4 4 4 0;
	// unique prompt = ISL − context: 2 4 5 4 2 4.
	if c := a.ContextLengthStats; !near(c.Mean, 28.0/6) || c.Min != 0 || c.Max != 8 || !near(c.P75, 7) {
		t.Errorf("context %+v", *c)
	}
	if u := a.UniquePromptLengthStats; !near(u.Mean, 21.0/6) || u.Min != 2 || u.Max != 5 {
		t.Errorf("unique prompt %+v", *u)
	}
	if h := a.HitRateStats; h.Max != 2.0/3 || h.Min != 0 || !near(h.Median, 1.0/6) {
		t.Errorf("hit rates %+v", *h)
	}

	got, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	const golden = "testdata/tree_analysis.json"
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("report JSON differs from %s (-update rewrites it):\n%s", golden, got)
	}
}

// A row all of whose blocks recur counts its whole input_length as
// context, partial last block included.
func TestAnalyzeAllShared(t *testing.T) {
	rows := []Row{{InputLength: ip(6), HashIDs: ids(1, 2)}, {InputLength: ip(7), HashIDs: ids(1, 2)}, {InputLength: ip(3)}}
	a := Analyze(rows, 4)
	if a.ContextLengthStats.Max != 7 || a.UniquePromptLengthStats.Max != 3 || a.UniquePromptLengthStats.Min != 0 {
		t.Errorf("context %+v unique %+v", *a.ContextLengthStats, *a.UniquePromptLengthStats)
	}
	// Only rows with hash_ids get a hit rate: 0 then 1.
	if !near(a.CacheHitRate, 0.5) || a.OSLStats.Max != 0 {
		t.Errorf("hit rate %v, osl %+v", a.CacheHitRate, *a.OSLStats)
	}
}

func TestReadRows(t *testing.T) {
	in := "\xef\xbb\xbf{\"timestamp\": 5.5, \"input_length\": 10, \"output_length\": 2, \"hash_ids\": [1, 2], \"session_id\": \"s\", \"delay\": 3, \"text_input\": null}\n\n{\"input_length\": 3}\n"
	rows, err := ReadRows(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || *rows[0].Timestamp != 5.5 || rows[0].Session != "s" || len(rows[0].HashIDs) != 2 || rows[1].OutputLength != nil {
		t.Errorf("rows %+v", rows)
	}
	for in, msg := range map[string]string{
		"{\"input_length\": 1}\n[1]\n":          "t.jsonl:2: a trace line must be a JSON object",
		"{\"input_length\": \"7\"}":             "t.jsonl:1: input_length: want a whole number of tokens",
		"{\"hash_ids\": [1.5]}":                 "t.jsonl:1: hash_ids: want a list of whole numbers",
		"{\"input_length\": -1}":                "t.jsonl:1: input_length -1 is negative",
		"{\"input_length\": 1} {}":              "t.jsonl:1: more than one JSON value",
		"{\"input_length\": 1":                  "t.jsonl:1: not valid JSON",
		"\n\n{\"output_length\": 1, \"x\": }\n": "t.jsonl:3: not valid JSON",
	} {
		_, err := ReadRows(strings.NewReader(in), "t.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), msg) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want %q…", in, err, msg)
		}
	}
}

func TestAppendRowRoundTrip(t *testing.T) {
	r := Row{Session: "a\"b", Timestamp: fp(12.5), InputLength: ip(9), OutputLength: ip(4), HashIDs: ids(3, 4, 5)}
	line := AppendRow(nil, r, fp(7))
	if want := `{"session_id":"a\"b","timestamp":12.5,"delay":7,"input_length":9,"output_length":4,"hash_ids":[3,4,5]}` + "\n"; string(line) != want {
		t.Fatalf("line %s", line)
	}
	back, err := ParseRow(bytes.TrimSpace(line))
	if err != nil || back.Session != r.Session || *back.Timestamp != 12.5 || *back.InputLength != 9 || len(back.HashIDs) != 3 {
		t.Errorf("read back %+v, %v", back, err)
	}
}

func FuzzParseRow(f *testing.F) {
	seeds, _ := os.ReadFile("testdata/tree.jsonl")
	for _, l := range bytes.Split(seeds, []byte("\n")) {
		f.Add(l)
	}
	f.Add([]byte(`{"hash_ids":[9223372036854775807],"input_length":2147483647}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRow(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		// Whatever parses must survive analysis and synthesis without panic,
		// and be written back to a line that parses to the same numbers.
		rows := []Row{r, r}
		Analyze(rows, 16)
		o := Defaults()
		o.SpeedupRatio, o.PrefixLenMultiplier, o.PromptLenMultiplier, o.PrefixRootMultiplier = 2, 2.5, 1.5, 3
		Apply(rows, o, 16, 1)
		back, err := ParseRow(bytes.TrimSpace(AppendRow(nil, r, nil)))
		if err != nil {
			t.Fatalf("written row does not parse: %v", err)
		}
		if len(back.HashIDs) != len(r.HashIDs) || (r.InputLength != nil) != (back.InputLength != nil) {
			t.Fatalf("round trip changed %+v into %+v", r, back)
		}
	})
}
