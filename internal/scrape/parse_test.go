package scrape

import (
	"math"
	"os"
	"reflect"
	"strings"
	"testing"
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
	wantB := []Bucket{{0.01, 145}, {0.1, 1498}, {math.Inf(1), 1500}}
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
