package scrape

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/llmbench/llmbench/internal/scrape/scrapetest"
)

func TestParse(t *testing.T) {
	f, err := os.Open("testdata/vllm_small.prom")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fams, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Family{}
	var names []string
	for _, fam := range fams {
		got[fam.Name] = fam
		names = append(names, fam.Name+":"+string(fam.Type))
	}
	want := []string{"my_untyped:unknown", "no_type_line:unknown", "vllm:cache_config_info:gauge",
		"vllm:generation_tokens:counter", "vllm:num_requests_running:gauge", "vllm:time_to_first_token_seconds:histogram"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("families %v\nwant %v", names, want)
	}
	gen := got["vllm:generation_tokens"]
	if gen.Help != "Number of generation tokens processed." || gen.Series[0].Value != 1500 {
		t.Fatalf("counter %+v", gen)
	}
	if k := LabelKey(gen.Series[0].Labels); k != `engine="0",model_name="Qwen/Qwen3-0.6B"` {
		t.Fatalf("labels %s", k)
	}
	h := got["vllm:time_to_first_token_seconds"].Series[0]
	wantB := []Bucket{{0.01, 145, "0.01"}, {0.1, 1498, "0.1"}, {math.Inf(1), 1500, "+Inf"}}
	if !reflect.DeepEqual(h.Buckets, wantB) || h.Sum != 32.456 || h.Count != 1500 {
		t.Fatalf("histogram %+v", h)
	}
	if info := got["vllm:cache_config_info"].Series[0]; LabelKey(info.Labels) != `block_size="16",cache_dtype="auto"` || info.Value != 1 {
		t.Fatalf("info %+v", info)
	}
}

func TestParseRejects(t *testing.T) {
	for _, body := range []string{`[{"iter": 1, "gpuMemUsage": 12}]`, "<html><body>hi</body></html>", "metric{a=\"1\" 3\n"} {
		if _, err := Parse(strings.NewReader(body)); err == nil {
			t.Errorf("Parse(%q) accepted non-Prometheus content", body)
		}
	}
	fams, err := Parse(strings.NewReader(""))
	if err != nil || len(fams) != 0 {
		t.Fatalf("empty exposition: %v %v", fams, err)
	}
}

func TestFormatBound(t *testing.T) {
	for v, want := range map[float64]string{0.005: "0.005", 1: "1", 2.5: "2.5", 7680: "7680", math.Inf(1): "+Inf"} {
		if got := FormatBound(v); got != want {
			t.Errorf("FormatBound(%v) = %q, want %q", v, got, want)
		}
	}
}

func FuzzParse(f *testing.F) {
	seed, _ := os.ReadFile("testdata/vllm_small.prom")
	f.Add(string(seed))
	f.Add("a 1\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_count 2\nh_sum 1\n")
	f.Fuzz(func(t *testing.T, s string) {
		fams, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, fam := range fams {
			for _, ser := range fam.Series {
				if fam.Type == Histogram {
					if n := len(ser.Buckets); n == 0 || !math.IsInf(ser.Buckets[n-1].UpperBound, 1) {
						t.Fatalf("histogram %s without a +Inf bucket", fam.Name)
					}
				}
			}
		}
	})
}

// TestParseSkipsUptimes: families named *_uptime or *_uptime_* are left out
// whole, as AIPerf leaves them out; a name merely starting with uptime stays.
func TestParseSkipsUptimes(t *testing.T) {
	text := `# TYPE process_uptime_seconds gauge
process_uptime_seconds 12.5
# TYPE vllm:engine_uptime gauge
vllm:engine_uptime 3
# TYPE dynamo_uptime_total counter
dynamo_uptime_total 9
# TYPE uptime_ratio gauge
uptime_ratio 0.99
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running 2
`
	fams, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fams {
		names = append(names, f.Name)
	}
	if want := []string{"uptime_ratio", "vllm:num_requests_running"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("families %v, want %v", names, want)
	}
}

// TestParseFixtures reads the shared Prometheus edge cases (copied from
// shared/fixtures/prometheus): escaped label values, float64 precision,
// label sets interleaved across buckets, untyped samples.
func TestParseFixtures(t *testing.T) {
	inf := math.Inf(1)
	tests := []struct {
		file string
		want map[string]string // family → its series rendered
	}{
		{"checkpoint-duplication.prom", map[string]string{"one_metric": "gauge{} 1"}},
		{"escaped-label.prom", map[string]string{"request_info": `gauge{message="left,right",path="c:\\tmp",quote="say\"hello"} 1`}},
		{"f32-precision.prom", map[string]string{"requests": "counter{} 100000001"}},
		{"tachometer_float32_precision.prom", map[string]string{"vllm:num_requests_running": "unknown{} 100000001"}},
		{"tachometer_quoted_label.prom", map[string]string{"vllm:num_requests_running": `unknown{model_name="meta-llama/Llama-3.1-8B, revision=\"prod\", path=C:\\models"} 3`}},
		{"histogram-multiple-labelsets.prom", map[string]string{"rpc_duration_seconds": `histogram{route="a"} 1.5/3 [1:2 +Inf:3] | histogram{route="b"} 70/10 [1:7 +Inf:10]`}},
		{"tachometer_histogram_cross_labels.prom", map[string]string{"vllm_request_queue_time_seconds": `histogram{model_name="model-a"} 0.2/3 [0.1:2 +Inf:3] | histogram{model_name="model-b"} 0.9/11 [0.1:7 +Inf:11]`}},
	}
	for _, tc := range tests {
		b, err := os.ReadFile(filepath.Join("testdata", "fixtures", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		fams, err := Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		got := map[string]string{}
		for _, f := range fams {
			var parts []string
			for _, s := range f.Series {
				p := fmt.Sprintf("%s{%s}", f.Type, LabelKey(s.Labels))
				if f.Type == Histogram {
					var bs []string
					for _, bk := range s.Buckets {
						bound := FormatBound(bk.UpperBound)
						if bk.UpperBound == inf {
							bound = "+Inf"
						}
						bs = append(bs, fmt.Sprintf("%s:%g", bound, bk.Count))
					}
					p += fmt.Sprintf(" %g/%g [%s]", s.Sum, s.Count, strings.Join(bs, " "))
				} else {
					p += " " + strconv.FormatFloat(s.Value, 'f', -1, 64)
				}
				parts = append(parts, p)
			}
			got[f.Name] = strings.Join(parts, " | ")
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.file, got, tc.want)
		}
	}
}

// TestLabelKeyUnambiguous: label sets that plain concatenation would merge
// keep distinct keys.
func TestLabelKeyUnambiguous(t *testing.T) {
	sets := [][]Label{
		{{Name: "a", Value: `1",b="2`}},
		{{Name: "a", Value: "1"}, {Name: "b", Value: "2"}},
		{{Name: "a", Value: `x\`}, {Name: "b", Value: `"`}},
		{{Name: "a", Value: `x\",b=\"`}},
		{{Name: "a", Value: "x\ny"}},
		{{Name: "a", Value: `x\ny`}},
		{{Name: "a.b", Value: "1"}},
		{{Name: `a"=`, Value: "1"}},
	}
	seen := map[string]int{}
	for i, ls := range sets {
		k := LabelKey(ls)
		if j, dup := seen[k]; dup {
			t.Errorf("label sets %d and %d share the key %s", j, i, k)
		}
		seen[k] = i
	}
	if k := LabelKey([]Label{{Name: "model", Value: `say "hi"`}}); k != `model="say \"hi\""` {
		t.Errorf("key %s", k)
	}
}

// TestBucketBoundsKeepTheirText: le="1.0" stays "1.0" (AIPerf keeps the
// exposition's text), sorted numerically; a label value that merely
// contains le="…" is not taken for the bound.
func TestBucketBoundsKeepTheirText(t *testing.T) {
	text := `# TYPE h histogram
h_bucket{route="x le=\"9\"",le="10.0"} 3
h_bucket{route="x le=\"9\"",le="2.50"} 2
h_bucket{route="x le=\"9\"",le="1.0"} 1
h_bucket{route="x le=\"9\"",le="+Inf"} 4
h_sum{route="x le=\"9\""} 20
h_count{route="x le=\"9\""} 4
`
	fams, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range fams[0].Series[0].Buckets {
		got = append(got, b.LeText())
	}
	if want := []string{"1.0", "2.50", "10.0", "+Inf"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("bounds %v, want %v", got, want)
	}
}

// BenchmarkParser is one scrape of a 400 KB vLLM-like exposition by an
// endpoint's Parser in its steady state (the labels seen before);
// bench/promparsers sets it beside other parsers.
func BenchmarkParser(b *testing.B) {
	body := scrapetest.BigExposition()
	p := NewParser()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := p.Parse(body); err != nil {
			b.Fatal(err)
		}
	}
}
