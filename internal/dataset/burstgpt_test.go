package dataset

import (
	"strings"
	"testing"
)

// traced is what one single-request trace row sends.
type traced struct {
	ms          float64
	tokens, max int
}

func TestReadBurstGPT(t *testing.T) {
	corpus := NewCorpus(builtin(t))
	cases := []struct {
		name, content string
		want          []traced
	}{
		{"the example", "", []traced{{0, 472, 18}, {350, 1012, 75}, {1200, 230, 121}, {1750, 650, 42}}},
		{"columns in any order, others ignored", "Log Type,Response tokens,Model,Timestamp,Request tokens\nchat,5,\"gpt-4, turbo\",2.5,40\nchat, 1 ,x,  10 ,3\n",
			[]traced{{2500, 40, 5}, {10000, 3, 1}}},
	}
	for _, c := range cases {
		var convs []Conversation
		if c.content == "" {
			convs = readExample(t, "burst_gpt_trace", "burst_gpt_trace.csv", 0)
		} else {
			var err error
			if convs, err = ReadFile(writeFile(t, "t.csv", c.content), FileOptions{Type: "burst_gpt_trace", Corpus: corpus, BlockSize: 512, Seed: 1}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		if len(convs) != len(c.want) {
			t.Fatalf("%s: %d requests, want %d", c.name, len(convs), len(c.want))
		}
		for i, w := range c.want {
			cv := convs[i]
			tr := cv.Turns[0]
			got := traced{tr.TimestampMs, tr.InputTokens, tr.MaxTokens}
			if len(cv.Turns) != 1 || got != w || !tr.HasTimestamp || corpus.Count(tr.Text) != w.tokens || cv.Standalone {
				t.Errorf("%s: row %d %+v, want %+v", c.name, i+1, got, w)
			}
		}
		if !Timed(convs) || MultiTurn(convs) {
			t.Errorf("%s: a BurstGPT trace is timed single requests", c.name)
		}
	}
}

func TestBurstGPTErrors(t *testing.T) {
	head := "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
	cases := []struct{ content, want string }{
		{"Timestamp,Model,Request tokens,Total tokens\n1,m,2,3\n", `:1: the header has no column "Response tokens"`},
		{"Time,Request tokens,Response tokens\n", `:1: the header has no column "Timestamp"`},
		{head + "0,m,10,5,15,chat\n1,m,10,5\n", ":3: 4 columns, the header has 6"},
		{head + "-1,m,10,5,15,chat\n", `:2: Timestamp "-1": want seconds`},
		{head + "NaN,m,10,5,15,chat\n", `:2: Timestamp "NaN"`},
		{head + "1,m,0,5,5,chat\n", `:2: Request tokens "0"`},
		{head + "1,m,1.5,5,5,chat\n", `:2: Request tokens "1.5"`},
		{head + "1,m,10,0,10,chat\n", ":2: Response tokens 0 (a request that failed in the trace): leave such rows out, e.g. awk -F, 'NR==1 || $4 > 0'"},
		{head + "1,m,10,x,10,chat\n", `:2: Response tokens "x"`},
		{head + "1,\"m,10,5,15,chat\n", ":2: not a CSV row"},
		{head, "no requests in it"},
	}
	corpus := NewCorpus(builtin(t))
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, "t.csv", c.content), FileOptions{Type: "burst_gpt_trace", Corpus: corpus})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.content, err, c.want)
		}
	}
}

// FuzzBurstGPTRow: a row gives a finite timestamp and lengths in range,
// or an error naming its line; never a panic.
func FuzzBurstGPTRow(f *testing.F) {
	seedLines(f, "burst_gpt_trace.csv")
	f.Add([]byte(`1e308,m,2000000,1,2,"x""y"`))
	src := &sourceFile{name: "t.csv", format: "burst_gpt_trace"}
	cols, err := parseBurstHeader(src, sourceLine{num: 1, data: []byte("Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type")})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseBurstGPTRow(src, sourceLine{num: 9, data: data}, cols)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "t.csv:9: ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		if !finiteNonNegative(r.timestampMs) || r.input < 1 || r.input > maxPromptTokens || r.output < 1 {
			t.Fatalf("row %+v from %q", r, data)
		}
	})
}
