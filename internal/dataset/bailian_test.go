package dataset

import (
	"strings"
	"testing"
)

func TestReadBailian(t *testing.T) {
	corpus := NewCorpus(builtin(t))
	type turn struct {
		ms          float64
		tokens, max int
	}
	cases := []struct {
		name, content string
		want          map[string][]turn // by conversation, in order
		order         []string
	}{
		{"the example", "", map[string][]turn{
			"159": {{0, 521, 32}, {1500, 676, 24}},
			"201": {{400, 90, 20}},
		}, []string{"159", "201"}},
		{"linked through a chain, ordered by turn, parent outside the file", `{"chat_id": 3, "parent_chat_id": 2, "timestamp": 9, "input_length": 40, "output_length": 3, "turn": 3}
{"chat_id": 1, "timestamp": 1.25, "input_length": 20, "output_length": 1}
{"chat_id": 2, "parent_chat_id": 1, "timestamp": 5, "input_length": 30, "output_length": 2, "turn": 2}
{"chat_id": 7, "parent_chat_id": 99, "timestamp": 0.5, "input_length": 5, "output_length": 4, "type": "image", "hash_ids": []}`,
			map[string][]turn{
				"1": {{1250, 20, 1}, {5000, 30, 2}, {9000, 40, 3}},
				"7": {{500, 5, 4}},
			}, []string{"1", "7"}},
	}
	for _, c := range cases {
		var convs []Conversation
		var err error
		if c.content == "" {
			convs, err = ReadFile("../../examples/bailian_trace.jsonl", FileOptions{Type: "bailian_trace", Corpus: corpus, BlockSize: BailianBlockSize, Seed: 1})
		} else {
			convs, err = ReadFile(writeFile(t, "b.jsonl", c.content), FileOptions{Type: "bailian_trace", Corpus: corpus, BlockSize: BailianBlockSize, Seed: 1})
		}
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(convs) != len(c.order) {
			t.Fatalf("%s: %d conversations, want %d", c.name, len(convs), len(c.order))
		}
		for i, id := range c.order {
			cv := convs[i]
			if cv.ID != id || !cv.Standalone || len(cv.Turns) != len(c.want[id]) {
				t.Fatalf("%s: conversation %d %s (%d turns, standalone %t), want %s (%d turns, standalone)", c.name, i, cv.ID, len(cv.Turns), cv.Standalone, id, len(c.want[id]))
			}
			for k, w := range c.want[id] {
				tr := cv.Turns[k]
				if got := (turn{tr.TimestampMs, tr.InputTokens, tr.MaxTokens}); got != w || !tr.HasTimestamp || corpus.Count(tr.Text) != w.tokens {
					t.Errorf("%s: %s turn %d %+v, want %+v", c.name, id, k+1, got, w)
				}
			}
		}
	}
}

// TestBailianSharedBlocks: rows naming the same leading hash ids send the
// same text for those 16-token blocks.
func TestBailianSharedBlocks(t *testing.T) {
	convs, err := ReadFile("../../examples/bailian_trace.jsonl", FileOptions{Type: "bailian_trace", Corpus: NewCorpus(builtin(t)), BlockSize: BailianBlockSize, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	first, follow, other := convs[0].Turns[0].Text, convs[0].Turns[1].Text, convs[1].Turns[0].Text
	// 159 and 160 share their first 33 blocks, the last of them cut in 159;
	// 201 shares 3 blocks with both.
	if n := commonPrefix(first, follow); n < len(first)*32/33*9/10 {
		t.Errorf("turns 1 and 2 share %d of %d bytes, want the 32 full blocks", n, len(first))
	}
	if n := commonPrefix(other, first); n == 0 || n >= len(other) {
		t.Errorf("201 shares %d bytes with 159, want its 3 shared blocks and no more", n)
	}
}

func TestBailianErrors(t *testing.T) {
	ok := `{"chat_id": 1, "timestamp": 1, "input_length": 20, "output_length": 2}`
	cases := []struct{ content, want string }{
		{`{"timestamp": 1, "input_length": 20, "output_length": 2}`, ":1: no chat_id"},
		{ok + "\n" + `{"chat_id": 2, "input_length": 20, "output_length": 2}`, ":2: no timestamp"},
		{`{"chat_id": 1, "timestamp": -1, "input_length": 20, "output_length": 2}`, ":1: timestamp -1: want seconds"},
		{`{"chat_id": 1, "timestamp": 1, "output_length": 2}`, ":1: no input_length"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 0, "output_length": 2}`, ":1: input_length 0: it must be 1 to"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 20}`, ":1: no output_length"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 20, "output_length": 0}`, ":1: output_length 0"},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 20, "output_length": 2, "hash_ids": [1, 2, 3]}`, ":1: input_length 20 is too short for 3 hash blocks of 16"},
		{`{"chat_id": "a", "timestamp": 1, "input_length": 20, "output_length": 2}`, `:1: field "chat_id"`},
		{`{"chat_id": 1, "timestamp": 1, "input_length": 20, "output_length": 2, "session": 4}`, `:1: unknown field "session" (bailian_trace takes chat_id`},
		{ok + "\n\n" + ok, ":3: chat_id 1 is already used on line 1"},
		{ok + "\n{", ":2: not valid JSON"},
	}
	corpus := NewCorpus(builtin(t))
	for _, c := range cases {
		_, err := ReadFile(writeFile(t, "b.jsonl", c.content), FileOptions{Type: "bailian_trace", Corpus: corpus, BlockSize: BailianBlockSize})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v, want one line with %q", c.content, err, c.want)
		}
	}
}

// FuzzBailianLine: a line gives a row with every required field in range,
// or an error naming its line; never a panic.
func FuzzBailianLine(f *testing.F) {
	seedLines(f, "bailian_trace.jsonl")
	f.Add([]byte(`{"chat_id": -1, "parent_chat_id": -1, "timestamp": 1e308, "input_length": 2000000, "output_length": 1, "turn": -9}`))
	src := &sourceFile{name: "b.jsonl", format: "bailian_trace"}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := parseBailianLine(src, sourceLine{num: 4, data: data})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "b.jsonl:4: ") {
				t.Fatalf("error %q does not name the line", err)
			}
			return
		}
		if r.ChatID == nil || r.Timestamp == nil || !finiteNonNegative((*r.Timestamp)*1000) || *r.InputLength < 1 || *r.InputLength > maxPromptTokens || *r.OutputLength < 1 {
			t.Fatalf("row %+v from %q", r, data)
		}
	})
}
